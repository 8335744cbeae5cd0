// f16 x f16 -> f32 GEMM on cooperative matrices (tensor cores).
// C[b] = A[b] (M x K, row-major) * B[b] (K x N, row-major), C row-major f32.
//
// A workgroup computes a BM x BN block of C ({{BM}} x {{BN}}); each of its
// subgroups (32 invocations) a {{SM}} x {{SN}} part of it as 16x16 fragments
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
enable f16;
enable wgpu_cooperative_matrix;

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

const BK: u32 = {{BK}}u;
const AS: u32 = {{BK}}u + 8u;   // row stride of the A tile in halves
const BS: u32 = {{BN}}u + 8u;   // row stride of the B tile in halves
const A_TILE: u32 = {{BM}}u * AS;
const B_TILE: u32 = {{BK}}u * BS;
// {{BUFS}} buffer(s) per tile.
var<workgroup> ta: array<f16, {{BUFS}} * {{BM}} * ({{BK}} + 8)>;
var<workgroup> tb: array<f16, {{BUFS}} * {{BK}} * ({{BN}} + 8)>;

// Exact: every f16 survives the round trip through f32.
fn store8(dst_is_a: bool, at: u32, v: vec4<u32>) {
    let h0 = vec2<f16>(unpack2x16float(v.x));
    let h1 = vec2<f16>(unpack2x16float(v.y));
    let h2 = vec2<f16>(unpack2x16float(v.z));
    let h3 = vec2<f16>(unpack2x16float(v.w));
    if (dst_is_a) {
        ta[at] = h0.x; ta[at + 1u] = h0.y; ta[at + 2u] = h1.x; ta[at + 3u] = h1.y;
        ta[at + 4u] = h2.x; ta[at + 5u] = h2.y; ta[at + 6u] = h3.x; ta[at + 7u] = h3.y;
    } else {
        tb[at] = h0.x; tb[at + 1u] = h0.y; tb[at + 2u] = h1.x; tb[at + 3u] = h1.y;
        tb[at + 4u] = h2.x; tb[at + 5u] = h2.y; tb[at + 6u] = h3.x; tb[at + 7u] = h3.y;
    }
}

@compute @workgroup_size({{THREADS}})
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
    let sub_row = (sg / {{SGN}}u) * {{SM}}u;   // the subgroup's rows within the block
    let sub_col = (sg % {{SGN}}u) * {{SN}}u;
    let row0 = wg.y * {{BM}}u;
    let col0 = wg.x * {{BN}}u;
    // Offsets in vec4 units (8 halves) of the block's first A row and B column.
    let a_base = (p.offset_a + bz * p.batch_a + row0 * ks + k0) / 8u;
    let b_base = (p.offset_b + bz * p.batch_b + k0 * ns + col0) / 8u;
    let a_row_vecs = ks / 8u;
    let b_row_vecs = ns / 8u;
{{DECL}}
    // Prefetch registers: this invocation's share of the A and B tiles.
{{PREFETCH_DECL}}
    let steps = min(p.k_chunk, ks - k0) / BK;
{{LOOP}}    let oc = p.offset_c + bz * p.batch_c + split * p.split_c + (row0 + sub_row) * ns + col0 + sub_col;
{{STORE}}
}
