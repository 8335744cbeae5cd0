// Skinny products: C = alpha * A W + beta * C where A (M x K) has few rows
// (M up to a few dozen, the activations) and W (K x N) is the large operand
// (the weight). These are bound by reading W, so every kernel reads each
// element of W once per M tile (M tiles of one W slice run next to each
// other, so the repeat reads hit the cache) and keeps A in cache.
//
// Prelude slots: T (A and W: f32 | f16; f32 in gemv.wgsl+bf16, where A and
// W are bf16), O (C: f32 | f16).
// Overrides: MT (rows of A per workgroup, 1..8), ROWS (columns of W per
// workgroup in the dot kernels, 1..4).
//
// Two layouts of W, two kernels:
// - row_dot: W's K is contiguous (w_sk = 1; a weight stored N x K and used
//   transposed). A workgroup takes ROWS columns of W; its WG threads stride
//   along K (coalesced), each keeping ROWS x MT partial dot products, then
//   a two-round reduction in workgroup memory.
// - axpy: W's N is contiguous (w_sn = 1; a weight stored K x N). A workgroup
//   takes 4 * AX columns: AX threads across N (4 columns each) times AK
//   threads interleaved along K; a reduction in workgroup memory adds the AK
//   partial sums.
// `*4` entries read W as vec4 (K or N a multiple of 4 and W aligned);
// the others read scalars. `row_dot4_a4*` read A's rows as vec4s too;
// `row_dot_unit_a4*` read 16-bit weights in 16-byte units. The `*_staged`
// axpy entries (below) stage the tile's rows of A in workgroup memory and
// keep separate accumulators; `axpy_unit_staged*` also read W in 16-byte
// units (8 f16 columns), and stage nothing for one or two rows, which
// `axpy_unit_narrow*` take by default (64-column blocks, 32 lanes along K).
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
// Bindings 1-3 (a, w, w4) and their loads (a_elem, w_elem, w_quad) come
// from the fragment joined after this file: gemv_operands.wgsl (T) or
// gemv_operands_bf16.wgsl (bf16 bits, family gemv.wgsl+bf16).
@group(0) @binding(4) var<storage, read_write> c: array<O>;
@group(0) @binding(5) var<storage, read_write> parts: array<f32>;
// w in 16-byte units of VW elements (the `*_unit_*` entries).
@group(0) @binding(6) var<storage, read> wu: array<vec4<u32>>;

override MT: u32 = 1u;
override ROWS: u32 = 1u;

const WG: u32 = 128u;
// axpy: threads across N and along K (AX * AK = WG).
const AX: u32 = 32u;
const AK: u32 = 4u;
// Most partial sums one thread keeps (ROWS * MT, and MT vec4s in axpy).
const MAX_ACC: u32 = 32u;
const MAX_MT: u32 = 8u;

var<workgroup> red: array<f32, MAX_ACC * WG>;
var<workgroup> red4: array<vec4<f32>, MAX_MT * WG>;

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

// A's row m at k (0 past the last row, whose results are never stored).
fn a_at(t: Tile, m: u32, k: u32) -> f32 {
    if (m >= p.m) {
        return 0.0;
    }
    return a_elem(t.a_base + i32(m) * p.a_sm + i32(k) * p.a_sk);
}

fn a_quad(t: Tile, m: u32, k: u32) -> vec4<f32> {
    if (m >= p.m) {
        return vec4<f32>(0.0);
    }
    let i = t.a_base + i32(m) * p.a_sm + i32(k) * p.a_sk;
    return vec4<f32>(a_elem(i), a_elem(i + p.a_sk), a_elem(i + 2 * p.a_sk), a_elem(i + 3 * p.a_sk));
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
// would be NaN). `Unit` and `unit_of` are defined with the axpy units below.
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
