// Fragment: joined after gemv.wgsl in the gemv families (src/ops/gemv.rs):
// the narrow-block axpy kernels (axpy_unit_narrow*: one or two rows).

// ---- one or two rows in narrow column blocks -----------------------------
//
// For one or two rows against a weight stored (K, N) in 16-byte units (the
// axpy_unit conditions), one tile of MT = 1 or 2 rows: NX threads across N,
// one unit (VW columns) each, times NK threads interleaved along K, so a
// workgroup takes NX * VW columns (64 of f16) and its NK lanes' partial
// sums are added in workgroup memory. Twice the threads of
// axpy_unit_staged over a quarter of its columns: a 4096 x 14336 f16
// weight fills a GPU without splitting K (224 workgroups), where the
// axpy_unit_staged grid could not keep enough loads in flight to reach an
// H200's bandwidth. Each thread issues NU loads of W before it multiplies
// them: with one load at a time, two rows read the weight faster as two
// one-row tiles than as one tile.

const NX: u32 = 8u;
const NK: u32 = 32u;
const NWG: u32 = NX * NK;
const NU: u32 = 4u;

fn narrow_n0(t: Tile, lane: u32) -> u32 {
    return (t.n_tile * NX + lane) * VW;
}

// Thread tid's partial sums over its values of K (every NK-th of the run:
// trips of NU loads, then the rest one at a time) into stage: row r's
// columns 0..3 at stage[2 r NWG + tid], 4..7 at stage[(2 r + 1) NWG + tid].
// Then a barrier.
fn narrow_products(t: Tile, tid: u32) {
    let n0 = narrow_n0(t, tid % NX);
    let z = vec4<f32>(0.0);
    var s = TwoRowSums(z, z, z, z);
    if (n0 < p.n) {
        var k = t.k0 + tid / NX;
        for (; k + (NU - 1u) * NK < t.k1; k += NU * NK) {
            let u0 = unit_at(t, k, n0);
            let u1 = unit_at(t, k + NK, n0);
            let u2 = unit_at(t, k + 2u * NK, n0);
            let u3 = unit_at(t, k + 3u * NK, n0);
            s = add_terms(t, k, u0, s);
            s = add_terms(t, k + NK, u1, s);
            s = add_terms(t, k + 2u * NK, u2, s);
            s = add_terms(t, k + 3u * NK, u3, s);
        }
        for (; k < t.k1; k += NK) {
            s = add_unit_terms(t, k, n0, s);
        }
    }
    stage[tid] = s.l0;
    stage[NWG + tid] = s.h0;
    if (MT > 1u) {
        stage[2u * NWG + tid] = s.l1;
        stage[3u * NWG + tid] = s.h1;
    }
    workgroupBarrier();
}

// The output thread tid (< 2 * NX * MT) finishes: its row, half and lane,
// the sum of the NK lanes' partial sums in order, and the first of its
// four columns.
struct NarrowOut {
    live: bool,
    m: u32,
    n0: u32,
    sum: vec4<f32>,
};

fn narrow_sum(t: Tile, tid: u32) -> NarrowOut {
    var o: NarrowOut;
    let slot = tid / NX;
    let lane = tid % NX;
    o.m = t.m0 + slot / 2u;
    o.n0 = narrow_n0(t, lane) + (slot % 2u) * 4u;
    o.live = tid < 2u * NX * MT && o.m < p.m;
    if (o.live) {
        o.sum = stage[slot * NWG + lane];
        for (var y = 1u; y < NK; y++) {
            o.sum += stage[slot * NWG + y * NX + lane];
        }
    }
    return o;
}

// The entries differ only in where a sum goes (C, or the split's slab):
// each statically uses only its own output binding.
@compute @workgroup_size(NWG)
fn axpy_unit_narrow(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let t = tile_of(wg);
    if (!t.live) {
        return;
    }
    narrow_products(t, tid);
    let o = narrow_sum(t, tid);
    for (var q = 0u; q < 4u; q++) {
        if (o.live && o.n0 + q < p.n) {
            store_c(t, o.m, o.n0 + q, o.sum[q]);
        }
    }
}

@compute @workgroup_size(NWG)
fn axpy_unit_narrow_split(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
    let t = tile_of(wg);
    if (!t.live) {
        return;
    }
    narrow_products(t, tid);
    let o = narrow_sum(t, tid);
    for (var q = 0u; q < 4u; q++) {
        if (o.live && o.n0 + q < p.n) {
            store_part(t, o.m, o.n0 + q, o.sum[q]);
        }
    }
}
