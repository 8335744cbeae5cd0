// Skinny products: C = alpha * A W + beta * C where A (M x K) has few rows
// (M up to a few dozen, the activations) and W (K x N) is the large operand
// (the weight). These are bound by reading W: every kernel reads each
// element of W once per M tile of up to 16 rows (M tiles of one W slice are
// adjacent in the grid, so a repeat read hits the cache), converts it to
// f32 in registers, and accumulates in f32. Accumulators live in
// `const`-sized arrays indexed by `const`-bounded loops (unrolled into
// registers; loops bounded by overrides put them in local memory).
//
// Prelude slots: T (A and W: f32 | f16), O (C: f32 | f16).
// Overrides: MT (rows of A per workgroup, 1..16), ROWS (columns of W per
// workgroup in the dot kernels, 1..4; ROWS * MT <= 64).
//
// Two layouts of W, two kernel shapes:
// - dot: W's K is contiguous (w_sk = 1; a weight stored N x K and used
//   transposed). A workgroup takes ROWS columns of W; its WGD invocations
//   stride along K, each keeping ROWS x MT partial dot products, which a
//   subgroup sum and one workgroup-memory step add (sg_* come from the
//   appended strategy fragment: subgroup operations or none).
// - cols: W's N is contiguous (w_sn = 1; a weight stored K x N). A workgroup
//   takes CU units of VW adjacent columns; its invocations are CU across N
//   times KS interleaved along K (a subgroup reads CU units of one row of W,
//   coalesced); each keeps MT x VW partial sums, and workgroup memory adds
//   the KS slices one row of A at a time.
// `*_vec` entries read W (and, in dot, A) in 16-byte units: 4 f32 or 8 f16
// (VW elements; the f16 pairs unpacked in registers). They need the
// contiguous dim (K in dot, N in cols), the other strides and the offsets
// multiples of VW. The plain entries read scalars.
//
// K is cut into runs of k_chunk (a long run would exceed a software
// driver's 65,535 loop iterations per invocation, and more runs fill the GPU
// when W has few columns): with splits > 1 the `*_split` entries write raw
// f32 sums to slab `split` of `parts` (element (m, n) of batch b in slab s
// at ((s * batches + b) * m + m) * n + n), and `sum_splits` adds the slabs in
// order and applies alpha and beta. Otherwise the plain entries do.
//
// Grid: x, y: the linear workgroup id (wg.y * row + wg.x, below `total`)
// = (n_tile * splits + split) * m_tiles + m_tile; z: the batch matrix.
// `sum_splits`: one invocation per element of C (wg.y * row + wg.x in
// invocations).
//
// NaN and inf propagate through the products (inf * 0 is NaN); beta = 0
// ignores C's old contents.

struct Params {
    m: u32,
    n: u32,
    k: u32,
    batch_rank: u32,
    alpha: f32,
    beta: f32,
    a_sm: i32,
    a_sk: i32,
    // W's strides along K and N: the contiguous one is 1.
    w_sk: i32,
    w_sn: i32,
    c_sm: i32,
    c_sn: i32,
    a_off: u32,
    w_off: u32,
    c_off: u32,
    k_chunk: u32,
    splits: u32,
    m_tiles: u32,
    total: u32,
    row: u32,
    batches: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
    batch_shape: array<vec4<u32>, 2>,
    a_bstride: array<vec4<i32>, 2>,
    w_bstride: array<vec4<i32>, 2>,
    c_bstride: array<vec4<i32>, 2>,
};

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> a: array<T>;
@group(0) @binding(2) var<storage, read> w: array<T>;
// The same buffers as a and w, in 16-byte units.
@group(0) @binding(3) var<storage, read> av: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read> wv: array<vec4<u32>>;
@group(0) @binding(5) var<storage, read_write> c: array<O>;
@group(0) @binding(6) var<storage, read_write> parts: array<f32>;

override MT: u32 = 1u;
override ROWS: u32 = 1u;

// Elements in a 16-byte unit of T.
const VW: u32 = 4u + 4u * T_KIND;
// Most rows of A (MT) and columns of W (ROWS) a workgroup takes.
const MAXM: u32 = 16u;
const MAXR: u32 = 4u;
const MAXSLOTS: u32 = 64u;
// dot: invocations along K.
const WGD: u32 = 64u;
// cols: CU units across N times KS slices along K.
const CU: u32 = 32u;
const KS: u32 = 8u;
const WGC: u32 = CU * KS;

// dot: partial sums of one reduction round.
const DOT_RED: u32 = 1024u;
var<workgroup> dot_red: array<f32, DOT_RED>;
var<workgroup> cols_red: array<vec4<f32>, 2u * WGC>;

// Where a workgroup works: its tile of A's rows and W's columns, its K run
// and its batch matrix's element offsets.
struct Tile {
    live: bool,
    m0: u32,
    n_tile: u32,
    split: u32,
    k0: u32,
    k1: u32,
    batch: u32,
    a_base: i32,
    w_base: i32,
    c_base: i32,
};

fn tile_of(wg: vec3<u32>) -> Tile {
    var t: Tile;
    let id = wg.y * p.row + wg.x;
    t.live = id < p.total;
    t.m0 = (id % p.m_tiles) * MT;
    let rest = id / p.m_tiles;
    t.split = rest % p.splits;
    t.n_tile = rest / p.splits;
    t.k0 = t.split * p.k_chunk;
    t.k1 = min(t.k0 + p.k_chunk, p.k);
    t.batch = wg.z;
    var bases = vec3<i32>(i32(p.a_off), i32(p.w_off), i32(p.c_off));
    var z = wg.z;
    for (var d = i32(p.batch_rank) - 1; d >= 0; d--) {
        let dim = p.batch_shape[d / 4][d % 4];
        let i = i32(z % dim);
        z = z / dim;
        bases += i * vec3<i32>(p.a_bstride[d / 4][d % 4], p.w_bstride[d / 4][d % 4], p.c_bstride[d / 4][d % 4]);
    }
    t.a_base = bases.x;
    t.w_base = bases.y;
    t.c_base = bases.z;
    return t;
}

// VW elements as f32: lo holds 0..3, hi 4..7 (f16 only; zero for f32).
struct Unit {
    lo: vec4<f32>,
    hi: vec4<f32>,
};

fn unit_of(u: vec4<u32>) -> Unit {
    var r: Unit;
    if (T_KIND == 1u) {
        r.lo = vec4<f32>(unpack2x16float(u.x), unpack2x16float(u.y));
        r.hi = vec4<f32>(unpack2x16float(u.z), unpack2x16float(u.w));
    } else {
        r.lo = bitcast<vec4<f32>>(u);
    }
    return r;
}

// Element j of a unit (j < VW).
fn unit_set(r: ptr<function, Unit>, j: u32, v: f32) {
    if (j < 4u) {
        (*r).lo[j] = v;
    } else {
        (*r).hi[j - 4u] = v;
    }
}

fn unit_dot(x: Unit, y: Unit) -> f32 {
    if (T_KIND == 1u) {
        return dot(x.lo, y.lo) + dot(x.hi, y.hi);
    }
    return dot(x.lo, y.lo);
}

// A's row for tile row i (clamped to the last row: rows past M compute
// results that are never stored).
fn a_row(t: Tile, i: u32) -> i32 {
    return t.a_base + i32(min(t.m0 + i, p.m - 1u)) * p.a_sm;
}

// Store one result: the epilogue into C, or the raw sum into its slab.
fn store_c(t: Tile, m: u32, n: u32, sum: f32) {
    let ci = t.c_base + i32(m) * p.c_sm + i32(n) * p.c_sn;
    var v = p.alpha * sum;
    if (p.beta != 0.0) {
        v += p.beta * f32(c[ci]);
    }
    c[ci] = O(v);
}

fn store_part(t: Tile, m: u32, n: u32, sum: f32) {
    parts[((t.split * p.batches + t.batch) * p.m + m) * p.n + n] = sum;
}

// ---- dot: W's K contiguous -------------------------------------------------

// Units q of K (elements q * VW ..) along the tile's K run.
fn dot_units(t: Tile) -> vec2<u32> {
    return vec2<u32>(t.k0 / VW, (t.k1 + VW - 1u) / VW);
}

// W's column r of the tile (clamped to the last: its results are not stored).
fn w_col(t: Tile, r: u32) -> i32 {
    return t.w_base + i32(min(t.n_tile * ROWS + r, p.n - 1u)) * p.w_sn;
}

fn dot_fma(acc: ptr<function, array<f32, MAXSLOTS>>, x: Unit, wu: ptr<function, array<Unit, MAXR>>, i: u32) {
    for (var r = 0u; r < MAXR; r++) {
        if (r < ROWS) {
            (*acc)[r * MAXM + i] += unit_dot(x, (*wu)[r]);
        }
    }
}

// Scalar reads; elements past the K run read as 0 in both operands.
fn dot_acc(t: Tile, lid: u32, acc: ptr<function, array<f32, MAXSLOTS>>) {
    let qs = dot_units(t);
    for (var q = qs.x + lid; q < qs.y; q += WGD) {
        var wu: array<Unit, MAXR>;
        for (var r = 0u; r < MAXR; r++) {
            if (r < ROWS) {
                let base = w_col(t, r);
                var u: Unit;
                for (var j = 0u; j < VW; j++) {
                    let k = q * VW + j;
                    let v = f32(w[base + i32(min(k, t.k1 - 1u)) * p.w_sk]);
                    unit_set(&u, j, select(0.0, v, k < t.k1));
                }
                wu[r] = u;
            }
        }
        for (var i = 0u; i < MAXM; i++) {
            if (i < MT) {
                let base = a_row(t, i);
                var x: Unit;
                for (var j = 0u; j < VW; j++) {
                    let k = q * VW + j;
                    let v = f32(a[base + i32(min(k, t.k1 - 1u)) * p.a_sk]);
                    unit_set(&x, j, select(0.0, v, k < t.k1));
                }
                dot_fma(acc, x, &wu, i);
            }
        }
    }
}

// 16-byte reads of W and A (K, both row starts and the K run in units).
fn dot_acc_vec(t: Tile, lid: u32, acc: ptr<function, array<f32, MAXSLOTS>>) {
    let qs = dot_units(t);
    var wb: array<i32, MAXR>;
    for (var r = 0u; r < MAXR; r++) {
        wb[r] = w_col(t, r) / i32(VW);
    }
    for (var q = qs.x + lid; q < qs.y; q += WGD) {
        var wu: array<Unit, MAXR>;
        for (var r = 0u; r < MAXR; r++) {
            if (r < ROWS) {
                wu[r] = unit_of(wv[wb[r] + i32(q)]);
            }
        }
        for (var i = 0u; i < MAXM; i++) {
            if (i < MT) {
                let x = unit_of(av[a_row(t, i) / i32(VW) + i32(q)]);
                dot_fma(acc, x, &wu, i);
            }
        }
    }
}

// Adds each invocation's ROWS x MT partial sums over the workgroup: a
// subgroup sum, then invocation s < ROWS * MT adds the subgroups' sums of
// slot s = r * MT + i (in order) and returns it. dot_red holds the slots of
// one round: all of them with subgroups of 4 lanes or more, 16 per round
// without subgroups (small, so that it does not limit workgroups per SM).
fn dot_reduce(lid: u32, acc: ptr<function, array<f32, MAXSLOTS>>) -> f32 {
    let lanes = sg_size();
    let per = max(WGD / lanes, 1u);
    let chunk = DOT_RED / per;
    let slots = ROWS * MT;
    var total = 0.0;
    for (var first = 0u; first < slots; first += chunk) {
        for (var j = 0u; j < MAXSLOTS; j++) {
            let r = j / MAXM;
            let i = j % MAXM;
            let slot = r * MT + i;
            if (r < ROWS && i < MT) {
                let s = sg_sum_f32((*acc)[j]);
                if (lid % lanes == 0u && slot >= first && slot < first + chunk) {
                    dot_red[(slot - first) * per + lid / lanes] = s;
                }
            }
        }
        workgroupBarrier();
        if (lid >= first && lid < min(first + chunk, slots)) {
            for (var g = 0u; g < per; g++) {
                total += dot_red[(lid - first) * per + g];
            }
        }
        workgroupBarrier();
    }
    return total;
}

// The invocation's result after dot_reduce: (m, n, valid).
fn dot_slot(t: Tile, lid: u32) -> vec3<u32> {
    let m = t.m0 + lid % MT;
    let n = t.n_tile * ROWS + lid / MT;
    return vec3<u32>(m, n, u32(t.live && lid < ROWS * MT && m < p.m && n < p.n));
}

@compute @workgroup_size(WGD)
fn dot_rows(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = tile_of(wg);
    var acc: array<f32, MAXSLOTS>;
    if (t.live) {
        dot_acc(t, lid, &acc);
    }
    let sum = dot_reduce(lid, &acc);
    let s = dot_slot(t, lid);
    if (s.z != 0u) {
        store_c(t, s.x, s.y, sum);
    }
}

@compute @workgroup_size(WGD)
fn dot_rows_vec(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = tile_of(wg);
    var acc: array<f32, MAXSLOTS>;
    if (t.live) {
        dot_acc_vec(t, lid, &acc);
    }
    let sum = dot_reduce(lid, &acc);
    let s = dot_slot(t, lid);
    if (s.z != 0u) {
        store_c(t, s.x, s.y, sum);
    }
}

@compute @workgroup_size(WGD)
fn dot_rows_split(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = tile_of(wg);
    var acc: array<f32, MAXSLOTS>;
    if (t.live) {
        dot_acc(t, lid, &acc);
    }
    let sum = dot_reduce(lid, &acc);
    let s = dot_slot(t, lid);
    if (s.z != 0u) {
        store_part(t, s.x, s.y, sum);
    }
}

@compute @workgroup_size(WGD)
fn dot_rows_vec_split(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = tile_of(wg);
    var acc: array<f32, MAXSLOTS>;
    if (t.live) {
        dot_acc_vec(t, lid, &acc);
    }
    let sum = dot_reduce(lid, &acc);
    let s = dot_slot(t, lid);
    if (s.z != 0u) {
        store_part(t, s.x, s.y, sum);
    }
}

// ---- cols: W's N contiguous ------------------------------------------------

// The invocation's unit of columns (columns u * VW ..) and K slice.
fn cols_unit(t: Tile, lid: u32) -> u32 {
    return t.n_tile * CU + lid % CU;
}

fn cols_fma(lo: ptr<function, array<vec4<f32>, MAXM>>, hi: ptr<function, array<vec4<f32>, MAXM>>, t: Tile, k: u32, wu: Unit) {
    for (var i = 0u; i < MAXM; i++) {
        if (i < MT) {
            let x = vec4<f32>(f32(a[a_row(t, i) + i32(k) * p.a_sk]));
            (*lo)[i] = fma(x, wu.lo, (*lo)[i]);
            if (T_KIND == 1u) {
                (*hi)[i] = fma(x, wu.hi, (*hi)[i]);
            }
        }
    }
}

// Scalar reads of W (columns past N read the last one; never stored).
fn cols_acc(t: Tile, lid: u32, lo: ptr<function, array<vec4<f32>, MAXM>>, hi: ptr<function, array<vec4<f32>, MAXM>>) {
    let n0 = cols_unit(t, lid) * VW;
    if (n0 >= p.n) {
        return;
    }
    for (var k = t.k0 + lid / CU; k < t.k1; k += KS) {
        let row = t.w_base + i32(k) * p.w_sk;
        var wu: Unit;
        for (var j = 0u; j < VW; j++) {
            unit_set(&wu, j, f32(w[row + i32(min(n0 + j, p.n - 1u)) * p.w_sn]));
        }
        cols_fma(lo, hi, t, k, wu);
    }
}

// 16-byte reads of W (N, W's K stride and its start multiples of VW).
fn cols_acc_vec(t: Tile, lid: u32, lo: ptr<function, array<vec4<f32>, MAXM>>, hi: ptr<function, array<vec4<f32>, MAXM>>) {
    let u = cols_unit(t, lid);
    if (u * VW >= p.n) {
        return;
    }
    let base = t.w_base / i32(VW) + i32(u);
    let step = p.w_sk / i32(VW);
    for (var k = t.k0 + lid / CU; k < t.k1; k += KS) {
        cols_fma(lo, hi, t, k, unit_of(wv[base + i32(k) * step]));
    }
}

// Adds the KS slices one row of A at a time; invocation e < CU * VW takes
// column n_tile * CU * VW + e. Returns false where the invocation has no
// result for row i.
fn cols_row_sum(t: Tile, lid: u32, lo: vec4<f32>, hi: vec4<f32>, i: u32, res: ptr<function, f32>) -> bool {
    cols_red[lid] = lo;
    cols_red[WGC + lid] = hi;
    workgroupBarrier();
    let u = lid / VW;
    let j = lid % VW;
    var sum = 0.0;
    if (lid < CU * VW) {
        for (var s = 0u; s < KS; s++) {
            sum += cols_red[(j / 4u) * WGC + s * CU + u][j % 4u];
        }
    }
    workgroupBarrier();
    *res = sum;
    let n = t.n_tile * CU * VW + lid;
    return t.live && lid < CU * VW && t.m0 + i < p.m && n < p.n;
}

@compute @workgroup_size(WGC)
fn cols(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = tile_of(wg);
    var lo: array<vec4<f32>, MAXM>;
    var hi: array<vec4<f32>, MAXM>;
    if (t.live) {
        cols_acc(t, lid, &lo, &hi);
    }
    for (var i = 0u; i < MAXM; i++) {
        if (i < MT) {
            var sum: f32;
            if (cols_row_sum(t, lid, lo[i], hi[i], i, &sum)) {
                store_c(t, t.m0 + i, t.n_tile * CU * VW + lid, sum);
            }
        }
    }
}

@compute @workgroup_size(WGC)
fn cols_vec(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = tile_of(wg);
    var lo: array<vec4<f32>, MAXM>;
    var hi: array<vec4<f32>, MAXM>;
    if (t.live) {
        cols_acc_vec(t, lid, &lo, &hi);
    }
    for (var i = 0u; i < MAXM; i++) {
        if (i < MT) {
            var sum: f32;
            if (cols_row_sum(t, lid, lo[i], hi[i], i, &sum)) {
                store_c(t, t.m0 + i, t.n_tile * CU * VW + lid, sum);
            }
        }
    }
}

@compute @workgroup_size(WGC)
fn cols_split(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = tile_of(wg);
    var lo: array<vec4<f32>, MAXM>;
    var hi: array<vec4<f32>, MAXM>;
    if (t.live) {
        cols_acc(t, lid, &lo, &hi);
    }
    for (var i = 0u; i < MAXM; i++) {
        if (i < MT) {
            var sum: f32;
            if (cols_row_sum(t, lid, lo[i], hi[i], i, &sum)) {
                store_part(t, t.m0 + i, t.n_tile * CU * VW + lid, sum);
            }
        }
    }
}

@compute @workgroup_size(WGC)
fn cols_vec_split(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let t = tile_of(wg);
    var lo: array<vec4<f32>, MAXM>;
    var hi: array<vec4<f32>, MAXM>;
    if (t.live) {
        cols_acc_vec(t, lid, &lo, &hi);
    }
    for (var i = 0u; i < MAXM; i++) {
        if (i < MT) {
            var sum: f32;
            if (cols_row_sum(t, lid, lo[i], hi[i], i, &sum)) {
                store_part(t, t.m0 + i, t.n_tile * CU * VW + lid, sum);
            }
        }
    }
}

// ---- the slabs' sum ------------------------------------------------------

@compute @workgroup_size(256)
fn sum_splits(@builtin(global_invocation_id) gid: vec3<u32>) {
    let e = gid.y * p.row + gid.x;
    let per_batch = p.m * p.n;
    if (e >= p.batches * per_batch) {
        return;
    }
    var s = 0.0;
    for (var q = 0u; q < p.splits; q++) {
        s += parts[q * p.batches * per_batch + e];
    }
    // The batch matrix's offset in C, decoded as tile_of does.
    var t: Tile;
    t.c_base = i32(p.c_off);
    var z = e / per_batch;
    for (var d = i32(p.batch_rank) - 1; d >= 0; d--) {
        let dim = p.batch_shape[d / 4][d % 4];
        t.c_base += i32(z % dim) * p.c_bstride[d / 4][d % 4];
        z = z / dim;
    }
    let mn = e % per_batch;
    store_c(t, mn / p.n, mn % p.n, s);
}
