//! Prefill attention on tensor cores: shaders/attention_coop.wgsl (written
//! by tools/gen_attention_coop_wgsl.py), FlashAttention-2 on WGSL
//! cooperative matrices, for adapters with 16x16x16 f16 fragments, f32
//! accumulation and subgroups of 32 (those of the tensor-core GEMM).

use super::aligned::rows_in_words;
use super::AttentionArgs;
use crate::ops::gemm::coop::available;
use crate::ops::spec::{Family, TypeSlot};
use crate::ops::tensor::DType;
use crate::runtime::device::Device;

/// Query rows per workgroup (the wide entries: 128).
const BM: usize = 64;
const BM_WIDE: usize = 128;
/// The head dims with an entry point.
const DIMS: &[usize] = &[64, 80, 96, 128];
const TYPES: &[TypeSlot] = &[TypeSlot { alias: "T", dtypes: &[DType::F16] }];
/// Per head dim: K and V of the next tile fetched into registers while the
/// current one is computed, then (`_direct`) fetched at the tile's start.
const ENTRIES: &[&str] = &[
    "attention_coop_d64",
    "attention_coop_d80",
    "attention_coop_d96",
    "attention_coop_d128",
    "attention_coop_d64_direct",
    "attention_coop_d80_direct",
    "attention_coop_d96_direct",
    "attention_coop_d128_direct",
    "attention_coop_d64_wide",
    "attention_coop_d80_wide",
    "attention_coop_d96_wide",
    "attention_coop_d128_wide",
];

macro_rules! coop_family {
    ($file:literal, $mask:literal) => {
        Family {
            file: $file,
            source: concat!(
                include_str!("../../../shaders/attention_params.wgsl"),
                include_str!($mask),
                include_str!("../../../shaders/attention_coop.wgsl")
            ),
            entries: ENTRIES,
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
    // The wide entries read 16-row blocks of q as fragments: whole blocks
    // (Sq a multiple of 16) of rows in 16-byte words.
    if set.coop_wide && sq.is_multiple_of(16) && rows_in_words(a.q) {
        return Some((ENTRIES[i + 2 * DIMS.len()], BM_WIDE));
    }
    Some((ENTRIES[i + if set.coop_prefetch { 0 } else { DIMS.len() }], BM))
}

/// The family for a mask dtype.
pub fn family(mask: Option<DType>) -> &'static Family {
    match mask {
        None => &FAMILY,
        Some(DType::I32 | DType::U32) => &FAMILY_MASK_BOOL,
        Some(_) => &FAMILY_MASK_ADD,
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
        for f in [&super::FAMILY, &super::FAMILY_MASK_ADD, &super::FAMILY_MASK_BOOL] {
            for v in f.all_variants() {
                let (module, info) = parse_and_validate(&v.source()).unwrap();
                let ep = module.entry_points.iter().position(|e| e.name == v.entry).unwrap();
                let used = private_bytes(&module, &info, ep, 32);
                assert!(used > 0 && used <= MAX_PRIVATE_BYTES, "{} {:?}: {used} bytes", v.entry, v.types);
            }
        }
    }
}
