//! Prefill attention on tensor cores: shaders/attention_coop.wgsl (written
//! by tools/gen_attention_coop_wgsl.py), FlashAttention-2 on WGSL
//! cooperative matrices, for adapters with 16x16x16 f16 fragments, f32
//! accumulation and subgroups of 32 (those of the tensor-core GEMM). Head
//! dims 64, 80, 96, 128, 160, 192 and 256 (past 128 with 64 query rows a
//! workgroup). `WGC_ATTENTION_COOP_SUBGROUP_BARRIERS=1` selects the entries
//! of shaders/attention_coop_sg.wgsl (subgroup barriers where a subgroup
//! exchanges only its own rows) on adapters with subgroup barriers: 0-5%
//! faster on an H100, opt-in because WGSL's subgroup barrier carries only
//! subgroup-memory semantics, which do not order the workgroup memory the
//! rows live in under the Vulkan memory model.

use super::aligned::rows_in_words;
use super::AttentionArgs;
use crate::ops::gemm::coop::available;
use crate::ops::spec::{Family, TypeSlot};
use crate::ops::tensor::DType;
use crate::runtime::device::Device;

/// Query rows per workgroup (the wide entries: 128).
const BM: usize = 64;
const BM_WIDE: usize = 128;
/// The head dims with an entry point; the first `WIDE` have wide entries
/// (past 128, a 128-row workgroup's tiles do not fit 48 KiB).
const DIMS: &[usize] = &[64, 80, 96, 128, 160, 192, 256];
const WIDE: usize = 4;
const TYPES: &[TypeSlot] = &[TypeSlot { alias: "T", dtypes: &[DType::F16] }];
/// For the first `WIDE` head dims: K and V of the next tile fetched into
/// registers while the current one is computed; for every head dim
/// (`_direct`) fetched at the tile's start, the only entries past 128 (the
/// prefetched words cost registers the accumulators need there: D 256,
/// S 512 on an H100 ran 2.35 ms prefetching, 1.82 ms not); then the wide
/// entries.
const ENTRIES: &[&str] = &[
    "attention_coop_d64",
    "attention_coop_d80",
    "attention_coop_d96",
    "attention_coop_d128",
    "attention_coop_d64_direct",
    "attention_coop_d80_direct",
    "attention_coop_d96_direct",
    "attention_coop_d128_direct",
    "attention_coop_d160_direct",
    "attention_coop_d192_direct",
    "attention_coop_d256_direct",
    "attention_coop_d64_wide",
    "attention_coop_d80_wide",
    "attention_coop_d96_wide",
    "attention_coop_d128_wide",
];
/// shaders/attention_coop_sg.wgsl: the prefetching and wide entries (D up
/// to 128) with subgroup barriers where a subgroup exchanges only its own rows.
const SG_ENTRIES: &[&str] = &[
    "attention_coop_d64_sg",
    "attention_coop_d80_sg",
    "attention_coop_d96_sg",
    "attention_coop_d128_sg",
    "attention_coop_d64_wide_sg",
    "attention_coop_d80_wide_sg",
    "attention_coop_d96_wide_sg",
    "attention_coop_d128_wide_sg",
];

macro_rules! coop_family {
    ($file:literal, $mask:literal) => {
        coop_family!($file, $mask, "../../../shaders/attention_coop.wgsl", ENTRIES)
    };
    ($file:literal, $mask:literal, $kernel:literal, $entries:expr) => {
        Family {
            file: $file,
            source: concat!(
                include_str!("../../../shaders/attention_params.wgsl"),
                include_str!($mask),
                include_str!($kernel)
            ),
            entries: $entries,
            types: TYPES,
            overrides: &[],
            uniform: <super::AttentionParams as crate::ops::spec::Uniform>::layout,
        }
    };
}

pub static FAMILY: Family = coop_family!("attention_coop.wgsl", "../../../shaders/attention_mask_none.wgsl");
pub static FAMILY_MASK_ADD: Family =
    coop_family!("attention_coop.wgsl+mask_add", "../../../shaders/attention_mask_add.wgsl");
pub static FAMILY_MASK_BOOL: Family =
    coop_family!("attention_coop.wgsl+mask_bool", "../../../shaders/attention_mask_bool.wgsl");

macro_rules! coop_sg_family {
    ($file:literal, $mask:literal) => {
        coop_family!($file, $mask, "../../../shaders/attention_coop_sg.wgsl", SG_ENTRIES)
    };
}

pub static FAMILY_SG: Family = coop_sg_family!("attention_coop_sg.wgsl", "../../../shaders/attention_mask_none.wgsl");
pub static FAMILY_SG_MASK_ADD: Family =
    coop_sg_family!("attention_coop_sg.wgsl+mask_add", "../../../shaders/attention_mask_add.wgsl");
pub static FAMILY_SG_MASK_BOOL: Family =
    coop_sg_family!("attention_coop_sg.wgsl+mask_bool", "../../../shaders/attention_mask_bool.wgsl");

/// The entry point for this call and its query rows per workgroup, where it takes the tensor-core kernel:
/// f16, more query positions than decode, a head dim with an entry point,
/// K and V rows readable as 16-byte words, on an adapter with the GEMM's
/// cooperative matrices and subgroups.
pub fn entry(dev: &Device, a: &AttentionArgs) -> Option<(&'static str, usize)> {
    let r = a.q.rank();
    let (sq, d) = (a.q.shape[r - 2], a.q.shape[r - 1]);
    let set = &dev.settings().attention;
    let ok = set.coop
        && a.q.dtype == DType::F16
        && sq > super::decode::MAX_SQ
        && available(dev)
        && dev.features.contains(wgpu::Features::SUBGROUP)
        && rows_in_words(a.k)
        && rows_in_words(a.v);
    let i = DIMS.iter().position(|&x| x == d)?;
    if !ok {
        return None;
    }
    let sg = set.coop_subgroup_barriers && dev.features.contains(wgpu::Features::SUBGROUP_BARRIER);
    // The wide entries read 16-row blocks of q as fragments: whole blocks
    // (Sq a multiple of 16) of rows in 16-byte words.
    if i < WIDE && set.coop_wide && sq.is_multiple_of(16) && rows_in_words(a.q) {
        let all = if sg { &SG_ENTRIES[WIDE..] } else { &ENTRIES[WIDE + DIMS.len()..] };
        return Some((all[i], BM_WIDE));
    }
    if i >= WIDE || !set.coop_prefetch {
        return Some((ENTRIES[WIDE + i], BM));
    }
    Some((if sg { SG_ENTRIES[i] } else { ENTRIES[i] }, BM))
}

/// The family of an entry (from `entry`) for a mask dtype.
pub fn family(entry: &str, mask: Option<DType>) -> &'static Family {
    let sg = entry.ends_with("_sg");
    match (mask, sg) {
        (None, false) => &FAMILY,
        (Some(DType::I32 | DType::U32), false) => &FAMILY_MASK_BOOL,
        (Some(_), false) => &FAMILY_MASK_ADD,
        (None, true) => &FAMILY_SG,
        (Some(DType::I32 | DType::U32), true) => &FAMILY_SG_MASK_BOOL,
        (Some(_), true) => &FAMILY_SG_MASK_ADD,
    }
}

#[cfg(test)]
mod tests {
    use crate::runtime::kernel::parse_and_validate;
    use crate::runtime::private_memory::{private_bytes, MAX_PRIVATE_BYTES};

    /// Every entry (not compiled on CI's software driver) fits the private
    /// memory the runtime allows a kernel.
    #[test]
    fn the_tensor_core_attention_fits_private_memory() {
        for f in [
            &super::FAMILY,
            &super::FAMILY_MASK_ADD,
            &super::FAMILY_MASK_BOOL,
            &super::FAMILY_SG,
            &super::FAMILY_SG_MASK_ADD,
            &super::FAMILY_SG_MASK_BOOL,
        ] {
            for v in f.all_variants() {
                let (module, info) = parse_and_validate(&v.source()).unwrap();
                let ep = module.entry_points.iter().position(|e| e.name == v.entry).unwrap();
                let used = private_bytes(&module, &info, ep, 32);
                assert!(used > 0 && used <= MAX_PRIVATE_BYTES, "{} {:?}: {used} bytes", v.entry, v.types);
            }
        }
    }
}
