//! Built-in operators: validate shapes and dtypes, pick a kernel variant,
//! record its launches on a stream. Everything runs on the GPU.

pub mod attention;
pub mod conv;
pub mod elementwise;
pub mod expr;
pub mod fill;
pub mod gemm;
pub mod grid;
pub mod half;
pub mod movement;
pub mod multi;
pub mod norm;
pub mod pool;
pub mod profile_call;
pub mod random;
pub mod reduce;
pub mod replay_scalars;
pub mod rope;
pub mod spec;
pub mod split;
pub mod tensor;

/// Every kernel family on the kernel spec (the offline tests compile each
/// variant and check each uniform's layout).
pub static FAMILIES: &[&spec::Family] = &[
    &attention::FAMILY,
    &attention::FAMILY_MASK_ADD,
    &attention::FAMILY_MASK_BOOL,
    &attention::COMBINE_FAMILY,
    &attention::decode::FAMILY,
    &attention::decode::FAMILY_MASK_ADD,
    &attention::decode::FAMILY_MASK_BOOL,
    &attention::decode::FAMILY_SUBGROUPS,
    &attention::decode::FAMILY_MASK_ADD_SUBGROUPS,
    &attention::decode::FAMILY_MASK_BOOL_SUBGROUPS,
    &attention::coop::FAMILY,
    &attention::coop::FAMILY_MASK_ADD,
    &attention::coop::FAMILY_MASK_BOOL,
    &attention::coop::FAMILY_SG,
    &attention::coop::FAMILY_SG_MASK_ADD,
    &attention::coop::FAMILY_SG_MASK_BOOL,
    &elementwise::bf16::FAMILY,
    &movement::concat::FAMILY,
    &conv::FAMILY,
    &conv::DIRECT_FAMILY,
    &conv::depthwise::FAMILY,
    &conv::coop::FAMILY,
    &conv::im2col::FAMILY,
    &conv::pad_channels::FAMILY,
    &conv::winograd::FAMILY,
    &reduce::cumsum::FAMILY,
    &elementwise::map::FAMILY,
    &elementwise::map::FAMILY_BF16,
    &movement::gather::FAMILY,
    &gemm::coop::FAMILY,
    &gemm::rows::FAMILY,
    &gemm::gemv::FAMILY,
    &gemm::gemv::FAMILY_BF16,
    &gemm::FAMILY,
    &gemm::FAMILY_BF16,
    &gemm::SUM_FAMILY,
    &norm::FAMILY,
    &norm::FAMILY_SUBGROUPS,
    &conv::fold_bn::FAMILY,
    &norm::batch::FAMILY,
    &norm::batch_fast::FAMILY,
    &norm::rows::FAMILY,
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
    &reduce::columns::FAMILY,
    &reduce::rows::FAMILY_F32,
    &reduce::rows::FAMILY_I32,
    &reduce::rows::FAMILY_U32,
    &reduce::rows::FAMILY_F32_SUBGROUPS,
    &reduce::rows::FAMILY_I32_SUBGROUPS,
    &reduce::rows::FAMILY_U32_SUBGROUPS,
    &reduce::rows::FAMILY_BF16,
    &reduce::rows::FAMILY_BF16_SUBGROUPS,
    &reduce::runs::FAMILY,
    &rope::FAMILY,
    &norm::softmax::FAMILY,
    &norm::softmax::FAMILY_SUBGROUPS,
    &norm::softmax_rows::FAMILY,
    &reduce::topk::FAMILY,
];

/// The families of `FAMILIES` whose shaders use subgroup operations: the
/// library asks for them only where the adapter has subgroups, and the
/// offline test validates them with the subgroup capability.
pub static SUBGROUP_FAMILIES: &[&spec::Family] = &[
    &attention::decode::FAMILY_SUBGROUPS,
    &attention::decode::FAMILY_MASK_ADD_SUBGROUPS,
    &attention::decode::FAMILY_MASK_BOOL_SUBGROUPS,
    &attention::coop::FAMILY,
    &attention::coop::FAMILY_MASK_ADD,
    &attention::coop::FAMILY_MASK_BOOL,
    &attention::coop::FAMILY_SG,
    &attention::coop::FAMILY_SG_MASK_ADD,
    &attention::coop::FAMILY_SG_MASK_BOOL,
    &norm::FAMILY_SUBGROUPS,
    &reduce::FAMILY_F32_SUBGROUPS,
    &reduce::FAMILY_I32_SUBGROUPS,
    &reduce::FAMILY_U32_SUBGROUPS,
    &reduce::FAMILY_BF16_SUBGROUPS,
    &reduce::rows::FAMILY_F32_SUBGROUPS,
    &reduce::rows::FAMILY_I32_SUBGROUPS,
    &reduce::rows::FAMILY_U32_SUBGROUPS,
    &reduce::rows::FAMILY_BF16_SUBGROUPS,
    &norm::softmax::FAMILY_SUBGROUPS,
];

/// The families of `FAMILIES` whose shaders use 64-bit integers: the library
/// asks for them only where the device has them, and the offline test
/// validates them with that capability.
pub static INT64_FAMILIES: &[&spec::Family] = &[&random::FAMILY_INT64];
