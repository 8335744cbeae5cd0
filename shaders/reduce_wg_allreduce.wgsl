// Fragment: appended to another shader, not compiled on its own.
// Workgroup-wide f32 sum and max, returned to every invocation: a subgroup
// stage (sg_* from the appended primitives), then a tree in workgroup memory
// over one value per subgroup. Needs `const WG: u32` (a power of two).

var<workgroup> wg_vals: array<f32, WG>;
var<workgroup> wg_lanes: u32;

fn wg_allreduce_f32(v: f32, lid: u32, is_max: bool) -> f32 {
    var x = v;
    if (is_max) {
        x = sg_max_f32(v);
    } else {
        x = sg_sum_f32(v);
    }
    let lanes = sg_size();
    if (lid == 0u) {
        wg_lanes = lanes;
    }
    if (lid % lanes == 0u) {
        wg_vals[lid / lanes] = x;
    }
    let n = WG / workgroupUniformLoad(&wg_lanes);
    var r = wg_vals[0];
    if (n <= 32u) {
        // Few subgroups: every invocation folds their values itself, no more barriers.
        for (var i = 1u; i < n; i++) {
            let b = wg_vals[i];
            r = select(r + b, max(r, b), is_max);
        }
    } else {
        var m = n;
        while (m > 1u) {
            let half = m / 2u;
            if (lid < half) {
                let a = wg_vals[lid];
                let b = wg_vals[lid + half];
                wg_vals[lid] = select(a + b, max(a, b), is_max);
            }
            workgroupBarrier();
            m = half;
        }
        r = wg_vals[0];
    }
    workgroupBarrier();
    return r;
}

fn wg_sum(v: f32, lid: u32) -> f32 {
    return wg_allreduce_f32(v, lid, false);
}
fn wg_max(v: f32, lid: u32) -> f32 {
    return wg_allreduce_f32(v, lid, true);
}

// Two sums in one workgroup step (the barriers are what a reduction costs).
var<workgroup> wg_vals2: array<vec2<f32>, WG>;

fn wg_sum2(v: vec2<f32>, lid: u32) -> vec2<f32> {
    let x = vec2<f32>(sg_sum_f32(v.x), sg_sum_f32(v.y));
    let lanes = sg_size();
    if (lid == 0u) {
        wg_lanes = lanes;
    }
    if (lid % lanes == 0u) {
        wg_vals2[lid / lanes] = x;
    }
    let n = WG / workgroupUniformLoad(&wg_lanes);
    var r = wg_vals2[0];
    if (n <= 32u) {
        for (var i = 1u; i < n; i++) {
            r += wg_vals2[i];
        }
    } else {
        var m = n;
        while (m > 1u) {
            let half = m / 2u;
            if (lid < half) {
                wg_vals2[lid] = wg_vals2[lid] + wg_vals2[lid + half];
            }
            workgroupBarrier();
            m = half;
        }
        r = wg_vals2[0];
    }
    workgroupBarrier();
    return r;
}
