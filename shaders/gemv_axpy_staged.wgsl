// Fragment: joined after gemv.wgsl in the gemv families (src/ops/gemv.rs):
// the staged axpy kernels (axpy4_staged*: rows of A from workgroup memory).

// ---- staged axpy: W's N contiguous, rows of A from workgroup memory -------
//
// As axpy4 (the same tile: AX quads of columns times AK lanes along K), but
// for several rows of A: each block of XK values of K of the tile's MT rows
// is staged once into workgroup memory as vec4s of 4 rows (xs[2 * kk] rows
// 0..3, xs[2 * kk + 1] rows 4..7), so that a 4-column load of W costs two
// broadcast reads of workgroup memory instead of MT global loads, and the
// MT partial sums are separate variables (arrays indexed in override-bounded
// loops would live in local memory on some drivers). The same workgroup
// memory then holds the AK lanes' partial sums for their reduction.

const XK: u32 = 512u;
var<workgroup> stage: array<vec4<f32>, 2u * XK>;

// Stages rows m0 .. m0 + MT - 1 of A at K = kb .. kb + XK - 1 (zeros past
// k1, past MT and past the last row).
fn stage_rows(t: Tile, tid: u32, kb: u32) {
    let halves = select(1u, 2u, MT > 4u);
    for (var e = tid; e < XK * halves; e += WG) {
        let kk = e % XK;
        let h = e / XK;
        let k = kb + kk;
        var x = vec4<f32>(0.0);
        if (k < t.k1) {
            for (var j = 0u; j < 4u; j++) {
                let i = h * 4u + j;
                if (i < MT) {
                    x[j] = a_at(t, t.m0 + i, k);
                }
            }
        }
        stage[2u * kk + h] = x;
    }
}

// The tile's products: every lane's partial sums, added over the lanes, end
// in stage[i * WG + tid] for row i < MT with tid < AX (quad tid).
fn axpy_staged_products(t: Tile, tid: u32) {
    let n0 = axpy_n0(t, tid);
    let live = n0 < p.n;
    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);
    var acc4 = vec4<f32>(0.0);
    var acc5 = vec4<f32>(0.0);
    var acc6 = vec4<f32>(0.0);
    var acc7 = vec4<f32>(0.0);
    for (var kb = t.k0; kb < t.k1; kb += XK) {
        workgroupBarrier();
        stage_rows(t, tid, kb);
        workgroupBarrier();
        if (live) {
            let kend = min(kb + XK, t.k1);
            for (var k = kb + tid / AX; k < kend; k += AK) {
                let wv = w_quad((t.w_base + i32(k) * p.w_sk + i32(n0)) / 4);
                let kk = k - kb;
                let lo = stage[2u * kk];
                acc0 = fma(vec4<f32>(lo.x), wv, acc0);
                if (MT > 1u) {
                    acc1 = fma(vec4<f32>(lo.y), wv, acc1);
                }
                if (MT > 2u) {
                    acc2 = fma(vec4<f32>(lo.z), wv, acc2);
                    acc3 = fma(vec4<f32>(lo.w), wv, acc3);
                }
                if (MT > 4u) {
                    let hi = stage[2u * kk + 1u];
                    acc4 = fma(vec4<f32>(hi.x), wv, acc4);
                    acc5 = fma(vec4<f32>(hi.y), wv, acc5);
                    acc6 = fma(vec4<f32>(hi.z), wv, acc6);
                    acc7 = fma(vec4<f32>(hi.w), wv, acc7);
                }
            }
        }
    }
    // Every lane is done with the staged rows: the memory takes the sums.
    put8(tid, acc0, acc1, acc2, acc3, acc4, acc5, acc6, acc7);
    workgroupBarrier();
}

// Sum of row i's AK lane sums for quad q.
fn staged_sum(i: u32, q: u32) -> vec4<f32> {
    var s = stage[i * WG + q];
    for (var y = 1u; y < AK; y++) {
        s += stage[i * WG + y * AX + q];
    }
    return s;
}

// Each thread finishes rows tid / AX and tid / AX + 4 of quad tid % AX.
@compute @workgroup_size(WG)
fn axpy4_staged(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let t = tile_of(wg);
    if (!t.live) {
        return;
    }
    axpy_staged_products(t, tid);
    let quad = tid % AX;
    let n0 = axpy_n0(t, quad);
    for (var r = tid / AX; r < MT; r += WG / AX) {
        let s = staged_sum(r, quad);
        for (var q = 0u; q < 4u; q++) {
            if (t.m0 + r < p.m && n0 + q < p.n) {
                store_c(t, t.m0 + r, n0 + q, s[q]);
            }
        }
    }
}

@compute @workgroup_size(WG)
fn axpy4_staged_split(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let t = tile_of(wg);
    if (!t.live) {
        return;
    }
    axpy_staged_products(t, tid);
    let quad = tid % AX;
    let n0 = axpy_n0(t, quad);
    for (var r = tid / AX; r < MT; r += WG / AX) {
        let s = staged_sum(r, quad);
        for (var q = 0u; q < 4u; q++) {
            if (t.m0 + r < p.m && n0 + q < p.n) {
                store_part(t, t.m0 + r, n0 + q, s[q]);
            }
        }
    }
}
