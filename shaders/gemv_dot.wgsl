// Fragment: joined after gemv.wgsl in the gemv families (src/ops/gemv.rs):
// the dot kernels (row_dot*: W's K contiguous).

// ---- dot: W's K contiguous -------------------------------------------------

// Adds each thread's ROWS x MT partial sums (acc[r * MT + i]) over the
// workgroup; the sum of slot j ends at red[j * WG]. Two rounds, three
// barriers (a halving tree takes log2(WG) + 1): RED_LANES threads per slot
// add WG / RED_LANES values each in place, then one thread per slot adds
// those. Each thread reads and writes only its own stride of the slot's
// values, so the rounds need no barrier inside.
const RED_LANES: u32 = 16u;
fn dot_reduce(tid: u32, acc: ptr<function, array<f32, MAX_ACC>>) {
    let slots = ROWS * MT;
    for (var j = 0u; j < slots; j++) {
        red[j * WG + tid] = (*acc)[j];
    }
    workgroupBarrier();
    for (var e = tid; e < slots * RED_LANES; e += WG) {
        let at = (e / RED_LANES) * WG + e % RED_LANES;
        var s = red[at];
        for (var v = RED_LANES; v < WG; v += RED_LANES) {
            s += red[at + v];
        }
        red[at] = s;
    }
    workgroupBarrier();
    for (var j = tid; j < slots; j += WG) {
        var s = red[j * WG];
        for (var u = 1u; u < RED_LANES; u++) {
            s += red[j * WG + u];
        }
        red[j * WG] = s;
    }
    workgroupBarrier();
}

fn dot_products(t: Tile, tid: u32, acc: ptr<function, array<f32, MAX_ACC>>) {
    let n0 = t.n_tile * ROWS;
    for (var k = t.k0 + tid; k < t.k1; k += WG) {
        var wv: array<f32, 4>;
        for (var r = 0u; r < ROWS; r++) {
            let n = min(n0 + r, p.n - 1u);
            wv[r] = w_elem(t.w_base + i32(n) * p.w_sn + i32(k));
        }
        for (var i = 0u; i < MT; i++) {
            let x = a_at(t, t.m0 + i, k);
            for (var r = 0u; r < ROWS; r++) {
                (*acc)[r * MT + i] = fma(x, wv[r], (*acc)[r * MT + i]);
            }
        }
    }
}

// The same over vec4s of K (k0, k1, K and W's column starts multiples of 4).
fn dot_products4(t: Tile, tid: u32, acc: ptr<function, array<f32, MAX_ACC>>) {
    let n0 = t.n_tile * ROWS;
    for (var q = t.k0 / 4u + tid; q < t.k1 / 4u; q += WG) {
        var wv: array<vec4<f32>, 4>;
        for (var r = 0u; r < ROWS; r++) {
            let n = min(n0 + r, p.n - 1u);
            wv[r] = w_quad((t.w_base + i32(n) * p.w_sn) / 4 + i32(q));
        }
        for (var i = 0u; i < MT; i++) {
            let x = a_quad(t, t.m0 + i, q * 4u);
            for (var r = 0u; r < ROWS; r++) {
                (*acc)[r * MT + i] += dot(x, wv[r]);
            }
        }
    }
}

// The same with A's rows read as vec4s too (`*_a4` entries: A's K
// contiguous, its row stride, offset and batch strides multiples of 4), two
// quads of K per pass so that each thread has 2 * ROWS weight loads in
// flight. Reading A by elements cost four loads per quad and row: with 8
// rows, 32 of A's for every 4 of the weight's.
fn dot_products4a(t: Tile, tid: u32, acc: ptr<function, array<f32, MAX_ACC>>) {
    let n0 = t.n_tile * ROWS;
    let q1 = t.k1 / 4u;
    let a_row0 = t.a_base / 4 + i32(t.m0) * (p.a_sm / 4);
    for (var q = t.k0 / 4u + tid; q < q1; q += 2u * WG) {
        let q2 = q + WG;
        let two = q2 < q1;
        var wv: array<vec4<f32>, 4>;
        var wv2: array<vec4<f32>, 4>;
        for (var r = 0u; r < ROWS; r++) {
            let w_row = (t.w_base + i32(min(n0 + r, p.n - 1u)) * p.w_sn) / 4;
            wv[r] = w_quad(w_row + i32(q));
            wv2[r] = select(vec4<f32>(0.0), w_quad(w_row + i32(select(q, q2, two))), two);
        }
        for (var i = 0u; i < MT; i++) {
            if (t.m0 + i < p.m) {
                let a_row = a_row0 + i32(i) * (p.a_sm / 4);
                let x = a_quad4(a_row + i32(q));
                let x2 = select(vec4<f32>(0.0), a_quad4(a_row + i32(select(q, q2, two))), two);
                for (var r = 0u; r < ROWS; r++) {
                    (*acc)[r * MT + i] += dot(x, wv[r]) + dot(x2, wv2[r]);
                }
            }
        }
    }
}

// The thread's result slot after dot_reduce: (m, n, valid).
fn dot_slot(t: Tile, tid: u32) -> vec3<u32> {
    let r = tid / MT;
    let m = t.m0 + tid % MT;
    let n = t.n_tile * ROWS + r;
    return vec3<u32>(m, n, u32(tid < ROWS * MT && m < p.m && n < p.n));
}

// Reduce the partial sums over the workgroup and store each result: the
// epilogue into C, or (a split) the raw sum into its slab. Two functions,
// as a kernel binds every buffer its code names.
fn dot_finish_c(t: Tile, tid: u32, acc: ptr<function, array<f32, MAX_ACC>>) {
    dot_reduce(tid, acc);
    let s = dot_slot(t, tid);
    if (t.live && s.z != 0u) {
        store_c(t, s.x, s.y, red[tid * WG]);
    }
}

fn dot_finish_part(t: Tile, tid: u32, acc: ptr<function, array<f32, MAX_ACC>>) {
    dot_reduce(tid, acc);
    let s = dot_slot(t, tid);
    if (t.live && s.z != 0u) {
        store_part(t, s.x, s.y, red[tid * WG]);
    }
}

@compute @workgroup_size(WG)
fn row_dot(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let t = tile_of(wg);
    var acc: array<f32, MAX_ACC>;
    if (t.live) {
        dot_products(t, tid, &acc);
    }
    dot_finish_c(t, tid, &acc);
}

@compute @workgroup_size(WG)
fn row_dot4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let t = tile_of(wg);
    var acc: array<f32, MAX_ACC>;
    if (t.live) {
        dot_products4(t, tid, &acc);
    }
    dot_finish_c(t, tid, &acc);
}

@compute @workgroup_size(WG)
fn row_dot_split(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let t = tile_of(wg);
    var acc: array<f32, MAX_ACC>;
    if (t.live) {
        dot_products(t, tid, &acc);
    }
    dot_finish_part(t, tid, &acc);
}

@compute @workgroup_size(WG)
fn row_dot4_split(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let t = tile_of(wg);
    var acc: array<f32, MAX_ACC>;
    if (t.live) {
        dot_products4(t, tid, &acc);
    }
    dot_finish_part(t, tid, &acc);
}

@compute @workgroup_size(WG)
fn row_dot4_a4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let t = tile_of(wg);
    var acc: array<f32, MAX_ACC>;
    if (t.live) {
        dot_products4a(t, tid, &acc);
    }
    dot_finish_c(t, tid, &acc);
}

@compute @workgroup_size(WG)
fn row_dot4_a4_split(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let t = tile_of(wg);
    var acc: array<f32, MAX_ACC>;
    if (t.live) {
        dot_products4a(t, tid, &acc);
    }
    dot_finish_part(t, tid, &acc);
}

// ---- dot in 16-byte units: W's K contiguous ----------------------------------
//
// As dot_products4a, reading W in 16-byte units of VW elements (8 f16 or
// bf16: twice the bytes of a vec4 load; the `row_dot_unit_a4*` entries,
// where K, k_chunk, W's column stride, start and batch strides are
// multiples of VW) and A as VW / 4 quads per unit. Two units per pass: each
// thread has 2 * ROWS 16-byte weight loads in flight. A second unit past
// k1 counts as zero in both operands (a weight's inf times a zero of A
// would be NaN). `Unit` is defined in gemv_axpy_unit.wgsl, `unit_of` with
// the operands.
fn dot_products_unit(t: Tile, tid: u32, acc: ptr<function, array<f32, MAX_ACC>>) {
    let n0 = t.n_tile * ROWS;
    let u1 = t.k1 / VW;
    let qs = i32(VW / 4u); // A's quads per unit
    let a_row0 = t.a_base / 4 + i32(t.m0) * (p.a_sm / 4);
    for (var u = t.k0 / VW + tid; u < u1; u += 2u * WG) {
        let two = u + WG < u1;
        let u2 = select(u, u + WG, two);
        var wv: array<Unit, 4>;
        var wv2: array<Unit, 4>;
        for (var r = 0u; r < ROWS; r++) {
            let w_row = (t.w_base + i32(min(n0 + r, p.n - 1u)) * p.w_sn) / i32(VW);
            wv[r] = unit_of(wu[w_row + i32(u)]);
            let second = unit_of(wu[w_row + i32(u2)]);
            wv2[r] = Unit(select(vec4<f32>(0.0), second.lo, two), select(vec4<f32>(0.0), second.hi, two));
        }
        for (var i = 0u; i < MT; i++) {
            if (t.m0 + i < p.m) {
                let a_row = a_row0 + i32(i) * (p.a_sm / 4);
                let x = a_quad4(a_row + qs * i32(u));
                let y = select(vec4<f32>(0.0), a_quad4(a_row + qs * i32(u2)), two);
                var xh = vec4<f32>(0.0);
                var yh = vec4<f32>(0.0);
                if (VW == 8u) {
                    xh = a_quad4(a_row + qs * i32(u) + 1);
                    yh = select(vec4<f32>(0.0), a_quad4(a_row + qs * i32(u2) + 1), two);
                }
                for (var r = 0u; r < ROWS; r++) {
                    (*acc)[r * MT + i] += (dot(x, wv[r].lo) + dot(xh, wv[r].hi)) + (dot(y, wv2[r].lo) + dot(yh, wv2[r].hi));
                }
            }
        }
    }
}

@compute @workgroup_size(WG)
fn row_dot_unit_a4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let t = tile_of(wg);
    var acc: array<f32, MAX_ACC>;
    if (t.live) {
        dot_products_unit(t, tid, &acc);
    }
    dot_finish_c(t, tid, &acc);
}

@compute @workgroup_size(WG)
fn row_dot_unit_a4_split(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let t = tile_of(wg);
    var acc: array<f32, MAX_ACC>;
    if (t.live) {
        dot_products_unit(t, tid, &acc);
    }
    dot_finish_part(t, tid, &acc);
}
