// f16 x f16 -> f32 GEMM on cooperative matrices (tensor cores).
// C[b] = A[b] (M x K, row-major) * B[b] (K x N, row-major), C row-major f32.
//
// A workgroup computes a BM x BN block of C; each of its SGM x SGN subgroups
// (32 invocations) an SM x SN part of it as FM x FN 16x16 fragments
// accumulated in f32. K advances BK at a time: the A and B tiles are read
// from storage with 16-byte loads (8 halves), staged in workgroup memory
// (rows padded by 8 halves against bank conflicts), and the next tiles are
// fetched into registers while the current ones are multiplied. With two
// buffers per tile (DOUBLE), the next tile is staged while the current one
// is used: one barrier a step instead of two.
//
// The tile configuration is the overrides below; every loop over fragments
// and loads is bounded by them, constants when the pipeline is created, so
// drivers unroll them. Function-scope arrays need const sizes: they are
// declared for the largest configuration (MAX_F, MAX_PER).
//
// The host only uses this kernel when M % BM == 0, N % BN == 0,
// K % BK == 0, every offset is a multiple of 8 elements and the subgroup
// size is 32: no tile crosses an edge, so nothing is guarded.
//
// Long K is split (see matmul.wgsl): workgroup z = batch * splits + split
// takes K range [split * k_chunk, +k_chunk) (k_chunk a multiple of BK) and
// stores to C at split * split_c further; the host then sums the splits.
// With one split (k_chunk = K, split_c = 0) this is the plain product.
// Types: H (f16) for the staged tiles and fragments.

struct Params {
    m: u32,
    n: u32,
    k: u32,
    batch_a: u32, // element stride between batches (0: broadcast)
    batch_b: u32,
    batch_c: u32,
    offset_a: u32,
    offset_b: u32,
    offset_c: u32,
    k_chunk: u32,
    splits: u32,
    split_c: u32,
}

@group(0) @binding(0) var<storage, read> a: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<u32>>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

// Fragments per subgroup (rows, columns; at most MAX_F each), subgroups per
// workgroup (rows, columns), K per staged step, and two buffers per tile.
override FM: u32 = 4u;
override FN: u32 = 4u;
override SGM: u32 = 2u;
override SGN: u32 = 2u;
override BK: u32 = 32u;
override DOUBLE: bool = false;

override THREADS: u32 = 32u * SGM * SGN;
override SM: u32 = 16u * FM;
override SN: u32 = 16u * FN;
override BM: u32 = SM * SGM;
override BN: u32 = SN * SGN;
override AS: u32 = BK + 8u;   // row stride of the A tile in halves
override BS: u32 = BN + 8u;   // row stride of the B tile in halves
override A_TILE: u32 = BM * AS;
override B_TILE: u32 = BK * BS;
override BUFS: u32 = select(1u, 2u, DOUBLE);
// Workgroup array sizes must be single identifiers (naga names their override).
override TA_LEN: u32 = BUFS * A_TILE;
override TB_LEN: u32 = BUFS * B_TILE;
// 16-byte vectors per tile row, and how many of each tile an invocation moves.
override A_ROW: u32 = BK / 8u;
override B_ROW: u32 = BN / 8u;
override A_PER: u32 = BM * A_ROW / THREADS;
override B_PER: u32 = BK * B_ROW / THREADS;

const MAX_F: u32 = 4u;
const MAX_PER: u32 = 8u;
alias Frags = array<coop_mat16x16<f32, C>, 16>; // MAX_F * MAX_F
alias Prefetch = array<vec4<u32>, MAX_PER>;

var<workgroup> ta: array<H, TA_LEN>;
var<workgroup> tb: array<H, TB_LEN>;

// Exact: every f16 survives the round trip through f32.
fn store8(dst_is_a: bool, at: u32, v: vec4<u32>) {
    let h0 = vec2<H>(unpack2x16float(v.x));
    let h1 = vec2<H>(unpack2x16float(v.y));
    let h2 = vec2<H>(unpack2x16float(v.z));
    let h3 = vec2<H>(unpack2x16float(v.w));
    if (dst_is_a) {
        ta[at] = h0.x; ta[at + 1u] = h0.y; ta[at + 2u] = h1.x; ta[at + 3u] = h1.y;
        ta[at + 4u] = h2.x; ta[at + 5u] = h2.y; ta[at + 6u] = h3.x; ta[at + 7u] = h3.y;
    } else {
        tb[at] = h0.x; tb[at + 1u] = h0.y; tb[at + 2u] = h1.x; tb[at + 3u] = h1.y;
        tb[at + 4u] = h2.x; tb[at + 5u] = h2.y; tb[at + 6u] = h3.x; tb[at + 7u] = h3.y;
    }
}

// Where a block's tiles start in a and b (vec4 units) and their row pitches.
struct Bases {
    a: u32,
    b: u32,
    a_row_vecs: u32,
    b_row_vecs: u32,
}

// This invocation's share of K step t's A and B tiles, into registers.
fn fetch(t: u32, o: Bases, lid: u32, ra: ptr<function, Prefetch>, rb: ptr<function, Prefetch>) {
    for (var i = 0u; i < A_PER; i++) {
        let v = lid + i * THREADS;
        (*ra)[i] = a[o.a + (v / A_ROW) * o.a_row_vecs + t * A_ROW + v % A_ROW];
    }
    for (var i = 0u; i < B_PER; i++) {
        let v = lid + i * THREADS;
        (*rb)[i] = b[o.b + (t * BK + v / B_ROW) * o.b_row_vecs + v % B_ROW];
    }
}

// The registers into the tile buffers at sa (in ta) and sb (in tb).
fn stage(sa: u32, sb: u32, lid: u32, ra: ptr<function, Prefetch>, rb: ptr<function, Prefetch>) {
    for (var i = 0u; i < A_PER; i++) {
        let v = lid + i * THREADS;
        store8(true, sa + (v / A_ROW) * AS + (v % A_ROW) * 8u, (*ra)[i]);
    }
    for (var i = 0u; i < B_PER; i++) {
        let v = lid + i * THREADS;
        store8(false, sb + (v / B_ROW) * BS + (v % B_ROW) * 8u, (*rb)[i]);
    }
}

// The products of the tiles staged at ca and cb, added to the fragments.
fn multiply(ca: u32, cb: u32, sub_row: u32, sub_col: u32, acc: ptr<function, Frags>) {
    for (var kk = 0u; kk < BK; kk += 16u) {
        var fa: array<coop_mat16x16<H, A>, MAX_F>;
        var fb: array<coop_mat16x16<H, B>, MAX_F>;
        for (var i = 0u; i < FM; i++) {
            fa[i] = coopLoadT<coop_mat16x16<H, A>>(&ta[ca + (sub_row + i * 16u) * AS + kk], AS);
        }
        for (var j = 0u; j < FN; j++) {
            fb[j] = coopLoadT<coop_mat16x16<H, B>>(&tb[cb + kk * BS + sub_col + j * 16u], BS);
        }
        for (var i = 0u; i < FM; i++) {
            for (var j = 0u; j < FN; j++) {
                (*acc)[i * MAX_F + j] = coopMultiplyAdd(fa[i], fb[j], (*acc)[i * MAX_F + j]);
            }
        }
    }
}

@compute @workgroup_size(THREADS)
fn gemm_coop_f16(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let ks = p.k;
    let ns = p.n;
    let split = wg.z % p.splits;
    let bz = wg.z / p.splits;
    let k0 = split * p.k_chunk;
    let sg = lid / 32u;
    let sub_row = (sg / SGN) * SM;   // the subgroup's rows within the block
    let sub_col = (sg % SGN) * SN;
    let row0 = wg.y * BM;
    let col0 = wg.x * BN;
    // Offsets in vec4 units (8 halves) of the block's first A row and B column.
    let o = Bases(
        (p.offset_a + bz * p.batch_a + row0 * ks + k0) / 8u,
        (p.offset_b + bz * p.batch_b + k0 * ns + col0) / 8u,
        ks / 8u,
        ns / 8u,
    );
    var acc: Frags;
    for (var i = 0u; i < FM * MAX_F; i++) {
        acc[i] = coop_mat16x16<f32, C>();
    }
    // Prefetch registers: this invocation's share of the A and B tiles.
    var ra: Prefetch;
    var rb: Prefetch;
    fetch(0u, o, lid, &ra, &rb);
    let steps = min(p.k_chunk, ks - k0) / BK;
    if (DOUBLE) {
        // Multiply from one buffer while staging the next tile into the other.
        stage(0u, 0u, lid, &ra, &rb);
        workgroupBarrier();
        for (var t = 0u; t < steps; t++) {
            let ca = (t % 2u) * A_TILE;
            let cb = (t % 2u) * B_TILE;
            let more = t + 1u < steps;
            if (more) {
                fetch(t + 1u, o, lid, &ra, &rb);
            }
            multiply(ca, cb, sub_row, sub_col, &acc);
            if (more) {
                stage(A_TILE - ca, B_TILE - cb, lid, &ra, &rb);
            }
            workgroupBarrier();
        }
    } else {
        // Stage, then multiply: two barriers a step.
        for (var t = 0u; t < steps; t++) {
            workgroupBarrier();
            stage(0u, 0u, lid, &ra, &rb);
            workgroupBarrier();
            if (t + 1u < steps) {
                fetch(t + 1u, o, lid, &ra, &rb);
            }
            multiply(0u, 0u, sub_row, sub_col, &acc);
        }
    }
    let oc = p.offset_c + bz * p.batch_c + split * p.split_c + (row0 + sub_row) * ns + col0 + sub_col;
    for (var i = 0u; i < FM; i++) {
        for (var j = 0u; j < FN; j++) {
            // The index as a `let`: naga's SPIR-V writer needs it emitted first.
            let ic = oc + i * 16u * ns + j * 16u;
            coopStoreT(acc[i * MAX_F + j], &c[ic], ns);
        }
    }
}
