// Fragment: joined after gemv.wgsl in the gemv families (src/ops/gemv.rs):
// the staged axpy kernels in 16-byte units (axpy_unit_staged*).

// ---- staged axpy in 16-byte units -----------------------------------------
//
// As axpy4_staged, each thread reading VW adjacent columns (4 f32, or 8 f16
// or bf16: one 16-byte load) per value of K, so a workgroup takes AX * VW columns;
// for 16-bit weights the upper 4 columns have their own MT partial sums (hi*). N, W's
// row stride, its start and batch strides are multiples of VW. The lanes'
// sums are added in two rounds (lo, then hi: 16 KB of workgroup memory).

// VW and `unit_of` (a 16-byte unit widened to f32) come with the operands
// fragment: 4 f32, or 8 f16 or bf16.

fn unit_n0(t: Tile, tid: u32) -> u32 {
    return (t.n_tile * AX + tid % AX) * VW;
}

// The unit at row k: columns n0 .. n0 + 3 in .xyzw of lo, the rest in hi.
struct Unit {
    lo: vec4<f32>,
    hi: vec4<f32>,
};

fn unit_at(t: Tile, k: u32, n0: u32) -> Unit {
    return unit_of(wu[(t.w_base + i32(k) * p.w_sk + i32(n0)) / i32(VW)]);
}

// After the lanes' sums of one round are in stage[i * WG + tid] (rows
// i < MT): thread tid adds rows tid / AX and tid / AX + 4 of unit tid % AX
// and stores columns n0 + c0 .. n0 + c0 + 3 of the unit (into C or the slab).
fn unit_finish_c(t: Tile, tid: u32, c0: u32) {
    workgroupBarrier();
    let n0 = unit_n0(t, tid) + c0;
    for (var r = tid / AX; r < MT; r += WG / AX) {
        let s = staged_sum(r, tid % AX);
        for (var q = 0u; q < 4u; q++) {
            if (t.m0 + r < p.m && n0 + q < p.n) {
                store_c(t, t.m0 + r, n0 + q, s[q]);
            }
        }
    }
}

fn unit_finish_part(t: Tile, tid: u32, c0: u32) {
    workgroupBarrier();
    let n0 = unit_n0(t, tid) + c0;
    for (var r = tid / AX; r < MT; r += WG / AX) {
        let s = staged_sum(r, tid % AX);
        for (var q = 0u; q < 4u; q++) {
            if (t.m0 + r < p.m && n0 + q < p.n) {
                store_part(t, t.m0 + r, n0 + q, s[q]);
            }
        }
    }
}

// Lane tid's sums of rows 0..MT-1 into the staging memory, after a barrier
// (every lane is done reading what it held).
fn put8(tid: u32, v0: vec4<f32>, v1: vec4<f32>, v2: vec4<f32>, v3: vec4<f32>, v4: vec4<f32>, v5: vec4<f32>,
        v6: vec4<f32>, v7: vec4<f32>) {
    workgroupBarrier();
    stage[tid] = v0;
    if (MT > 1u) {
        stage[WG + tid] = v1;
    }
    if (MT > 2u) {
        stage[2u * WG + tid] = v2;
        stage[3u * WG + tid] = v3;
    }
    if (MT > 4u) {
        stage[4u * WG + tid] = v4;
        stage[5u * WG + tid] = v5;
        stage[6u * WG + tid] = v6;
        stage[7u * WG + tid] = v7;
    }
}

// One thread's partial sums: rows 0..7 of its columns 0..3 (l*) and 4..7 (h*).
struct UnitSums {
    l0: vec4<f32>,
    l1: vec4<f32>,
    l2: vec4<f32>,
    l3: vec4<f32>,
    l4: vec4<f32>,
    l5: vec4<f32>,
    l6: vec4<f32>,
    l7: vec4<f32>,
    h0: vec4<f32>,
    h1: vec4<f32>,
    h2: vec4<f32>,
    h3: vec4<f32>,
    h4: vec4<f32>,
    h5: vec4<f32>,
    h6: vec4<f32>,
    h7: vec4<f32>,
};

fn unit_products(t: Tile, tid: u32) -> UnitSums {
    if (MT <= 2u) {
        return unit_products_direct(t, tid);
    }
    let n0 = unit_n0(t, tid);
    let live = n0 < p.n;
    var l0 = vec4<f32>(0.0);
    var l1 = vec4<f32>(0.0);
    var l2 = vec4<f32>(0.0);
    var l3 = vec4<f32>(0.0);
    var l4 = vec4<f32>(0.0);
    var l5 = vec4<f32>(0.0);
    var l6 = vec4<f32>(0.0);
    var l7 = vec4<f32>(0.0);
    var h0 = vec4<f32>(0.0);
    var h1 = vec4<f32>(0.0);
    var h2 = vec4<f32>(0.0);
    var h3 = vec4<f32>(0.0);
    var h4 = vec4<f32>(0.0);
    var h5 = vec4<f32>(0.0);
    var h6 = vec4<f32>(0.0);
    var h7 = vec4<f32>(0.0);
    for (var kb = t.k0; kb < t.k1; kb += XK) {
        workgroupBarrier();
        stage_rows(t, tid, kb);
        workgroupBarrier();
        if (live) {
            let kend = min(kb + XK, t.k1);
            for (var k = kb + tid / AX; k < kend; k += AK) {
                let u = unit_at(t, k, n0);
                let kk = k - kb;
                let x = stage[2u * kk];
                l0 = fma(vec4<f32>(x.x), u.lo, l0);
                h0 = fma(vec4<f32>(x.x), u.hi, h0);
                if (MT > 1u) {
                    l1 = fma(vec4<f32>(x.y), u.lo, l1);
                    h1 = fma(vec4<f32>(x.y), u.hi, h1);
                }
                if (MT > 2u) {
                    l2 = fma(vec4<f32>(x.z), u.lo, l2);
                    h2 = fma(vec4<f32>(x.z), u.hi, h2);
                    l3 = fma(vec4<f32>(x.w), u.lo, l3);
                    h3 = fma(vec4<f32>(x.w), u.hi, h3);
                }
                if (MT > 4u) {
                    let y = stage[2u * kk + 1u];
                    l4 = fma(vec4<f32>(y.x), u.lo, l4);
                    h4 = fma(vec4<f32>(y.x), u.hi, h4);
                    l5 = fma(vec4<f32>(y.y), u.lo, l5);
                    h5 = fma(vec4<f32>(y.y), u.hi, h5);
                    l6 = fma(vec4<f32>(y.z), u.lo, l6);
                    h6 = fma(vec4<f32>(y.z), u.hi, h6);
                    l7 = fma(vec4<f32>(y.w), u.lo, l7);
                    h7 = fma(vec4<f32>(y.w), u.hi, h7);
                }
            }
        }
    }
    return UnitSums(l0, l1, l2, l3, l4, l5, l6, l7, h0, h1, h2, h3, h4, h5, h6, h7);
}

// The partial sums of one or two rows over one unit's columns: row 0 in
// l0 (columns 0..3) and h0 (4..7), row 1 in l1 and h1.
struct TwoRowSums {
    l0: vec4<f32>,
    h0: vec4<f32>,
    l1: vec4<f32>,
    h1: vec4<f32>,
};

// s plus the terms of value k of K: rows m0 and (MT > 1) m0 + 1 of A,
// read from memory, times the unit u of W at row k.
fn add_terms(t: Tile, k: u32, u: Unit, s: TwoRowSums) -> TwoRowSums {
    let x0 = a_at(t, t.m0, k);
    var r = s;
    r.l0 = fma(vec4<f32>(x0), u.lo, r.l0);
    r.h0 = fma(vec4<f32>(x0), u.hi, r.h0);
    if (MT > 1u) {
        let x1 = a_at(t, t.m0 + 1u, k);
        r.l1 = fma(vec4<f32>(x1), u.lo, r.l1);
        r.h1 = fma(vec4<f32>(x1), u.hi, r.h1);
    }
    return r;
}

// The same for the unit at n0 of row k.
fn add_unit_terms(t: Tile, k: u32, n0: u32, s: TwoRowSums) -> TwoRowSums {
    return add_terms(t, k, unit_at(t, k, n0), s);
}

// unit_products for one or two rows (MT <= 2): A's rows read from memory
// (the AX lanes of a row read the same element) instead of staged behind
// two barriers a block of XK, which cost one or two rows more than the
// loads they save.
fn unit_products_direct(t: Tile, tid: u32) -> UnitSums {
    let n0 = unit_n0(t, tid);
    let z = vec4<f32>(0.0);
    var s = TwoRowSums(z, z, z, z);
    if (n0 < p.n) {
        for (var k = t.k0 + tid / AX; k < t.k1; k += AK) {
            s = add_unit_terms(t, k, n0, s);
        }
    }
    return UnitSums(s.l0, s.l1, z, z, z, z, z, z, s.h0, s.h1, z, z, z, z, z, z);
}

// put8's first barrier: every lane is done with the staged rows before the
// memory takes the sums (and, in the second round, the first round's reads).
@compute @workgroup_size(WG)
fn axpy_unit_staged(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let t = tile_of(wg);
    if (!t.live) {
        return;
    }
    let s = unit_products(t, tid);
    put8(tid, s.l0, s.l1, s.l2, s.l3, s.l4, s.l5, s.l6, s.l7);
    unit_finish_c(t, tid, 0u);
    if (VW == 8u) {
        put8(tid, s.h0, s.h1, s.h2, s.h3, s.h4, s.h5, s.h6, s.h7);
        unit_finish_c(t, tid, 4u);
    }
}

@compute @workgroup_size(WG)
fn axpy_unit_staged_split(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let t = tile_of(wg);
    if (!t.live) {
        return;
    }
    let s = unit_products(t, tid);
    put8(tid, s.l0, s.l1, s.l2, s.l3, s.l4, s.l5, s.l6, s.l7);
    unit_finish_part(t, tid, 0u);
    if (VW == 8u) {
        put8(tid, s.h0, s.h1, s.h2, s.h3, s.h4, s.h5, s.h6, s.h7);
        unit_finish_part(t, tid, 4u);
    }
}
