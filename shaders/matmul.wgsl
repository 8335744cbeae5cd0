// Batched GEMM: C = alpha * A x B + beta * C (+ bias per row), tiled.
//
// Each workgroup of 16x16 threads computes a BM x BN tile of C, with
// BM = 64 * RM and BN = 64 * RN; each thread holds (4*RM) x (4*RN) results
// in registers. K is walked in steps of BK staged in workgroup memory, A
// stored transposed (k-major) so that both tiles are read as vec4 rows.
// The next step's global loads are in flight while a step is computed.
// A thread's rows are ty*4 + r + i*64 and its columns tx*4 + c + j*64, so a
// subgroup reads consecutive vec4s of B and broadcasts A.
//
// K longer than one workgroup should accumulate (software drivers stop an
// invocation's loops after 65,535 iterations, and one long f32 sum drifts)
// runs as gemm_split: workgroup z = batch * parts + slab takes the K range
// of split split0 + slab (k_chunk long) and stores its raw products, or adds
// them (accumulate != 0, later waves of splits), to slab `slab` of `parts`;
// gemm_split_sum.wgsl then adds the slabs and applies alpha, beta and bias.
//
// Element (m, k) of A lives at a[a_base + m*a_sm + k*a_sk] (any strides);
// A_SK / A_SM / B_SK / B_SN are either the literal 1 (contiguous, folded by
// the compiler) or the uniform's stride. A_K_FAST says that consecutive k
// are adjacent in memory, choosing which way threads walk for coalescing.
// Substitutions: IN (f32|f16), OUT (f32|f16), ENABLE, RM, RN, BK, A_SK,
// A_SM, B_SK, B_SN, C_SM, C_SN, A_K_FAST, B_N_FAST, BIAS (true: add bias[m]).
{{ENABLE}}

struct Params {
    m: u32,
    n: u32,
    k: u32,
    batch_rank: u32,
    alpha: f32,
    beta: f32,
    a_sm: i32,
    a_sk: i32,
    b_sk: i32,
    b_sn: i32,
    c_sm: i32,
    c_sn: i32,
    a_off: u32,
    b_off: u32,
    c_off: u32,
    bias_off: u32,
    batch_shape: array<vec4<u32>, 2>,
    a_bstride: array<vec4<i32>, 2>,
    b_bstride: array<vec4<i32>, 2>,
    c_bstride: array<vec4<i32>, 2>,
    bias_stride: i32,
    k_chunk: u32,
    parts: u32,
    split0: u32,
    accumulate: u32,
    batches: u32,
    row: u32,          // invocations per grid row (gemm_split_sum)
};

@group(0) @binding(0) var<storage, read> a: array<{{IN}}>;
@group(0) @binding(1) var<storage, read> b: array<{{IN}}>;
@group(0) @binding(2) var<storage, read_write> c: array<{{OUT}}>;
@group(0) @binding(3) var<storage, read> bias: array<{{OUT}}>;
@group(0) @binding(4) var<uniform> p: Params;
// Raw f32 products of gemm_split: element (m, n) of batch matrix b in slab q
// at ((q * batches + b) * m + m) * n + n.
@group(0) @binding(5) var<storage, read_write> parts: array<f32>;

const RM: u32 = {{RM}}u;
const RN: u32 = {{RN}}u;
const BK: u32 = {{BK}}u;
const BM: u32 = 64u * RM;
const BN: u32 = 64u * RN;
const A_LOADS: u32 = BM * BK / 256u;
const B_LOADS: u32 = BN * BK / 256u;

// One vec4 of padding per k row keeps the transposing stores from all
// landing in one memory bank.
const A_ROW: u32 = BM / 4u + 1u;
const B_ROW: u32 = BN / 4u + 1u;
var<workgroup> As: array<vec4<f32>, BK * A_ROW>;
var<workgroup> Bs: array<vec4<f32>, BK * B_ROW>;

fn vec_at(v: array<vec4<u32>, 2>, i: u32) -> u32 {
    return v[i / 4u][i % 4u];
}
fn ivec_at(v: array<vec4<i32>, 2>, i: u32) -> i32 {
    return v[i / 4u][i % 4u];
}

// Which (k, m) of the A tile the l-th load of thread tid fetches: threads
// walk the dim that is adjacent in memory so that loads coalesce.
fn a_coord(l: u32, tid: u32) -> vec2<u32> {
    let idx = l * 256u + tid;
    if ({{A_K_FAST}}) {
        return vec2<u32>(idx % BK, idx / BK);
    }
    return vec2<u32>(idx / BM, idx % BM);
}
fn b_coord(l: u32, tid: u32) -> vec2<u32> {
    let idx = l * 256u + tid;
    if ({{B_N_FAST}}) {
        return vec2<u32>(idx / BN, idx % BN);
    }
    return vec2<u32>(idx % BK, idx / BK);
}

fn load_tiles(k0: u32, k_end: u32, m0: u32, n0: u32, tid: u32, a_base: i32, b_base: i32,
              a_regs: ptr<function, array<f32, A_LOADS>>, b_regs: ptr<function, array<f32, B_LOADS>>) {
    for (var l = 0u; l < A_LOADS; l++) {
        let km = a_coord(l, tid);
        let gk = k0 + km.x;
        let gm = m0 + km.y;
        var v = 0.0;
        if (gm < p.m && gk < k_end) {
            v = f32(a[a_base + i32(gm) * {{A_SM}} + i32(gk) * {{A_SK}}]);
        }
        (*a_regs)[l] = v;
    }
    for (var l = 0u; l < B_LOADS; l++) {
        let kn = b_coord(l, tid);
        let gk = k0 + kn.x;
        let gn = n0 + kn.y;
        var v = 0.0;
        if (gn < p.n && gk < k_end) {
            v = f32(b[b_base + i32(gk) * {{B_SK}} + i32(gn) * {{B_SN}}]);
        }
        (*b_regs)[l] = v;
    }
}

fn store_tiles(tid: u32, a_regs: ptr<function, array<f32, A_LOADS>>, b_regs: ptr<function, array<f32, B_LOADS>>) {
    for (var l = 0u; l < A_LOADS; l++) {
        let km = a_coord(l, tid);
        As[km.x * A_ROW + km.y / 4u][km.y % 4u] = (*a_regs)[l];
    }
    for (var l = 0u; l < B_LOADS; l++) {
        let kn = b_coord(l, tid);
        Bs[kn.x * B_ROW + kn.y / 4u][kn.y % 4u] = (*b_regs)[l];
    }
}

// Element offsets of batch matrix z in a, b and c (broadcast strides may be 0).
fn batch_bases(z: u32) -> vec3<i32> {
    var bases = vec3<i32>(i32(p.a_off), i32(p.b_off), i32(p.c_off));
    var rest = z;
    for (var d = i32(p.batch_rank) - 1; d >= 0; d--) {
        let dim = vec_at(p.batch_shape, u32(d));
        let i = i32(rest % dim);
        rest = rest / dim;
        bases += i * vec3<i32>(ivec_at(p.a_bstride, u32(d)), ivec_at(p.b_bstride, u32(d)), ivec_at(p.c_bstride, u32(d)));
    }
    return bases;
}

alias Acc = array<array<vec4<f32>, RN>, 4u * RM>;

// The tile's products over k in [k_begin, k_end), added to `acc`.
fn tile_products(tid: u32, tx: u32, ty: u32, m0: u32, n0: u32, k_begin: u32, k_end: u32, a_base: i32, b_base: i32,
                 acc: ptr<function, Acc>) {
    // Software pipelining: the next K step's global loads are issued into
    // registers before the current step's products, hiding their latency.
    var a_next: array<f32, A_LOADS>;
    var b_next: array<f32, B_LOADS>;
    load_tiles(k_begin, k_end, m0, n0, tid, a_base, b_base, &a_next, &b_next);
    for (var k0 = k_begin; k0 < k_end; k0 += BK) {
        store_tiles(tid, &a_next, &b_next);
        workgroupBarrier();
        if (k0 + BK < k_end) {
            load_tiles(k0 + BK, k_end, m0, n0, tid, a_base, b_base, &a_next, &b_next);
        }

        for (var kk = 0u; kk < BK; kk++) {
            var av: array<vec4<f32>, RM>;
            var bv: array<vec4<f32>, RN>;
            for (var i = 0u; i < RM; i++) {
                av[i] = As[kk * A_ROW + i * 16u + ty];
            }
            for (var j = 0u; j < RN; j++) {
                bv[j] = Bs[kk * B_ROW + j * 16u + tx];
            }
            for (var i = 0u; i < RM; i++) {
                for (var r = 0u; r < 4u; r++) {
                    let s = av[i][r];
                    for (var j = 0u; j < RN; j++) {
                        (*acc)[i * 4u + r][j] = fma(vec4<f32>(s), bv[j], (*acc)[i * 4u + r][j]);
                    }
                }
            }
        }
        workgroupBarrier();
    }
}

@compute @workgroup_size(16, 16, 1)
fn gemm(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let tx = lid.x;
    let ty = lid.y;
    let tid = ty * 16u + tx;
    let bases = batch_bases(wg.z);
    let c_base = bases.z;
    let m0 = wg.y * BM;
    let n0 = wg.x * BN;

    var acc: Acc;
    for (var r = 0u; r < 4u * RM; r++) {
        for (var j = 0u; j < RN; j++) {
            acc[r][j] = vec4<f32>(0.0);
        }
    }
    tile_products(tid, tx, ty, m0, n0, 0u, p.k, bases.x, bases.y, &acc);

    for (var i = 0u; i < RM; i++) {
        for (var r = 0u; r < 4u; r++) {
            let gm = m0 + i * 64u + ty * 4u + r;
            if (gm >= p.m) {
                continue;
            }
            var add = 0.0;
            if ({{BIAS}}) {
                add = f32(bias[i32(p.bias_off) + i32(gm) * p.bias_stride]);
            }
            for (var j = 0u; j < RN; j++) {
                for (var q = 0u; q < 4u; q++) {
                    let gn = n0 + j * 64u + tx * 4u + q;
                    if (gn < p.n) {
                        let ci = c_base + i32(gm) * {{C_SM}} + i32(gn) * {{C_SN}};
                        var v = p.alpha * acc[i * 4u + r][j][q] + add;
                        if (p.beta != 0.0) {
                            v += p.beta * f32(c[ci]);
                        }
                        c[ci] = {{OUT}}(v);
                    }
                }
            }
        }
    }
}

@compute @workgroup_size(16, 16, 1)
fn gemm_split(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let tx = lid.x;
    let ty = lid.y;
    let tid = ty * 16u + tx;
    let batch = wg.z / p.parts;
    let slab = wg.z % p.parts;
    let k_begin = (p.split0 + slab) * p.k_chunk;
    // Past the last split (in the last wave): the slab keeps what it holds.
    if (k_begin >= p.k) {
        return;
    }
    let bases = batch_bases(batch);
    let m0 = wg.y * BM;
    let n0 = wg.x * BN;

    var acc: Acc;
    for (var r = 0u; r < 4u * RM; r++) {
        for (var j = 0u; j < RN; j++) {
            acc[r][j] = vec4<f32>(0.0);
        }
    }
    tile_products(tid, tx, ty, m0, n0, k_begin, min(k_begin + p.k_chunk, p.k), bases.x, bases.y, &acc);

    for (var i = 0u; i < RM; i++) {
        for (var r = 0u; r < 4u; r++) {
            let gm = m0 + i * 64u + ty * 4u + r;
            if (gm >= p.m) {
                continue;
            }
            let row = ((slab * p.batches + batch) * p.m + gm) * p.n;
            for (var j = 0u; j < RN; j++) {
                for (var q = 0u; q < 4u; q++) {
                    let gn = n0 + j * 64u + tx * 4u + q;
                    if (gn < p.n) {
                        var v = acc[i * 4u + r][j][q];
                        if (p.accumulate != 0u) {
                            v += parts[row + gn];
                        }
                        parts[row + gn] = v;
                    }
                }
            }
        }
    }
}
