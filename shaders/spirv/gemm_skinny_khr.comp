// Skinny f16 x f16 (or bf16 x bf16: IN_BF16) GEMM on
// VK_KHR_cooperative_matrix: few rows of A (the activations of a decode
// step, M up to BM = 16 * FM) times a large B (the weight), f32
// accumulation, compiled to SPIR-V by tools/gen_gemm_spirv.py and run
// through wgpu's SPIR-V passthrough:
//
//     C[b] = alpha * A[b] (M x K) * B[b] (K x N) + beta * C[b] (+ bias per row)
//
// Such products are bound by reading B once. gemm_coop_khr.comp's square
// 128 x 128 tile would spend most of its tensor-core work and A traffic on
// padding rows and put too few workgroups on the GPU; here a workgroup takes
// all BM rows and BN = 64 * FN columns, its 4 subgroups (32 invocations
// each; the host requires a subgroup size of 32) 16 * FN columns each as
// FM x FN fragments of 16 x 16, and the host cuts K into runs (split K,
// summed by a second pass) until there are enough workgroups to keep every
// SM's loads in flight.
//
// Same contract as gemm_coop_khr.comp: the same Params, binding names,
// grid (x: column blocks, y: row blocks, z: batch matrix * splits + split),
// split-K rule and epilogue (gemm_khr_common.glsl). Tiles of A and B are
// fetched into registers PREFETCH (two) K steps ahead with 16-byte loads,
// stored to workgroup memory as uvec4 and read from there by the fragment
// loads (element and stride in units of 8 halves). Loads are guarded against M, N and the split's K range (the
// host uses this kernel only where the dense dims, the other strides and
// every offset are multiples of 8, so a 16-byte load is in or out as a
// whole), so partial tiles need no variant of their own.
//
// Variants (-D):
// - TILE_FN, TILE_BK: fragments per subgroup along N, K per step (the
//   tiles gen_gemm_spirv.py lists).
// - FM: 1 or 2, fragments along M (BM = 16 or 32 rows).
// - B_T: B is dense along K (the (N, K) weights of a linear layer), else
//   along N. A is always dense along K.
// - OUT_F16: C and the bias are f16, else f32.
// Every value goes through workgroup memory and is written as
// OUT(alpha * acc + bias[m] + beta * C) at any strides, guarded at the edges
// (C read only when beta != 0); a split writes raw sums (the host passes
// alpha 1, beta 0 and no bias).

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

#define DIRECT 0

#ifndef TILE_FN
#define TILE_FN 4
#endif
#ifndef TILE_BK
#define TILE_BK 32
#endif
const uint FN = TILE_FN;  // fragments per subgroup along N
const uint BM = 16u * FM;
const uint BN = 4u * 16u * FN;
const uint BK = TILE_BK;
// Steps of loads each invocation keeps in flight. On an H200 two ran
// (N, K) weights up to 25% faster than one with 64 columns and K 64 per
// step (n1k64); with 128 columns and K 32 (n2k32) both measured the same.
const uint PREFETCH = 2u;
const uint THREADS = 128u;
// Row strides of the staged tiles in units of 8 halves, padded by 8 halves
// so that the 8 rows a fragment load reads at once fall in distinct banks.
const uint K_STRIDE8 = (BK + 8u) / 8u;   // a tile staged K-dense (rows of M or N)
const uint N_STRIDE8 = (BN + 8u) / 8u;   // B staged N-dense (rows of K)
#if B_T
const uint B_STAGE8 = BN * K_STRIDE8;
#else
const uint B_STAGE8 = BK * N_STRIDE8;
#endif
const uint A_SLOTS = BM * BK / 8u;
const uint A_SLOTS_PER_THREAD = (A_SLOTS + THREADS - 1u) / THREADS;
const uint B_SLOTS_PER_THREAD = BN * BK / 8u / THREADS;
const uint R_SLOTS = B_SLOTS_PER_THREAD + A_SLOTS_PER_THREAD;
const uint CS = 20u;  // row stride of a subgroup's staged 16 x 16 f32 fragment

layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;

shared uvec4 ta[BM * K_STRIDE8];
shared uvec4 tb[B_STAGE8];

// The epilogue stages fragments in B's tile once the products are done. (An
// array of its own measured slower on an H200: decode M 8-32 with (N, K)
// weights 0.076-0.102 ms against 0.063-0.083.)
#define EPILOGUE_STAGE tb
#include "gemm_khr_common.glsl"

// Slot s of the A tile (BM rows of BK / 8 slots) at rows m0.., K from kt;
// zero past M or k_end. base8 and ld8: the batch matrix's offset and A's row
// stride, in units of 8 halves.
uvec4 load_a(uint s, uint m0, uint kt, uint k_end, uint base8, uint ld8) {
    uint gm = m0 + s / (BK / 8u);
    uint gk = kt + (s % (BK / 8u)) * 8u;
    if (s >= A_SLOTS || gm >= p.m || gk >= k_end) {
        return uvec4(0u);
    }
    return a.v[base8 + gm * ld8 + gk / 8u];
}

// Where slot s of the A tile goes in ta.
uint stage_a(uint s) {
    return (s / (BK / 8u)) * K_STRIDE8 + s % (BK / 8u);
}

// The tile coordinates (n, k) of slot s of the B tile: BN rows of BK / 8
// slots when B is K-dense, else BK rows of BN / 8 slots.
uvec2 slot_b(uint s) {
#if B_T
    return uvec2(s / (BK / 8u), (s % (BK / 8u)) * 8u);
#else
    return uvec2((s % (BN / 8u)) * 8u, s / (BN / 8u));
#endif
}

uint stage_b(uint s) {
    uvec2 nk = slot_b(s);
#if B_T
    return nk.x * K_STRIDE8 + nk.y / 8u;
#else
    return nk.y * N_STRIDE8 + nk.x / 8u;
#endif
}

uvec4 load_b(uint s, uint n0, uint kt, uint k_end, uint base8, uint ld8) {
    uvec2 nk = slot_b(s);
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
    uint sub_col = sg * (16u * FN);
    uint row0 = gl_WorkGroupID.y * BM;
    uint col0 = gl_WorkGroupID.x * BN;
    ivec3 bases = batch_bases(bz);
    uint a_base8 = uint(bases.x) / 8u;
    uint b_base8 = uint(bases.y) / 8u;
    uint a_ld8 = uint(p.a_sm) / 8u;
    uint b_ld8 = uint(B_T == 1 ? p.b_sn : p.b_sk) / 8u;

    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[FM * FN];
    [[unroll]] for (uint f = 0u; f < FM * FN; f++) {
        acc[f] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    }

    // This invocation's share of the next PREFETCH steps' B and A tiles,
    // step h of each group of PREFETCH in rb[h]: B's slots, then A's. (One
    // array: glslang 13 gives a uvec4[2] of its own the uniform's array
    // stride, which spirv-val rejects.) The loops over h are unrolled, so
    // every index is a constant and the registers stay registers.
    uvec4 rb[PREFETCH * R_SLOTS];
    uint steps = (k_end - k0 + BK - 1u) / BK;
    [[unroll]] for (uint h = 0u; h < PREFETCH; h++) {
        uint kt = k0 + h * BK;
        [[unroll]] for (uint l = 0u; l < B_SLOTS_PER_THREAD; l++) {
            rb[h * R_SLOTS + l] = load_b(lid + l * THREADS, col0, kt, k_end, b_base8, b_ld8);
        }
        [[unroll]] for (uint l = 0u; l < A_SLOTS_PER_THREAD; l++) {
            rb[h * R_SLOTS + B_SLOTS_PER_THREAD + l] = load_a(lid + l * THREADS, row0, kt, k_end, a_base8, a_ld8);
        }
    }

    for (uint t0 = 0u; t0 < steps; t0 += PREFETCH) {
        [[unroll]] for (uint h = 0u; h < PREFETCH; h++) {
            uint t = t0 + h;
            // steps is the same for the whole workgroup: the barriers below
            // are in uniform control flow.
            if (t < steps) {
                // The previous step's fragment loads are done before the
                // tiles change.
                barrier();
                [[unroll]] for (uint l = 0u; l < A_SLOTS_PER_THREAD; l++) {
                    if (lid + l * THREADS < A_SLOTS) {
                        ta[stage_a(lid + l * THREADS)] = rb[h * R_SLOTS + B_SLOTS_PER_THREAD + l];
                    }
                }
                [[unroll]] for (uint l = 0u; l < B_SLOTS_PER_THREAD; l++) {
                    tb[stage_b(lid + l * THREADS)] = rb[h * R_SLOTS + l];
                }
                barrier();
                // The registers just staged take the step PREFETCH ahead.
                if (t + PREFETCH < steps) {
                    uint kt = k0 + (t + PREFETCH) * BK;
                    [[unroll]] for (uint l = 0u; l < A_SLOTS_PER_THREAD; l++) {
                        rb[h * R_SLOTS + B_SLOTS_PER_THREAD + l] =
                            load_a(lid + l * THREADS, row0, kt, k_end, a_base8, a_ld8);
                    }
                    [[unroll]] for (uint l = 0u; l < B_SLOTS_PER_THREAD; l++) {
                        rb[h * R_SLOTS + l] = load_b(lid + l * THREADS, col0, kt, k_end, b_base8, b_ld8);
                    }
                }
                [[unroll]] for (uint kk = 0u; kk < BK; kk += 16u) {
                    coopmat<IN_T, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> fa[FM];
                    coopmat<IN_T, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> fb[FN];
                    [[unroll]] for (uint i = 0u; i < FM; i++) {
                        coopMatLoad(fa[i], ta, 16u * i * K_STRIDE8 + kk / 8u, K_STRIDE8,
                                    gl_CooperativeMatrixLayoutRowMajor);
                    }
                    [[unroll]] for (uint j = 0u; j < FN; j++) {
#if B_T
                        coopMatLoad(fb[j], tb, (sub_col + 16u * j) * K_STRIDE8 + kk / 8u, K_STRIDE8,
                                    gl_CooperativeMatrixLayoutColumnMajor);
#else
                        coopMatLoad(fb[j], tb, kk * N_STRIDE8 + (sub_col + 16u * j) / 8u, N_STRIDE8,
                                    gl_CooperativeMatrixLayoutRowMajor);
#endif
                    }
                    [[unroll]] for (uint i = 0u; i < FM; i++) {
                        [[unroll]] for (uint j = 0u; j < FN; j++) {
                            acc[i * FN + j] = coopMatMulAdd(fa[i], fb[j], acc[i * FN + j]);
                        }
                    }
                }
            }
        }
    }

    // Every subgroup's last fragment loads are done before the epilogue
    // overwrites tb.
    barrier();
    int c_base = bases.z + int(split * p.split_c);
    bool has_beta = p.beta != 0.0;
    [[unroll]] for (uint i = 0u; i < FM; i++) {
        [[unroll]] for (uint j = 0u; j < FN; j++) {
            store_fragment(acc[i * FN + j], sg, c_base, row0 + 16u * i, col0 + sub_col + 16u * j, has_beta,
                           epi_res_base(bz));
        }
    }
}
