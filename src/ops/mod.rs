//! Built-in operators: validate shapes and dtypes, pick a kernel variant,
//! record its launches on a stream. Everything runs on the GPU.

pub mod attention;
pub mod bf16;
pub mod bf16_route;
pub mod collective;
pub mod concat;
pub mod conv;
pub mod conv_coop;
pub mod conv_fold_bn;
pub mod conv_im2col;
pub mod conv_khr;
pub mod cumsum;
pub mod elementwise;
pub mod elementwise_map;
pub mod expr;
pub mod fill;
pub mod gather;
pub mod gemm_coop;
pub mod gemm_coopmat2;
pub mod gemm_rows;
pub mod gemm_skinny;
pub mod gemm_spirv;
pub mod gemm_staged;
pub mod gemv;
pub mod grid;
pub mod half;
pub mod matmul;
pub mod movement;
pub mod norm;
pub mod norm_batch;
pub mod norm_batch_fast;
pub mod norm_residual;
pub mod norm_rows;
pub mod peer;
pub mod pool;
pub mod profile_call;
pub mod random;
pub mod reduce;
pub mod reduce_axes;
pub mod reduce_columns;
pub mod reduce_kernels;
pub mod reduce_rows;
pub mod reduce_runs;
pub mod rope;
pub mod softmax;
pub mod softmax_rows;
pub mod spec;
pub mod split;
pub mod tensor;
pub mod topk;
pub mod tuned;

/// Every kernel family on the kernel spec (the offline tests compile each
/// variant and check each uniform's layout).
pub static FAMILIES: &[&spec::Family] = &[
    &attention::FAMILY,
    &attention::FAMILY_MASK_ADD,
    &attention::FAMILY_MASK_BOOL,
    &attention::COMBINE_FAMILY,
    &bf16::FAMILY,
    &concat::FAMILY,
    &conv::FAMILY,
    &conv::DIRECT_FAMILY,
    &conv::INIT_FAMILY,
    &conv_coop::FAMILY,
    &conv_im2col::FAMILY,
    &cumsum::FAMILY,
    &elementwise_map::FAMILY,
    &elementwise_map::FAMILY_BF16,
    &gather::FAMILY,
    &gemm_coop::FAMILY,
    &gemm_rows::FAMILY,
    &gemv::FAMILY,
    &gemv::FAMILY_BF16,
    &matmul::FAMILY,
    &matmul::FAMILY_BF16,
    &matmul::SUM_FAMILY,
    &norm::FAMILY,
    &norm::FAMILY_SUBGROUPS,
    &conv_fold_bn::FAMILY,
    &norm_batch::FAMILY,
    &norm_batch_fast::FAMILY,
    &norm_rows::FAMILY,
    &pool::FAMILY,
    &random::FAMILY,
    &random::FAMILY_INT64,
    &reduce::FAMILY_F32,
    &reduce::FAMILY_I32,
    &reduce::FAMILY_U32,
    &reduce::FAMILY_F32_SUBGROUPS,
    &reduce::FAMILY_I32_SUBGROUPS,
    &reduce::FAMILY_U32_SUBGROUPS,
    &reduce::FAMILY_BF16,
    &reduce::FAMILY_BF16_SUBGROUPS,
    &reduce_columns::FAMILY,
    &reduce_rows::FAMILY_F32,
    &reduce_rows::FAMILY_I32,
    &reduce_rows::FAMILY_U32,
    &reduce_rows::FAMILY_F32_SUBGROUPS,
    &reduce_rows::FAMILY_I32_SUBGROUPS,
    &reduce_rows::FAMILY_U32_SUBGROUPS,
    &reduce_rows::FAMILY_BF16,
    &reduce_rows::FAMILY_BF16_SUBGROUPS,
    &reduce_runs::FAMILY,
    &rope::FAMILY,
    &softmax::FAMILY,
    &softmax::FAMILY_SUBGROUPS,
    &softmax_rows::FAMILY,
    &topk::FAMILY,
];

/// The families of `FAMILIES` whose shaders use subgroup operations: the
/// library asks for them only where the adapter has subgroups, and the
/// offline test validates them with the subgroup capability.
pub static SUBGROUP_FAMILIES: &[&spec::Family] = &[
    &norm::FAMILY_SUBGROUPS,
    &reduce::FAMILY_F32_SUBGROUPS,
    &reduce::FAMILY_I32_SUBGROUPS,
    &reduce::FAMILY_U32_SUBGROUPS,
    &reduce::FAMILY_BF16_SUBGROUPS,
    &reduce_rows::FAMILY_F32_SUBGROUPS,
    &reduce_rows::FAMILY_I32_SUBGROUPS,
    &reduce_rows::FAMILY_U32_SUBGROUPS,
    &reduce_rows::FAMILY_BF16_SUBGROUPS,
    &softmax::FAMILY_SUBGROUPS,
];

/// The families of `FAMILIES` whose shaders use 64-bit integers: the library
/// asks for them only where the device has them, and the offline test
/// validates them with that capability.
pub static INT64_FAMILIES: &[&spec::Family] = &[&random::FAMILY_INT64];
