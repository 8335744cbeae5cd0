//! Decode-sized attention (few query rows a KV head against a long cache):
//! flash-decoding in shaders/attention_decode.wgsl. The cache is cut into
//! chunks spread over enough workgroups to fill the GPU; each workgroup reads
//! its chunk of K and V once, in 16-byte words, for all the query heads of a
//! KV group at once, and attention_combine.wgsl merges the chunks.

use super::aligned::rows_in_words;
use super::AttentionArgs;
use crate::ops::reduce::kernels::use_subgroups;
use crate::ops::spec::Family;
use crate::ops::tensor::DType;
use crate::runtime::device::Device;

/// Query rows per workgroup, keys per team step and per workgroup step.
pub(crate) const RB: usize = 4;
const STEP: usize = 32;
/// Workgroups to aim for (a few per SM of an H100), the fewest keys worth a
/// chunk of their own, and the most (bounding a software driver's loops).
pub(crate) const TARGET_GROUPS: usize = 2048;
pub(crate) const MIN_CHUNK: usize = 256;
const MAX_CHUNK: usize = 2048;
/// Head dims up to this take the kernel (one 16-byte word a lane).
const MAX_D: usize = 128;
/// Query positions up to this per call count as decode.
pub(crate) const MAX_SQ: usize = 16;

/// T: q and out (f16, or f32 beside bf16 K and V: KV_BF16).
const TYPES: &[crate::ops::spec::TypeSlot] =
    &[crate::ops::spec::TypeSlot { alias: "T", dtypes: &[DType::F16, DType::F32] }];
const OVERRIDES: &[crate::ops::spec::OverrideSlot] = &[
    crate::ops::spec::OverrideSlot { name: "KV_BF16", values: &[0.0, 1.0] },
    crate::ops::spec::OverrideSlot { name: "DEC_SPREAD", values: &[0.0, 1.0] },
];
const ENTRIES: &[&str] = &["attention_decode", "attention_decode_partial"];

macro_rules! decode_family {
    ($file:literal, $mask:literal, $team:literal) => {
        Family {
            file: $file,
            source: concat!(
                include_str!("../../../shaders/attention_params.wgsl"),
                include_str!($mask),
                include_str!($team),
                include_str!("../../../shaders/attention_decode.wgsl")
            ),
            entries: ENTRIES,
            types: TYPES,
            overrides: OVERRIDES,
            uniform: <super::AttentionParams as crate::ops::spec::Uniform>::layout,
        }
    };
}

pub static FAMILY: Family = decode_family!(
    "attention_decode.wgsl",
    "../../../shaders/attention_mask_none.wgsl",
    "../../../shaders/attention_team_shared.wgsl"
);
pub static FAMILY_MASK_ADD: Family = decode_family!(
    "attention_decode.wgsl+mask_add",
    "../../../shaders/attention_mask_add.wgsl",
    "../../../shaders/attention_team_shared.wgsl"
);
pub static FAMILY_MASK_BOOL: Family = decode_family!(
    "attention_decode.wgsl+mask_bool",
    "../../../shaders/attention_mask_bool.wgsl",
    "../../../shaders/attention_team_shared.wgsl"
);
pub static FAMILY_SUBGROUPS: Family = decode_family!(
    "attention_decode.wgsl+subgroups",
    "../../../shaders/attention_mask_none.wgsl",
    "../../../shaders/attention_team_subgroups.wgsl"
);
pub static FAMILY_MASK_ADD_SUBGROUPS: Family = decode_family!(
    "attention_decode.wgsl+mask_add+subgroups",
    "../../../shaders/attention_mask_add.wgsl",
    "../../../shaders/attention_team_subgroups.wgsl"
);
pub static FAMILY_MASK_BOOL_SUBGROUPS: Family = decode_family!(
    "attention_decode.wgsl+mask_bool+subgroups",
    "../../../shaders/attention_mask_bool.wgsl",
    "../../../shaders/attention_team_subgroups.wgsl"
);

/// True if this call takes the decode kernel: f16 (or bf16 K and V beside
/// an f32 q and out: the bf16 route), few query positions, a head dim of
/// whole 16-byte words up to 128, K and V rows readable as 16-byte words.
pub fn applies(a: &AttentionArgs) -> bool {
    let r = a.q.rank();
    let (sq, d) = (a.q.shape[r - 2], a.q.shape[r - 1]);
    let dtypes = match (a.q.dtype, a.k.dtype) {
        (DType::F16, DType::F16) | (DType::F32, DType::BF16) => true,
        // bf16 q: the caller widens q (and out) and keeps K and V as they are.
        (DType::BF16, DType::BF16) => true,
        _ => false,
    };
    dtypes && sq <= MAX_SQ && d.is_multiple_of(8) && d <= MAX_D && rows_in_words(a.k) && rows_in_words(a.v)
}

/// The family for this device and mask: the subgroup team sum where the
/// adapter's subgroups hold whole teams of 16.
pub fn family(dev: &Device, mask: Option<DType>) -> &'static Family {
    let sg = use_subgroups(dev) && dev.adapter.info.subgroup_min_size >= 16;
    match (mask, sg) {
        (None, false) => &FAMILY,
        (None, true) => &FAMILY_SUBGROUPS,
        (Some(DType::I32 | DType::U32), false) => &FAMILY_MASK_BOOL,
        (Some(DType::I32 | DType::U32), true) => &FAMILY_MASK_BOOL_SUBGROUPS,
        (Some(_), false) => &FAMILY_MASK_ADD,
        (Some(_), true) => &FAMILY_MASK_ADD_SUBGROUPS,
    }
}

/// How keys are cut: (keys per chunk, chunks), enough chunks that row tiles
/// x batch-heads x chunks fill the GPU, each chunk of at least MIN_CHUNK
/// keys (where there are that many) and at most MAX_CHUNK.
pub fn plan_chunks(skv: usize, rows: usize, bh: usize) -> (usize, usize) {
    plan_chunks_with(skv, rows, bh, TARGET_GROUPS, MIN_CHUNK)
}

/// `plan_chunks` aiming at `target` workgroups with chunks of at least
/// `min_chunk` keys (the settings WGC_ATTENTION_DECODE_GROUPS and
/// WGC_ATTENTION_DECODE_MIN_CHUNK, where given).
pub fn plan_chunks_with(skv: usize, rows: usize, bh: usize, target: usize, min_chunk: usize) -> (usize, usize) {
    let groups = rows.div_ceil(RB) * bh;
    let min_chunk = min_chunk.clamp(1, MAX_CHUNK);
    let want = target.div_ceil(groups.max(1)).min(skv / min_chunk).max(skv.div_ceil(MAX_CHUNK)).max(1);
    let keys = skv.div_ceil(want).div_ceil(STEP).max(1) * STEP;
    (keys, skv.div_ceil(keys).max(1))
}

#[cfg(test)]
mod tests {
    use super::plan_chunks;

    #[test]
    fn decode_chunks_cover_the_keys_and_fill_the_gpu() {
        for &(skv, rows, bh) in &[(1, 1, 1), (37, 4, 6), (1024, 4, 8), (32768, 1, 256), (32768, 4, 8), (300, 16, 2)] {
            let (keys, chunks) = plan_chunks(skv, rows, bh);
            assert!(keys % 32 == 0 && keys * chunks >= skv && chunks >= 1 && keys <= 2048);
            assert!(keys * (chunks - 1) < skv.max(1), "an empty chunk for {skv}");
        }
        // One sequence, 8 KV heads, 32k keys: chunks of 256 keys, 128 of them.
        assert_eq!(plan_chunks(32768, 4, 8), (256, 128));
        // 8 sequences of 32 heads (256 groups): 8 chunks of 4096 keys cut to 2048.
        assert_eq!(plan_chunks(32768, 1, 256), (2048, 16));
    }
}
