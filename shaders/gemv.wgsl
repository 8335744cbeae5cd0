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
// axpy entries (gemv_axpy_staged.wgsl) stage the tile's rows of A in
// workgroup memory and keep separate accumulators; `axpy_unit_staged*`
// (gemv_axpy_unit.wgsl) also read W in 16-byte units (8 f16 columns), and
// stage nothing for one or two rows, which `axpy_unit_narrow*`
// (gemv_axpy_narrow.wgsl) take by default (64-column blocks, 32 lanes
// along K).
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
//
// This file holds what the kernels share (the uniform, bindings, tiles,
// stores) and the slabs' sum; the kernels are in the fragments joined
// after it: gemv_dot.wgsl, gemv_axpy.wgsl, gemv_axpy_staged.wgsl,
// gemv_axpy_unit.wgsl, gemv_axpy_narrow.wgsl, then the operand loads
// (gemv_operands.wgsl or gemv_operands_bf16.wgsl).

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
