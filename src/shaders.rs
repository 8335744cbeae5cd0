//! The WGSL files that are not kernel-spec families (src/ops/spec): the
//! runtime's plain shaders and the fragments families join to their sources.

/// Every shader file, by name (used by the naga validation test).
pub const ALL: &[(&str, &str)] = &[
    ("fill.wgsl", include_str!("../shaders/fill.wgsl")),
    ("indirect_counts.wgsl", include_str!("../shaders/indirect_counts.wgsl")),
    // Fragments joined to kernel families' sources.
    ("elementwise_bf16.wgsl", include_str!("../shaders/elementwise_bf16.wgsl")),
    ("elementwise_scalar.wgsl", include_str!("../shaders/elementwise_scalar.wgsl")),
    // Helpers of the kernels generated for expressions (src/ops/expr).
    ("expr.wgsl", include_str!("../shaders/expr.wgsl")),
    ("expr_f16.wgsl", include_str!("../shaders/expr_f16.wgsl")),
    ("gemm_tile.wgsl", include_str!("../shaders/gemm_tile.wgsl")),
    ("gemm_epilogue.wgsl", include_str!("../shaders/gemm_epilogue.wgsl")),
    ("epilogue_activation.wgsl", include_str!("../shaders/epilogue_activation.wgsl")),
    ("gemv_dot.wgsl", include_str!("../shaders/gemv_dot.wgsl")),
    ("gemv_axpy.wgsl", include_str!("../shaders/gemv_axpy.wgsl")),
    ("gemv_axpy_staged.wgsl", include_str!("../shaders/gemv_axpy_staged.wgsl")),
    ("gemv_axpy_unit.wgsl", include_str!("../shaders/gemv_axpy_unit.wgsl")),
    ("gemv_axpy_narrow.wgsl", include_str!("../shaders/gemv_axpy_narrow.wgsl")),
    ("gemv_operands.wgsl", include_str!("../shaders/gemv_operands.wgsl")),
    ("gemv_operands_bf16.wgsl", include_str!("../shaders/gemv_operands_bf16.wgsl")),
    ("matmul_operands.wgsl", include_str!("../shaders/matmul_operands.wgsl")),
    ("matmul_operands_bf16.wgsl", include_str!("../shaders/matmul_operands_bf16.wgsl")),
    ("reduce_params.wgsl", include_str!("../shaders/reduce_params.wgsl")),
    ("reduce_expr_params.wgsl", include_str!("../shaders/reduce_expr_params.wgsl")),
    ("reduce_input.wgsl", include_str!("../shaders/reduce_input.wgsl")),
    ("reduce_input_bf16.wgsl", include_str!("../shaders/reduce_input_bf16.wgsl")),
    ("reduce_wg_allreduce.wgsl", include_str!("../shaders/reduce_wg_allreduce.wgsl")),
    ("reduce_wg_shared.wgsl", include_str!("../shaders/reduce_wg_shared.wgsl")),
    ("reduce_state.wgsl", include_str!("../shaders/reduce_state.wgsl")),
    ("reduce_wg_subgroups.wgsl", include_str!("../shaders/reduce_wg_subgroups.wgsl")),
    ("row_teams.wgsl", include_str!("../shaders/row_teams.wgsl")),
    ("random_mulhi_u16.wgsl", include_str!("../shaders/random_mulhi_u16.wgsl")),
    ("random_mulhi_u64.wgsl", include_str!("../shaders/random_mulhi_u64.wgsl")),
    ("attention_params.wgsl", include_str!("../shaders/attention_params.wgsl")),
    ("attention_mask_none.wgsl", include_str!("../shaders/attention_mask_none.wgsl")),
    ("attention_mask_add.wgsl", include_str!("../shaders/attention_mask_add.wgsl")),
    ("attention_mask_bool.wgsl", include_str!("../shaders/attention_mask_bool.wgsl")),
    ("attention_team_shared.wgsl", include_str!("../shaders/attention_team_shared.wgsl")),
    ("attention_team_subgroups.wgsl", include_str!("../shaders/attention_team_subgroups.wgsl")),
];

pub fn source(name: &str) -> &'static str {
    ALL.iter().find(|(n, _)| *n == name).map(|(_, s)| *s).unwrap_or_else(|| panic!("no shader named {name}"))
}
