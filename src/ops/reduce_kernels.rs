//! Kernel variants shared by the reduction, softmax and normalisation
//! operators: each template gets the subgroup primitives (or their
//! workgroup-memory-only twins) appended, and launches bind explicit slots.

use super::common::Params;
use super::spec::Family;
use crate::error::Result;
use crate::runtime::device::Device;
use crate::runtime::kernel::Kernel;
use crate::runtime::stream::{Bind, Groups, StreamShared};
use crate::shaders;
use std::sync::Arc;

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

/// Whether to use the subgroup kernels. Setting `WGC_DISABLE_SUBGROUPS` (to
/// anything but "0") forces the workgroup-memory-only ones from the next call
/// on, e.g. to test them on an adapter that has subgroups.
pub fn use_subgroups(dev: &Device) -> bool {
    dev.features.contains(wgpu::Features::SUBGROUP)
        && std::env::var_os("WGC_DISABLE_SUBGROUPS").is_none_or(|v| v == "0")
}

/// The kernel `entry` of template `file` with the subgroup primitives (and,
/// when `allreduce`, the f32 workgroup all-reduce helpers) appended.
/// The subgroup choice is added to `values`, which key the cache.
pub fn kernel(
    dev: &Device,
    file: &'static str,
    entry: &str,
    values: &[(&str, &str)],
    subgroups: bool,
    allreduce: bool,
) -> Result<Arc<Kernel>> {
    let mut keyed = values.to_vec();
    keyed.push(("SUBGROUPS", if subgroups { "1" } else { "0" }));
    dev.kernels.get_variant(dev, file, entry, &keyed, || {
        let mut src = shaders::source(file).to_owned();
        if allreduce {
            src.push_str(shaders::source("reduce_wg_allreduce.wgsl"));
        }
        src.push_str(shaders::source(if subgroups { "reduce_wg_subgroups.wgsl" } else { "reduce_wg_shared.wgsl" }));
        shaders::render(&src, values)
    })
}

/// Launch with `binds` (`Tensor::bind`, `common::whole`) and `params` as the uniform.
pub fn launch(stream: &StreamShared, kernel: &Kernel, binds: &[Bind], params: &Params, groups: [u32; 3]) -> Result<()> {
    stream.launch(kernel, binds, Some(params.bytes()), Groups::Direct(groups))
}

/// A grid of `x` groups by `rows` rows, rows spread over y and z because one
/// grid dimension is limited. Kernels compute `row = wid.z * rows_per_y + wid.y`.
pub fn row_grid(x: u32, rows: usize, max_per_dim: u32) -> ([u32; 3], u32) {
    let per_y = (rows as u64).clamp(1, max_per_dim as u64);
    let z = (rows as u64).div_ceil(per_y).max(1);
    ([x, per_y as u32, z as u32], per_y as u32)
}

/// WGSL expressions of the lowest and highest finite-or-infinite values of an accumulator type.
pub fn extremes(acc: &str) -> (&'static str, &'static str) {
    match acc {
        "i32" => ("i32(-2147483647 - 1)", "2147483647i"),
        "u32" => ("0u", "4294967295u"),
        _ => ("bitcast<f32>(0xff800000u)", "bitcast<f32>(0x7f800000u)"),
    }
}

#[cfg(test)]
mod tests {
    use crate::runtime::kernel::parse_and_validate;
    use crate::shaders;

    /// Every template, rendered for each dtype, with both subgroup choices, passes naga.
    #[test]
    fn templates_validate() {
        for sg in [true, false] {
            let prims = shaders::source(if sg { "reduce_wg_subgroups.wgsl" } else { "reduce_wg_shared.wgsl" });
            let allreduce = shaders::source("reduce_wg_allreduce.wgsl");
            for (t, acc, en) in
                [("f32", "f32", ""), ("f16", "f32", "enable f16;"), ("i32", "i32", ""), ("u32", "u32", "")]
            {
                let (lo, hi) = super::extremes(acc);
                for op in 0..10 {
                    let out = if op == 5 || op == 6 { "i32" } else { t };
                    let src = format!("{}{}", shaders::source("reduce.wgsl"), prims);
                    let vals = [
                        ("ENABLES", en),
                        ("T", t),
                        ("ACC", acc),
                        ("OUT", out),
                        ("OP", &op.to_string()),
                        ("WG", "256"),
                        ("LOWEST", lo),
                        ("HIGHEST", hi),
                        ("FLOAT", if acc == "f32" { "true" } else { "false" }),
                    ];
                    parse_and_validate(&shaders::render(&src, &vals))
                        .unwrap_or_else(|e| panic!("reduce {t} op {op}: {e}"));
                }
                if acc != "f32" {
                    continue;
                }
                for log in ["true", "false"] {
                    let src = format!("{}{}{}", shaders::source("softmax.wgsl"), allreduce, prims);
                    let vals = [("ENABLES", en), ("T", t), ("WG", "256"), ("CACHE", "4"), ("LOG", log)];
                    parse_and_validate(&shaders::render(&src, &vals)).unwrap_or_else(|e| panic!("softmax {t}: {e}"));
                    let src = format!("{}{}{}", shaders::source("norm.wgsl"), allreduce, prims);
                    let vals = [
                        ("ENABLES", en),
                        ("T", t),
                        ("WG", "128"),
                        ("CACHE", "2"),
                        ("RMS", log),
                        ("HAS_W", log),
                        ("HAS_B", "true"),
                    ];
                    parse_and_validate(&shaders::render(&src, &vals)).unwrap_or_else(|e| panic!("norm {t}: {e}"));
                }
                let vals = [("ENABLES", en), ("T", t), ("HAS_W", "true"), ("HAS_B", "false")];
                parse_and_validate(&shaders::render(shaders::source("norm_batch.wgsl"), &vals))
                    .unwrap_or_else(|e| panic!("batch_norm {t}: {e}"));
            }
        }
    }
}
