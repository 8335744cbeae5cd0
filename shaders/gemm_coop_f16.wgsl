// f16 x f16 -> f32 GEMM on cooperative matrices (tensor cores).
// C[b] = A[b] (M x K, row-major) * B[b] (K x N, row-major), C row-major f32.
//
// A workgroup computes a BM x BN block of C (128 x 128); each of its
// subgroups (32 invocations) a 64 x 64 part of it as 16x16 fragments
// accumulated in f32. K advances BK at a time: the A and B tiles are read
// from storage with 16-byte loads (8 halves), staged in workgroup memory
// (rows padded by 8 halves against bank conflicts), and the next tiles are
// fetched into registers while the current ones are multiplied. With two
// buffers per tile, the next tile is staged while the current one is used.
//
// The host only uses this kernel when M % BM == 0, N % BN == 0,
// K % BK == 0, every offset is a multiple of 8 elements and the subgroup
// size is 32: no tile crosses an edge, so nothing is guarded.
//
// Long K is split (see matmul.wgsl): workgroup z = batch * splits + split
// takes K range [split * k_chunk, +k_chunk) (k_chunk a multiple of BK) and
// stores to C at split * split_c further; the host then sums the splits.
// With one split (k_chunk = K, split_c = 0) this is the plain product.

// The kernel is written out for the one tile the library uses (TILE in
// src/ops/gemm_coop.rs: 4x4 fragments per subgroup, 2x2 subgroups, BK 32,
// one buffer per tile), each fragment its own variable: the same loops over
// arrays of cooperative matrices bounded by overrides ran 6x slower on an
// H200 (the driver keeps such arrays in memory, not registers).
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

const BK: u32 = 32u;
const AS: u32 = 32u + 8u;   // row stride of the A tile in halves
const BS: u32 = 128u + 8u;   // row stride of the B tile in halves
const A_TILE: u32 = 128u * AS;
const B_TILE: u32 = 32u * BS;
// 1 buffer(s) per tile.
var<workgroup> ta: array<H, 1 * 128 * (32 + 8)>;
var<workgroup> tb: array<H, 1 * 32 * (128 + 8)>;

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

@compute @workgroup_size(128)
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
    let sub_row = (sg / 2u) * 64u;   // the subgroup's rows within the block
    let sub_col = (sg % 2u) * 64u;
    let row0 = wg.y * 128u;
    let col0 = wg.x * 128u;
    // Offsets in vec4 units (8 halves) of the block's first A row and B column.
    let a_base = (p.offset_a + bz * p.batch_a + row0 * ks + k0) / 8u;
    let b_base = (p.offset_b + bz * p.batch_b + k0 * ns + col0) / 8u;
    let a_row_vecs = ks / 8u;
    let b_row_vecs = ns / 8u;
    var c00 = coop_mat16x16<f32, C>();
    var c01 = coop_mat16x16<f32, C>();
    var c02 = coop_mat16x16<f32, C>();
    var c03 = coop_mat16x16<f32, C>();
    var c10 = coop_mat16x16<f32, C>();
    var c11 = coop_mat16x16<f32, C>();
    var c12 = coop_mat16x16<f32, C>();
    var c13 = coop_mat16x16<f32, C>();
    var c20 = coop_mat16x16<f32, C>();
    var c21 = coop_mat16x16<f32, C>();
    var c22 = coop_mat16x16<f32, C>();
    var c23 = coop_mat16x16<f32, C>();
    var c30 = coop_mat16x16<f32, C>();
    var c31 = coop_mat16x16<f32, C>();
    var c32 = coop_mat16x16<f32, C>();
    var c33 = coop_mat16x16<f32, C>();

    // Prefetch registers: this invocation's share of the A and B tiles.
    var ra0 = a[a_base + ((lid + 0u) / 4u) * a_row_vecs + 0u * 4u + (lid + 0u) % 4u];
    var ra1 = a[a_base + ((lid + 128u) / 4u) * a_row_vecs + 0u * 4u + (lid + 128u) % 4u];
    var ra2 = a[a_base + ((lid + 256u) / 4u) * a_row_vecs + 0u * 4u + (lid + 256u) % 4u];
    var ra3 = a[a_base + ((lid + 384u) / 4u) * a_row_vecs + 0u * 4u + (lid + 384u) % 4u];
    var rb0 = b[b_base + (0u * 32u + (lid + 0u) / 16u) * b_row_vecs + (lid + 0u) % 16u];
    var rb1 = b[b_base + (0u * 32u + (lid + 128u) / 16u) * b_row_vecs + (lid + 128u) % 16u];
    var rb2 = b[b_base + (0u * 32u + (lid + 256u) / 16u) * b_row_vecs + (lid + 256u) % 16u];
    var rb3 = b[b_base + (0u * 32u + (lid + 384u) / 16u) * b_row_vecs + (lid + 384u) % 16u];

    let steps = min(p.k_chunk, ks - k0) / BK;
    let sa = 0u;
    let sb = 0u;
    let ca = 0u;
    let cb = 0u;
    for (var t = 0u; t < steps; t++) {
        workgroupBarrier();
        store8(true, sa + ((lid + 0u) / 4u) * AS + ((lid + 0u) % 4u) * 8u, ra0);
        store8(true, sa + ((lid + 128u) / 4u) * AS + ((lid + 128u) % 4u) * 8u, ra1);
        store8(true, sa + ((lid + 256u) / 4u) * AS + ((lid + 256u) % 4u) * 8u, ra2);
        store8(true, sa + ((lid + 384u) / 4u) * AS + ((lid + 384u) % 4u) * 8u, ra3);
        store8(false, sb + ((lid + 0u) / 16u) * BS + ((lid + 0u) % 16u) * 8u, rb0);
        store8(false, sb + ((lid + 128u) / 16u) * BS + ((lid + 128u) % 16u) * 8u, rb1);
        store8(false, sb + ((lid + 256u) / 16u) * BS + ((lid + 256u) % 16u) * 8u, rb2);
        store8(false, sb + ((lid + 384u) / 16u) * BS + ((lid + 384u) % 16u) * 8u, rb3);
        workgroupBarrier();
        if (t + 1u < steps) {
            ra0 = a[a_base + ((lid + 0u) / 4u) * a_row_vecs + (t + 1u) * 4u + (lid + 0u) % 4u];
            ra1 = a[a_base + ((lid + 128u) / 4u) * a_row_vecs + (t + 1u) * 4u + (lid + 128u) % 4u];
            ra2 = a[a_base + ((lid + 256u) / 4u) * a_row_vecs + (t + 1u) * 4u + (lid + 256u) % 4u];
            ra3 = a[a_base + ((lid + 384u) / 4u) * a_row_vecs + (t + 1u) * 4u + (lid + 384u) % 4u];
            rb0 = b[b_base + ((t + 1u) * 32u + (lid + 0u) / 16u) * b_row_vecs + (lid + 0u) % 16u];
            rb1 = b[b_base + ((t + 1u) * 32u + (lid + 128u) / 16u) * b_row_vecs + (lid + 128u) % 16u];
            rb2 = b[b_base + ((t + 1u) * 32u + (lid + 256u) / 16u) * b_row_vecs + (lid + 256u) % 16u];
            rb3 = b[b_base + ((t + 1u) * 32u + (lid + 384u) / 16u) * b_row_vecs + (lid + 384u) % 16u];
        }
        for (var kk = 0u; kk < BK; kk += 16u) {
            let fa0 = coopLoadT<coop_mat16x16<H, A>>(&ta[ca + (sub_row + 0u) * AS + kk], AS);
            let fa1 = coopLoadT<coop_mat16x16<H, A>>(&ta[ca + (sub_row + 16u) * AS + kk], AS);
            let fa2 = coopLoadT<coop_mat16x16<H, A>>(&ta[ca + (sub_row + 32u) * AS + kk], AS);
            let fa3 = coopLoadT<coop_mat16x16<H, A>>(&ta[ca + (sub_row + 48u) * AS + kk], AS);
            let fb0 = coopLoadT<coop_mat16x16<H, B>>(&tb[cb + kk * BS + sub_col + 0u], BS);
            let fb1 = coopLoadT<coop_mat16x16<H, B>>(&tb[cb + kk * BS + sub_col + 16u], BS);
            let fb2 = coopLoadT<coop_mat16x16<H, B>>(&tb[cb + kk * BS + sub_col + 32u], BS);
            let fb3 = coopLoadT<coop_mat16x16<H, B>>(&tb[cb + kk * BS + sub_col + 48u], BS);
            c00 = coopMultiplyAdd(fa0, fb0, c00);
            c01 = coopMultiplyAdd(fa0, fb1, c01);
            c02 = coopMultiplyAdd(fa0, fb2, c02);
            c03 = coopMultiplyAdd(fa0, fb3, c03);
            c10 = coopMultiplyAdd(fa1, fb0, c10);
            c11 = coopMultiplyAdd(fa1, fb1, c11);
            c12 = coopMultiplyAdd(fa1, fb2, c12);
            c13 = coopMultiplyAdd(fa1, fb3, c13);
            c20 = coopMultiplyAdd(fa2, fb0, c20);
            c21 = coopMultiplyAdd(fa2, fb1, c21);
            c22 = coopMultiplyAdd(fa2, fb2, c22);
            c23 = coopMultiplyAdd(fa2, fb3, c23);
            c30 = coopMultiplyAdd(fa3, fb0, c30);
            c31 = coopMultiplyAdd(fa3, fb1, c31);
            c32 = coopMultiplyAdd(fa3, fb2, c32);
            c33 = coopMultiplyAdd(fa3, fb3, c33);
        }
    }
    let oc = p.offset_c + bz * p.batch_c + split * p.split_c + (row0 + sub_row) * ns + col0 + sub_col;
    let ic00 = oc + 0u * ns + 0u;
    coopStoreT(c00, &c[ic00], ns);
    let ic01 = oc + 0u * ns + 16u;
    coopStoreT(c01, &c[ic01], ns);
    let ic02 = oc + 0u * ns + 32u;
    coopStoreT(c02, &c[ic02], ns);
    let ic03 = oc + 0u * ns + 48u;
    coopStoreT(c03, &c[ic03], ns);
    let ic10 = oc + 16u * ns + 0u;
    coopStoreT(c10, &c[ic10], ns);
    let ic11 = oc + 16u * ns + 16u;
    coopStoreT(c11, &c[ic11], ns);
    let ic12 = oc + 16u * ns + 32u;
    coopStoreT(c12, &c[ic12], ns);
    let ic13 = oc + 16u * ns + 48u;
    coopStoreT(c13, &c[ic13], ns);
    let ic20 = oc + 32u * ns + 0u;
    coopStoreT(c20, &c[ic20], ns);
    let ic21 = oc + 32u * ns + 16u;
    coopStoreT(c21, &c[ic21], ns);
    let ic22 = oc + 32u * ns + 32u;
    coopStoreT(c22, &c[ic22], ns);
    let ic23 = oc + 32u * ns + 48u;
    coopStoreT(c23, &c[ic23], ns);
    let ic30 = oc + 48u * ns + 0u;
    coopStoreT(c30, &c[ic30], ns);
    let ic31 = oc + 48u * ns + 16u;
    coopStoreT(c31, &c[ic31], ns);
    let ic32 = oc + 48u * ns + 32u;
    coopStoreT(c32, &c[ic32], ns);
    let ic33 = oc + 48u * ns + 48u;
    coopStoreT(c33, &c[ic33], ns);

}
