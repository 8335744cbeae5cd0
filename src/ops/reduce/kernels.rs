//! What the reduction, softmax and normalisation operators share: their
//! workgroup sizes, the choice between a family's two workgroup-reduction
//! strategies (see `spec` on strategy families), and the row grid.

use crate::ops::spec::Family;
use crate::runtime::device::Device;

/// Workgroup size of the axis reductions (reduce.wgsl).
pub(crate) const WG: u32 = 256;

/// Workgroup size for one row of `units` loads (vec4s or scalars): short
/// rows get smaller workgroups so fewer invocations idle.
pub fn row_workgroup(units: usize) -> usize {
    match units {
        1024.. => 256,
        256.. => 128,
        _ => 64,
    }
}

/// Every workgroup size `row_workgroup` and `split::SPLIT_WG` can give, as
/// the `WG` override values of the row-wise families.
pub const ROW_WGS: &[f64] = &[64.0, 128.0, 256.0];

/// The strategy family to use on `dev`: `subgroups` (the same kernels with
/// reduce_wg_subgroups.wgsl appended) where the adapter has subgroups and
/// they are not disabled, else `shared` (reduce_wg_shared.wgsl appended).
pub fn strategy(dev: &Device, shared: &'static Family, subgroups: &'static Family) -> &'static Family {
    if use_subgroups(dev) {
        subgroups
    } else {
        shared
    }
}

/// Whether to use the subgroup kernels. The device's setting
/// `WGC_DISABLE_SUBGROUPS` (anything but "0") forces the
/// workgroup-memory-only ones, e.g. to test them on an adapter that has
/// subgroups.
pub fn use_subgroups(dev: &Device) -> bool {
    dev.features.contains(wgpu::Features::SUBGROUP) && !dev.settings().reduce.disable_subgroups
}

/// A grid of `x` groups by `rows` rows, rows spread over y and z because one
/// grid dimension is limited. Kernels compute `row = wid.z * rows_per_y + wid.y`.
pub fn row_grid(x: u32, rows: usize, max_per_dim: u32) -> ([u32; 3], u32) {
    let per_y = (rows as u64).clamp(1, max_per_dim as u64);
    let z = (rows as u64).div_ceil(per_y).max(1);
    ([x, per_y as u32, z as u32], per_y as u32)
}
