// Fragment: joined after gemv.wgsl in the gemv families (src/ops/gemv.rs):
// the axpy kernels (axpy, axpy4: W's N contiguous).

// ---- axpy: W's N contiguous ------------------------------------------------

// Adds the AK partial sums of each column quad; thread x < AX ends with
// the sums of its quad in acc.
fn axpy_reduce(tid: u32, acc: ptr<function, array<vec4<f32>, MAX_MT>>) {
    for (var i = 0u; i < MT; i++) {
        red4[i * WG + tid] = (*acc)[i];
    }
    workgroupBarrier();
    if (tid < AX) {
        for (var i = 0u; i < MT; i++) {
            var s = red4[i * WG + tid];
            for (var y = 1u; y < AK; y++) {
                s += red4[i * WG + y * AX + tid];
            }
            (*acc)[i] = s;
        }
    }
}

// Columns n0 .. n0 + 3 of this thread (n0 = 4 * its quad).
fn axpy_n0(t: Tile, tid: u32) -> u32 {
    return (t.n_tile * AX + tid % AX) * 4u;
}

fn axpy_products(t: Tile, tid: u32, acc: ptr<function, array<vec4<f32>, MAX_MT>>) {
    let n0 = axpy_n0(t, tid);
    if (n0 >= p.n) {
        return;
    }
    for (var k = t.k0 + tid / AX; k < t.k1; k += AK) {
        let row = t.w_base + i32(k) * p.w_sk;
        var wv: vec4<f32>;
        for (var q = 0u; q < 4u; q++) {
            wv[q] = w_elem(row + i32(min(n0 + q, p.n - 1u)));
        }
        for (var i = 0u; i < MT; i++) {
            (*acc)[i] = fma(vec4<f32>(a_at(t, t.m0 + i, k)), wv, (*acc)[i]);
        }
    }
}

// The same reading W as vec4 (N, W's row stride and start multiples of 4).
fn axpy_products4(t: Tile, tid: u32, acc: ptr<function, array<vec4<f32>, MAX_MT>>) {
    let n0 = axpy_n0(t, tid);
    if (n0 >= p.n) {
        return;
    }
    for (var k = t.k0 + tid / AX; k < t.k1; k += AK) {
        let wv = w_quad((t.w_base + i32(k) * p.w_sk + i32(n0)) / 4);
        for (var i = 0u; i < MT; i++) {
            (*acc)[i] = fma(vec4<f32>(a_at(t, t.m0 + i, k)), wv, (*acc)[i]);
        }
    }
}

@compute @workgroup_size(WG)
fn axpy(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let t = tile_of(wg);
    var acc: array<vec4<f32>, MAX_MT>;
    if (t.live) {
        axpy_products(t, tid, &acc);
    }
    axpy_reduce(tid, &acc);
    let n0 = axpy_n0(t, tid);
    if (!t.live || tid >= AX) {
        return;
    }
    for (var i = 0u; i < MT; i++) {
        for (var q = 0u; q < 4u; q++) {
            if (t.m0 + i < p.m && n0 + q < p.n) {
                store_c(t, t.m0 + i, n0 + q, acc[i][q]);
            }
        }
    }
}

@compute @workgroup_size(WG)
fn axpy4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let t = tile_of(wg);
    var acc: array<vec4<f32>, MAX_MT>;
    if (t.live) {
        axpy_products4(t, tid, &acc);
    }
    axpy_reduce(tid, &acc);
    let n0 = axpy_n0(t, tid);
    if (!t.live || tid >= AX) {
        return;
    }
    for (var i = 0u; i < MT; i++) {
        for (var q = 0u; q < 4u; q++) {
            if (t.m0 + i < p.m && n0 + q < p.n) {
                store_c(t, t.m0 + i, n0 + q, acc[i][q]);
            }
        }
    }
}

@compute @workgroup_size(WG)
fn axpy_split(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let t = tile_of(wg);
    var acc: array<vec4<f32>, MAX_MT>;
    if (t.live) {
        axpy_products(t, tid, &acc);
    }
    axpy_reduce(tid, &acc);
    let n0 = axpy_n0(t, tid);
    if (!t.live || tid >= AX) {
        return;
    }
    for (var i = 0u; i < MT; i++) {
        for (var q = 0u; q < 4u; q++) {
            if (t.m0 + i < p.m && n0 + q < p.n) {
                store_part(t, t.m0 + i, n0 + q, acc[i][q]);
            }
        }
    }
}

@compute @workgroup_size(WG)
fn axpy4_split(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let t = tile_of(wg);
    var acc: array<vec4<f32>, MAX_MT>;
    if (t.live) {
        axpy_products4(t, tid, &acc);
    }
    axpy_reduce(tid, &acc);
    let n0 = axpy_n0(t, tid);
    if (!t.live || tid >= AX) {
        return;
    }
    for (var i = 0u; i < MT; i++) {
        for (var q = 0u; q < 4u; q++) {
            if (t.m0 + i < p.m && n0 + q < p.n) {
                store_part(t, t.m0 + i, n0 + q, acc[i][q]);
            }
        }
    }
}
