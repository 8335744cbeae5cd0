// f16 x f16 (or bf16 x bf16: IN_BF16) GEMM on VK_KHR_cooperative_matrix
// (tensor cores), f32 accumulation, compiled to SPIR-V by
// tools/gen_gemm_spirv.py (one module per variant, selected with -D) and run
// through wgpu's SPIR-V passthrough on Vulkan adapters that offer it:
//
//     C[b] = alpha * A[b] (M x K) * B[b] (K x N) + beta * C[b] (+ bias per row)
//
// It keeps the contract of shaders/gemm_coop_f16.wgsl (the same Params, the
// same binding names, grid, split-K and batch rules; see that file's header;
// the uniform, bindings and epilogue are in gemm_khr_common.glsl) and goes
// where WGSL cannot:
// - with STAGES = 2, two staging buffers in workgroup memory: the next K
//   tile is stored into one while the fragments are loaded from the other,
//   one barrier per step (STAGES = 1: one buffer, two barriers per step, as
//   the WGSL kernel);
// - 16-byte stores into workgroup memory (tiles staged as uvec4, which the
//   fragment loads read directly: element and stride in units of 8 halves);
// - f16 C written straight from converted fragments.
//
// A workgroup computes a BM x BN block of C; each of its 4 subgroups (32
// invocations each; the host requires a subgroup size of 32) a 64 x 64 part
// as 4 x 4 fragments of 16 x 16. K advances BK at a time.
//
// Variants (-D; STAGES 1 or 2, the others 0 or 1):
// - STAGES: staging buffers (above).
// - A_T: A is dense along M (a transposed view), else along K.
// - B_T: B is dense along K (the (N, K) weights of a linear layer), else along N.
// - OUT_F16: C and the bias are f16, else f32.
// - DIRECT: the fragments are stored straight to C (alpha 1, beta 0, no bias,
//   M and N whole tiles, unit column stride, rows and offsets multiples of
//   8: the host checks); else the epilogue: tiles crossing M or N, and every
//   tile of a product that is not plain, go through workgroup memory and are
//   written as OUT(alpha * acc + bias[m] + beta * C) at any strides, guarded
//   at the edges (C read only when beta != 0); the other tiles as DIRECT.
// Loads are always guarded against M, N and the split's K range (a 16-byte
// load is in or out of bounds as a whole: the host uses this kernel only
// where the dense dims, the other strides and every offset are multiples
// of 8), so partial tiles need no variant of their own.

#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
// IN_BF16 (1: A and B are bf16; gen_gemm_spirv.py's bf16 set, on
// VK_KHR_shader_bfloat16) is the one switch of the fragments' type: the
// tiles are staged as raw 16-byte words either way.
#ifndef IN_BF16
#define IN_BF16 0
#endif
#if IN_BF16
#extension GL_EXT_bfloat16 : require
#define IN_T bfloat16_t
#else
#define IN_T float16_t
#endif

const uint BM = 128u;
const uint BN = 128u;
const uint BK = 32u;
const uint SGN = 2u;  // subgroups along N
const uint FM = 4u;   // fragments per subgroup along M
const uint FN = 4u;   // fragments per subgroup along N
const uint THREADS = 128u;
// Row strides of the staged tiles in units of 8 halves, padded by 8 halves
// so that the 8 rows a fragment load reads at once fall in distinct banks.
const uint K_STRIDE8 = (BK + 8u) / 8u;   // a tile staged K-dense (rows of M or N)
const uint MN_STRIDE8 = (BM + 8u) / 8u;  // a tile staged M- or N-dense (rows of K)
const uint STAGE8 = BM * K_STRIDE8;      // the larger of BM * K_STRIDE8 and BK * MN_STRIDE8, per buffer
const uint SLOTS_PER_THREAD = BM * BK / 8u / THREADS;
const uint CS = 20u;  // row stride of a subgroup's staged 16 x 16 f32 fragment

layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;

shared uvec4 ta[STAGES * STAGE8];
shared uvec4 tb[STAGES * STAGE8];

// The epilogue stages fragments in B's tile once the products are done.
#define EPILOGUE_STAGE tb
#include "gemm_khr_common.glsl"

// Slot s of a staged tile (8 halves along the dense dim): its tile
// coordinates (m or n, k). k_dense: the tile's rows run along K (BM rows of
// BK / 8 slots), else along M or N (BK rows of BM / 8 slots).
uvec2 slot_mk(uint s, bool k_dense) {
    if (k_dense) {
        return uvec2(s / (BK / 8u), (s % (BK / 8u)) * 8u);
    }
    return uvec2((s % (BM / 8u)) * 8u, s / (BM / 8u));
}

// Where slot s goes in a staging buffer, in units of 8 halves.
uint stage_at(uint s, bool k_dense) {
    uvec2 mk = slot_mk(s, k_dense);
    return k_dense ? mk.x * K_STRIDE8 + mk.y / 8u : mk.y * MN_STRIDE8 + mk.x / 8u;
}

// Slot s of the A tile at rows m0.., K from kt; zero past M or k_end.
// base8 and ld8: the batch matrix's offset and the stride of A's non-dense
// dim, in units of 8 halves.
uvec4 load_a(uint s, uint m0, uint kt, uint k_end, uint base8, uint ld8) {
    uvec2 mk = slot_mk(s, A_T == 0);
    uint gm = m0 + mk.x;
    uint gk = kt + mk.y;
    if (gm >= p.m || gk >= k_end) {
        return uvec4(0u);
    }
#if A_T
    return a.v[base8 + gk * ld8 + gm / 8u];
#else
    return a.v[base8 + gm * ld8 + gk / 8u];
#endif
}

uvec4 load_b(uint s, uint n0, uint kt, uint k_end, uint base8, uint ld8) {
    uvec2 nk = slot_mk(s, B_T == 1);
    uint gn = n0 + nk.x;
    uint gk = kt + nk.y;
    if (gn >= p.n || gk >= k_end) {
        return uvec4(0u);
    }
#if B_T
    return b.v[base8 + gn * ld8 + gk / 8u];
#else
    return b.v[base8 + gk * ld8 + gn / 8u];
#endif
}

void main() {
    uint lid = gl_LocalInvocationIndex;
    uint split = gl_WorkGroupID.z % p.splits;
    uint bz = gl_WorkGroupID.z / p.splits;
    uint k0 = split * p.k_chunk;
    uint k_end = min(k0 + p.k_chunk, p.k);
    uint sg = lid / 32u;
    uint sub_row = (sg / SGN) * (16u * FM);  // the subgroup's rows within the block
    uint sub_col = (sg % SGN) * (16u * FN);
    uint row0 = gl_WorkGroupID.y * BM;
    uint col0 = gl_WorkGroupID.x * BN;
    ivec3 bases = batch_bases(bz);
    uint a_base8 = uint(bases.x) / 8u;
    uint b_base8 = uint(bases.y) / 8u;
    uint a_ld8 = uint(A_T == 1 ? p.a_sk : p.a_sm) / 8u;
    uint b_ld8 = uint(B_T == 1 ? p.b_sn : p.b_sk) / 8u;

    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[FM * FN];
    [[unroll]] for (uint f = 0u; f < FM * FN; f++) {
        acc[f] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    }

    // This invocation's share of the next A and B tiles, fetched a step ahead.
    uvec4 ra[SLOTS_PER_THREAD];
    uvec4 rb[SLOTS_PER_THREAD];
    [[unroll]] for (uint l = 0u; l < SLOTS_PER_THREAD; l++) {
        ra[l] = load_a(lid + l * THREADS, row0, k0, k_end, a_base8, a_ld8);
        rb[l] = load_b(lid + l * THREADS, col0, k0, k_end, b_base8, b_ld8);
    }
#if STAGES == 2
    [[unroll]] for (uint l = 0u; l < SLOTS_PER_THREAD; l++) {
        ta[stage_at(lid + l * THREADS, A_T == 0)] = ra[l];
        tb[stage_at(lid + l * THREADS, B_T == 1)] = rb[l];
    }
    barrier();
#endif

    uint steps = (k_end - k0 + BK - 1u) / BK;
    for (uint t = 0u; t < steps; t++) {
#if STAGES == 2
        uint cur = (t & 1u) * STAGE8;
        uint nxt = STAGE8 - cur;
#else
        // The previous step's fragment loads are done before the tiles change.
        uint cur = 0u;
        barrier();
        [[unroll]] for (uint l = 0u; l < SLOTS_PER_THREAD; l++) {
            ta[stage_at(lid + l * THREADS, A_T == 0)] = ra[l];
            tb[stage_at(lid + l * THREADS, B_T == 1)] = rb[l];
        }
        barrier();
#endif
        bool more = t + 1u < steps;
        if (more) {
            uint kt = k0 + (t + 1u) * BK;
            [[unroll]] for (uint l = 0u; l < SLOTS_PER_THREAD; l++) {
                ra[l] = load_a(lid + l * THREADS, row0, kt, k_end, a_base8, a_ld8);
                rb[l] = load_b(lid + l * THREADS, col0, kt, k_end, b_base8, b_ld8);
            }
        }
        [[unroll]] for (uint kk = 0u; kk < BK; kk += 16u) {
            coopmat<IN_T, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> fa[FM];
            coopmat<IN_T, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> fb[FN];
            [[unroll]] for (uint i = 0u; i < FM; i++) {
#if A_T
                coopMatLoad(fa[i], ta, cur + kk * MN_STRIDE8 + (sub_row + 16u * i) / 8u, MN_STRIDE8,
                            gl_CooperativeMatrixLayoutColumnMajor);
#else
                coopMatLoad(fa[i], ta, cur + (sub_row + 16u * i) * K_STRIDE8 + kk / 8u, K_STRIDE8,
                            gl_CooperativeMatrixLayoutRowMajor);
#endif
            }
            [[unroll]] for (uint j = 0u; j < FN; j++) {
#if B_T
                coopMatLoad(fb[j], tb, cur + (sub_col + 16u * j) * K_STRIDE8 + kk / 8u, K_STRIDE8,
                            gl_CooperativeMatrixLayoutColumnMajor);
#else
                coopMatLoad(fb[j], tb, cur + kk * MN_STRIDE8 + (sub_col + 16u * j) / 8u, MN_STRIDE8,
                            gl_CooperativeMatrixLayoutRowMajor);
#endif
            }
            [[unroll]] for (uint i = 0u; i < FM; i++) {
                [[unroll]] for (uint j = 0u; j < FN; j++) {
                    acc[i * FN + j] = coopMatMulAdd(fa[i], fb[j], acc[i * FN + j]);
                }
            }
        }
#if STAGES == 2
        // The other buffer was last read in the previous step, before its
        // closing barrier: it can take the next tiles now.
        if (more) {
            [[unroll]] for (uint l = 0u; l < SLOTS_PER_THREAD; l++) {
                ta[nxt + stage_at(lid + l * THREADS, A_T == 0)] = ra[l];
                tb[nxt + stage_at(lid + l * THREADS, B_T == 1)] = rb[l];
            }
        }
        barrier();
#endif
    }

    int c_base = bases.z + int(split * p.split_c);
#if !DIRECT
    // The epilogue variant stores a whole tile of a plain product (alpha 1,
    // beta 0, no bias, unit column stride, rows and offset whole 16-byte
    // words) straight to C as DIRECT does: the edge tiles alone go through
    // workgroup memory. (H200, 4000^3 into f16: 1.18 ms with every tile
    // through workgroup memory, 0.96 with whole tiles direct, 0.58 once the
    // epilogue also staged in tb instead of an array of its own.)
    bool plain = p.alpha == 1.0 && p.beta == 0.0 && p.has_bias == 0u && p.c_sn == 1 && p.c_sm >= 0 &&
                 p.c_sm % 8 == 0 && c_base % 8 == 0;
    if (!plain || row0 + BM > p.m || col0 + BN > p.n) {
        // Every subgroup's last fragment loads are done before the
        // epilogue overwrites tb.
        barrier();
        bool has_beta = p.beta != 0.0;
        [[unroll]] for (uint i = 0u; i < FM; i++) {
            [[unroll]] for (uint j = 0u; j < FN; j++) {
                store_fragment(acc[i * FN + j], sg, c_base, row0 + sub_row + 16u * i, col0 + sub_col + 16u * j,
                               has_beta);
            }
        }
        return;
    }
#endif
    uint ldc = uint(p.c_sm);
    uint oc = uint(c_base) + (row0 + sub_row) * ldc + col0 + sub_col;
    [[unroll]] for (uint i = 0u; i < FM; i++) {
        [[unroll]] for (uint j = 0u; j < FN; j++) {
#if OUT_F16
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> h =
                coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(acc[i * FN + j]);
            coopMatStore(h, c.v, oc + 16u * i * ldc + 16u * j, ldc, gl_CooperativeMatrixLayoutRowMajor);
#else
            coopMatStore(acc[i * FN + j], c.v, oc + 16u * i * ldc + 16u * j, ldc,
                         gl_CooperativeMatrixLayoutRowMajor);
#endif
        }
    }
}
