// Batched GEMM: C = alpha * A x B + beta * C (+ bias per row), tiled by the
// micro-kernel of gemm_tile.wgsl (appended to this file), whose staging and
// multiplication this file drives. The next step's global loads are in
// flight while a step is computed.
//
// K longer than one workgroup should accumulate (software drivers stop an
// invocation's loops after 65,535 iterations, and one long f32 sum drifts)
// runs as gemm_split: workgroup z = batch * parts + slab takes the K range
// of split split0 + slab (k_chunk long) and stores its raw products, or adds
// them (accumulate != 0, later waves of splits), to slab `slab` of `parts`;
// gemm_split_sum.wgsl then adds the slabs and applies alpha, beta and bias.
//
// Element (m, k) of A lives at a[a_base + m*a_sm + k*a_sk] (any strides).
// A_LAYOUT, B_LAYOUT and C_LAYOUT say which stride is a compile-time 1
// (folded by the compiler) and which way threads walk for coalescing.
// Types: IN (f32|f16) for A and B, OUT (f32|f16) for C and bias; A and B
// are converted to f32 as the tiles are staged. A GEMM epilogue
// (wgc_op_gemm_epilogue) is not applied here: the split-K pass, or one pass
// over the product in f32 scratch, applies it (src/ops/gemm/epilogue.rs).

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
};

// Bindings 0 and 1 (a, b) and their loads (a_elem, b_elem) come from the
// fragment joined after this file: matmul_operands.wgsl (IN) or
// matmul_operands_bf16.wgsl (bf16 bits, family matmul.wgsl+bf16, IN f32).
@group(0) @binding(2) var<storage, read_write> c: array<OUT>;
@group(0) @binding(3) var<storage, read> bias: array<OUT>;
@group(0) @binding(4) var<uniform> p: Params;
// Raw f32 products of gemm_split: element (m, n) of batch matrix b in slab q
// at ((q * batches + b) * m + m) * n + n.
@group(0) @binding(5) var<storage, read_write> parts: array<f32>;

// A_LAYOUT: 0 any strides, k adjacent-most; 1 any strides, m adjacent-most;
// 2 a_sk is 1; 3 a_sm is 1. B_LAYOUT likewise for (n, k): 0 n adjacent-most;
// 1 k adjacent-most; 2 b_sn is 1; 3 b_sk is 1. C_LAYOUT: 0 any strides;
// 1 c_sn is 1; 2 c_sm is 1.
override A_LAYOUT: u32 = 0u;
override B_LAYOUT: u32 = 0u;
override C_LAYOUT: u32 = 0u;
// Add bias[m] to row m.
override BIAS: bool = false;

fn a_sm() -> i32 { return select(p.a_sm, 1, A_LAYOUT == 3u); }
fn a_sk() -> i32 { return select(p.a_sk, 1, A_LAYOUT == 2u); }
fn b_sk() -> i32 { return select(p.b_sk, 1, B_LAYOUT == 3u); }
fn b_sn() -> i32 { return select(p.b_sn, 1, B_LAYOUT == 2u); }
fn c_sm() -> i32 { return select(p.c_sm, 1, C_LAYOUT == 2u); }
fn c_sn() -> i32 { return select(p.c_sn, 1, C_LAYOUT == 1u); }

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
    if (A_LAYOUT == 0u || A_LAYOUT == 2u) {
        return vec2<u32>(idx % BK, idx / BK);
    }
    return vec2<u32>(idx / BM, idx % BM);
}
fn b_coord(l: u32, tid: u32) -> vec2<u32> {
    let idx = l * 256u + tid;
    if (B_LAYOUT == 0u || B_LAYOUT == 2u) {
        return vec2<u32>(idx / BN, idx % BN);
    }
    return vec2<u32>(idx % BK, idx / BK);
}

fn load_tiles(k0: u32, k_end: u32, m0: u32, n0: u32, tid: u32, a_base: i32, b_base: i32,
              a_regs: ptr<function, Loads>, b_regs: ptr<function, Loads>) {
    for (var l = 0u; l < A_LOADS; l++) {
        let km = a_coord(l, tid);
        let gk = k0 + km.x;
        let gm = m0 + km.y;
        var v = 0.0;
        if (gm < p.m && gk < k_end) {
            v = a_elem(a_base + i32(gm) * a_sm() + i32(gk) * a_sk());
        }
        (*a_regs)[l] = v;
    }
    for (var l = 0u; l < B_LOADS; l++) {
        let kn = b_coord(l, tid);
        let gk = k0 + kn.x;
        let gn = n0 + kn.y;
        var v = 0.0;
        if (gn < p.n && gk < k_end) {
            v = b_elem(b_base + i32(gk) * b_sk() + i32(gn) * b_sn());
        }
        (*b_regs)[l] = v;
    }
}

fn store_tiles(tid: u32, a_regs: ptr<function, Loads>, b_regs: ptr<function, Loads>) {
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

// The tile's products over k in [k_begin, k_end), added to `acc`.
fn tile_products(tid: u32, tx: u32, ty: u32, m0: u32, n0: u32, k_begin: u32, k_end: u32, a_base: i32, b_base: i32,
                 acc: ptr<function, Acc>) {
    // Software pipelining: the next K step's global loads are issued into
    // registers before the current step's products, hiding their latency.
    var a_next: Loads;
    var b_next: Loads;
    load_tiles(k_begin, k_end, m0, n0, tid, a_base, b_base, &a_next, &b_next);
    for (var k0 = k_begin; k0 < k_end; k0 += BK) {
        store_tiles(tid, &a_next, &b_next);
        workgroupBarrier();
        if (k0 + BK < k_end) {
            load_tiles(k0 + BK, k_end, m0, n0, tid, a_base, b_base, &a_next, &b_next);
        }

        multiply_staged(tx, ty, acc);
        workgroupBarrier();
    }
}

// Row gm's bias (0 without one).
fn row_addend(gm: u32) -> f32 {
    if (BIAS) {
        return f32(bias[i32(p.bias_off) + i32(gm) * p.bias_stride]);
    }
    return 0.0;
}

// Workgroup wg's tile of batch matrix wg.z over all of K, into `acc`;
// returns the batch matrix's element offsets in a, b and c.
fn whole_tile(wg: vec3<u32>, lid: vec3<u32>, acc: ptr<function, Acc>) -> vec3<i32> {
    let bases = batch_bases(wg.z);
    tile_products(lid.y * 16u + lid.x, lid.x, lid.y, wg.y * BM, wg.x * BN, 0u, p.k, bases.x, bases.y, acc);
    return bases;
}

@compute @workgroup_size(16, 16, 1)
fn gemm(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let tx = lid.x;
    let ty = lid.y;
    let m0 = wg.y * BM;
    let n0 = wg.x * BN;
    var acc: Acc; // zero-initialized
    let c_base = whole_tile(wg, lid, &acc).z;

    for (var i = 0u; i < RM; i++) {
        for (var r = 0u; r < 4u; r++) {
            let gm = m0 + i * 64u + ty * 4u + r;
            if (gm >= p.m) {
                continue;
            }
            let add = row_addend(gm);
            for (var j = 0u; j < RN; j++) {
                for (var q = 0u; q < 4u; q++) {
                    let gn = n0 + j * 64u + tx * 4u + q;
                    if (gn < p.n) {
                        let ci = c_base + i32(gm) * c_sm() + i32(gn) * c_sn();
                        var v = p.alpha * acc[i * 4u + r][j][q] + add;
                        if (p.beta != 0.0) {
                            v += p.beta * f32(c[ci]);
                        }
                        c[ci] = OUT(v);
                    }
                }
            }
        }
    }
}

// C as vec4s: gemm_c4 writes each thread's four adjacent columns with one
// store. The host takes it where c_sn is 1 and N, c_sm, c_off and the batch
// strides are multiples of 4 (so every vec4 lies inside a row of C).
@group(0) @binding(6) var<storage, read_write> c4: array<vec4<OUT>>;

@compute @workgroup_size(16, 16, 1)
fn gemm_c4(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let tx = lid.x;
    let ty = lid.y;
    let m0 = wg.y * BM;
    let n0 = wg.x * BN;
    var acc: Acc; // zero-initialized
    let c_base = whole_tile(wg, lid, &acc).z;

    // Thread row t is row (t / 4) * 64 + ty * 4 + t % 4 of the tile.
    for (var t = 0u; t < RM * 4u; t++) {
        let gm = m0 + (t / 4u) * 64u + ty * 4u + t % 4u;
        if (gm < p.m) {
            let add = vec4<f32>(row_addend(gm));
            for (var j = 0u; j < RN; j++) {
                let gn = n0 + j * 64u + tx * 4u;
                if (gn < p.n) {
                    let ci = (c_base + i32(gm) * p.c_sm + i32(gn)) / 4;
                    var v = p.alpha * acc[t][j] + add;
                    if (p.beta != 0.0) {
                        v += p.beta * vec4<f32>(c4[ci]);
                    }
                    c4[ci] = vec4<OUT>(v);
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

    var acc: Acc; // zero-initialized
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
