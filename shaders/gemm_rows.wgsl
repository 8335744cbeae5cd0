// Skinny f32 products: up to 32 rows of A (.., R, K) times a weight W
// (K, N), every row at once, so the weight is read from memory once. A
// workgroup of 256 invocations takes all R rows (padded to RT) by BN
// columns over one run of K (k_chunk long; workgroup y is the run) and
// stores its raw f32 sums to slab y of `parts`; gemm_split_sum.wgsl then
// adds the slabs into C with alpha, beta and C's strides.
//
// Invocation (tx, ty) = (id % TX, id / TX) holds rows 4 ty .. 4 ty + 3 by
// columns 4 tx .. 4 tx + 3, so RT / 4 row groups share the 256 invocations
// and BN = 4 * TX: 128 columns for RT 32, 256 for RT 16. Per K step of
// BK = RT the weight's BK x BN tile (16 KiB) and A's RT x BK tile are
// staged in workgroup memory, the next step's loads in flight while this
// one is multiplied: per k a subgroup reads consecutive vec4s of the
// weight tile and one broadcast vec4 of A (four rows), 16 FMAs each.
//
// Overrides: RT, rows per tile (16 or 32); WL, the weight's layout: 0 N is
// dense (stored (K, N)), 1 K is dense (stored (N, K), used transposed). The
// weight is read as vec4s along its dense dim: the caller guarantees that
// dim's size, the other stride and the offset are multiples of 4. A is read
// element by element at any strides (it is small and stays in cache).
//
// Loop bounds are constants, overrides or k_chunk / BK (k_chunk <= 4096),
// so one invocation's loops stay far below a software driver's 65,535
// iterations.

struct Params {
    m: u32,
    n: u32,
    k: u32,
    k_chunk: u32,
    a_sm: i32,
    a_sk: i32,
    w_sk: i32,
    w_sn: i32,
    a_off: u32,
    w_off: u32,
    _pad0: vec2<u32>,
};

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> w: array<vec4<f32>>;
// Raw sums: element (r, c) of run s at (s * m + r) * n + c.
@group(0) @binding(2) var<storage, read_write> parts: array<f32>;
@group(0) @binding(3) var<uniform> p: Params;

override RT: u32 = 32u;
override WL: u32 = 0u;

const WG: u32 = 256u;
// Row groups of 4, invocations per row group, the tile's columns and K step.
override TY: u32 = RT / 4u;
override TX: u32 = WG / TY;
override BN: u32 = 4u * TX;
override BK: u32 = RT;
// vec4s per k row of the weight tile, plus one (bank spread).
override W_ROW: u32 = BN / 4u + 1u;
override W_VECS: u32 = BK * W_ROW;
override A_VECS: u32 = BK * TY;
// Elements of A and vec4s of the weight each invocation loads per step.
override A_LOADS: u32 = RT * BK / WG;
const W_LOADS: u32 = 4u;

var<workgroup> As: array<vec4<f32>, A_VECS>;
var<workgroup> Ws: array<vec4<f32>, W_VECS>;

alias ALoads = array<f32, 4>;
alias WLoads = array<vec4<f32>, W_LOADS>;

// The step at k0 (< k_end) into registers; zeros past the edges.
fn load_step(k0: u32, k_end: u32, n0: u32, id: u32, a_regs: ptr<function, ALoads>, w_regs: ptr<function, WLoads>) {
    // K fastest: a subgroup reads runs of A's rows. (Rows fastest, which
    // spreads the stores into As over the banks, measured 3% slower.)
    for (var l = 0u; l < A_LOADS; l++) {
        let idx = l * WG + id;
        let r = idx / BK;
        let k = k0 + idx % BK;
        var v = 0.0;
        if (r < p.m && k < k_end) {
            v = a[i32(p.a_off) + i32(r) * p.a_sm + i32(k) * p.a_sk];
        }
        (*a_regs)[l] = v;
    }
    for (var l = 0u; l < W_LOADS; l++) {
        let idx = l * WG + id;
        var v = vec4<f32>(0.0);
        if (WL == 0u) {
            // Row k of the tile, columns 4 * (idx % (BN / 4)) ..: BN * 4 bytes per k.
            let k = k0 + idx / (BN / 4u);
            let c = n0 + 4u * (idx % (BN / 4u));
            if (k < k_end && c < p.n) {
                v = w[(i32(p.w_off) + i32(k) * p.w_sk + i32(c)) / 4];
            }
        } else {
            // Column c of the tile, k in 4 * (idx % (BK / 4)) ..: BK * 4
            // bytes per column in one load. (Columns fastest, which spreads
            // the transposing stores over the banks, measured 3-9% slower.)
            let c = n0 + idx / (BK / 4u);
            let k = k0 + 4u * (idx % (BK / 4u));
            if (k < k_end && c < p.n) {
                v = w[(i32(p.w_off) + i32(c) * p.w_sn + i32(k)) / 4];
            }
        }
        (*w_regs)[l] = v;
    }
}

fn store_step(id: u32, a_regs: ptr<function, ALoads>, w_regs: ptr<function, WLoads>) {
    for (var l = 0u; l < A_LOADS; l++) {
        let idx = l * WG + id;
        let r = idx / BK;
        As[(idx % BK) * TY + r / 4u][r % 4u] = (*a_regs)[l];
    }
    for (var l = 0u; l < W_LOADS; l++) {
        let idx = l * WG + id;
        if (WL == 0u) {
            Ws[(idx / (BN / 4u)) * W_ROW + idx % (BN / 4u)] = (*w_regs)[l];
        } else {
            let c = idx / (BK / 4u);
            let k = 4u * (idx % (BK / 4u));
            let v = (*w_regs)[l];
            Ws[k * W_ROW + c / 4u][c % 4u] = v.x;
            Ws[(k + 1u) * W_ROW + c / 4u][c % 4u] = v.y;
            Ws[(k + 2u) * W_ROW + c / 4u][c % 4u] = v.z;
            Ws[(k + 3u) * W_ROW + c / 4u][c % 4u] = v.w;
        }
    }
}

@compute @workgroup_size(256, 1, 1)
fn gemm_rows(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) id: u32) {
    let tx = id % TX;
    let ty = id / TX;
    let n0 = wg.x * BN;
    let k_begin = wg.y * p.k_chunk;
    let k_end = min(k_begin + p.k_chunk, p.k);

    // Rows 4 ty + 0..3, each a vec4 of 4 columns.
    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);
    var a_next: ALoads;
    var w_next: WLoads;
    load_step(k_begin, k_end, n0, id, &a_next, &w_next);
    for (var k0 = k_begin; k0 < k_end; k0 += BK) {
        store_step(id, &a_next, &w_next);
        workgroupBarrier();
        if (k0 + BK < k_end) {
            load_step(k0 + BK, k_end, n0, id, &a_next, &w_next);
        }
        for (var kk = 0u; kk < BK; kk++) {
            let wv = Ws[kk * W_ROW + tx];
            let av = As[kk * TY + ty];
            acc0 = fma(vec4<f32>(av.x), wv, acc0);
            acc1 = fma(vec4<f32>(av.y), wv, acc1);
            acc2 = fma(vec4<f32>(av.z), wv, acc2);
            acc3 = fma(vec4<f32>(av.w), wv, acc3);
        }
        workgroupBarrier();
    }

    let acc = array<vec4<f32>, 4>(acc0, acc1, acc2, acc3);
    for (var i = 0u; i < 4u; i++) {
        let r = 4u * ty + i;
        if (r >= p.m) {
            continue;
        }
        let base = (wg.y * p.m + r) * p.n;
        for (var j = 0u; j < 4u; j++) {
            let c = n0 + 4u * tx + j;
            if (c < p.n) {
                parts[base + c] = acc[i][j];
            }
        }
    }
}
