// f16 x f16 GEMM on VK_KHR_cooperative_matrix without workgroup staging:
// every subgroup loads its A and B fragments straight from the storage
// buffers (the SM's L1 keeps the rows and columns the block's subgroups
// share), one K step of 16 ahead of the products, with no barrier in the
// K loop. Staging through workgroup memory spends the SM's load/store
// data path three times per element (global load, 16-byte store, fragment
// load) against the tensor cores' rate; this spends it once.
// Compiled by tools/gen_gemm_spirv.py's `wide` set and run by
// src/ops/gemm/khr_wide.rs, with gemm_coop_khr.comp's contract
// (gemm_khr_common.glsl), for products whose blocks are whole
// (M a multiple of BM, N of BN) and K a multiple of 32: the host checks
// (`KhrWide::fits`) and runs another tile elsewhere.
// WM x WN subgroups of FM x FN fragments; B_T: B dense along K (an (N, K)
// weight), else along N; OUT_F16; DIRECT (no epilogue).

#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require

#ifndef GROUP_M
#define GROUP_M 0
#endif
#define A_T 0
#define THREADS_DEF (32 * WM * WN)

const uint BM = 16u * FM * WM;
const uint BN = 16u * FN * WN;
const uint CS = 20u;
const uint EPILOGUE8 = WM * WN * 16u * CS / 4u;

layout(local_size_x = THREADS_DEF, local_size_y = 1, local_size_z = 1) in;

shared uvec4 tb[EPILOGUE8];
#define EPILOGUE_STAGE tb
#include "gemm_khr_common.glsl"

uvec2 block_of(uvec2 wg, uvec2 grid) {
#if GROUP_M > 0
    uint pid = wg.y * grid.x + wg.x;
    uint per_group = GROUP_M * grid.x;
    uint first = (pid / per_group) * GROUP_M;
    uint rows = min(grid.y - first, GROUP_M);
    uint in_group = pid % per_group;
    return uvec2(first + in_group % rows, in_group / rows);
#else
    return uvec2(wg.y, wg.x);
#endif
}

#define FRAG_A coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define FRAG_B coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>

// The fragments of K step gk (a multiple of 16): A rows r_a + 16 i,
// B columns c_b + 16 j, in units of 8 halves from each batch base.
#define LOAD_FRAGS(fa, fb, gk)                                                                          \
    [[unroll]] for (uint i = 0u; i < FM; i++) {                                                         \
        coopMatLoad(fa[i], a.v, a_at + (16u * i) * a_ld8 + (gk) / 8u, a_ld8,                            \
                    gl_CooperativeMatrixLayoutRowMajor);                                                \
    }                                                                                                   \
    [[unroll]] for (uint j = 0u; j < FN; j++) {                                                         \
        if (B_T == 1) {                                                                                 \
            coopMatLoad(fb[j], b.v, b_at + (16u * j) * b_ld8 + (gk) / 8u, b_ld8,                        \
                        gl_CooperativeMatrixLayoutColumnMajor);                                         \
        } else {                                                                                        \
            coopMatLoad(fb[j], b.v, b_at + (gk) * b_ld8 + (16u * j) / 8u, b_ld8,                        \
                        gl_CooperativeMatrixLayoutRowMajor);                                            \
        }                                                                                               \
    }

#define MMA(fa, fb)                                                                                     \
    [[unroll]] for (uint i = 0u; i < FM; i++) {                                                         \
        [[unroll]] for (uint j = 0u; j < FN; j++) {                                                     \
            acc[i * FN + j] = coopMatMulAdd(fa[i], fb[j], acc[i * FN + j]);                             \
        }                                                                                               \
    }

void main() {
    uint lid = gl_LocalInvocationIndex;
    uint split = gl_WorkGroupID.z % p.splits;
    uint bz = gl_WorkGroupID.z / p.splits;
    uint k0 = split * p.k_chunk;
    uint k_end = min(k0 + p.k_chunk, p.k);
    uint sg = lid / 32u;
    uint sub_row = (sg / WN) * (16u * FM);
    uint sub_col = (sg % WN) * (16u * FN);
    uvec2 blk = block_of(gl_WorkGroupID.xy, gl_NumWorkGroups.xy);
    uint row0 = blk.x * BM;
    uint col0 = blk.y * BN;
    ivec3 bases = batch_bases(bz);
    uint a_ld8 = uint(p.a_sm) / 8u;
    uint b_ld8 = uint(B_T == 1 ? p.b_sn : p.b_sk) / 8u;
    // This subgroup's first A row and B column, in units of 8 halves.
    uint a_at = uint(bases.x) / 8u + (row0 + sub_row) * a_ld8;
    uint b_at = B_T == 1 ? uint(bases.y) / 8u + (col0 + sub_col) * b_ld8 : uint(bases.y) / 8u + (col0 + sub_col) / 8u;

    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[FM * FN];
    [[unroll]] for (uint f = 0u; f < FM * FN; f++) {
        acc[f] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    }
    FRAG_A fa0[FM];
    FRAG_B fb0[FN];
    FRAG_A fa1[FM];
    FRAG_B fb1[FN];
    // K steps of 32 (the host requires the split's range to be whole
    // steps): the second half's fragments load while the first half's
    // multiply, and the next step's first half while the second multiplies.
    LOAD_FRAGS(fa0, fb0, k0)
    for (uint gk = k0; gk < k_end; gk += 32u) {
        LOAD_FRAGS(fa1, fb1, gk + 16u)
        MMA(fa0, fb0)
        if (gk + 32u < k_end) {
            LOAD_FRAGS(fa0, fb0, gk + 32u)
        }
        MMA(fa1, fb1)
    }

    int c_base = bases.z + int(split * p.split_c);
#if !DIRECT
    bool plain = p.alpha == 1.0 && p.beta == 0.0 && p.has_bias == 0u && p.c_sn == 1 && p.c_sm >= 0 &&
                 p.c_sm % 8 == 0 && c_base % 8 == 0;
    if (!plain) {
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
