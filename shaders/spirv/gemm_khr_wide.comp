// f16 x f16 (or bf16 x bf16: IN_BF16) GEMM on VK_KHR_cooperative_matrix
// with a wider block than
// gemm_coop_khr.comp, compiled to SPIR-V by tools/gen_gemm_spirv.py (the
// khr set; entry point gemm_khr_wide, the name profiles show) and run by
// src/ops/gemm/wide.rs where the GEMM planner picks it:
//
//     C[b] = alpha * A[b] (M x K) * B[b] (K x N) + beta * C[b] (+ bias per row)
//
// Same contract as gemm_coop_khr.comp: the Params uniform, bindings, split-K
// and batch rules and the epilogue of gemm_khr_common.glsl. The block:
// - 128 x 128 of C per workgroup, as 2 x 4 subgroups (32 invocations each)
//   of 64 x 32, 4 x 2 accumulator fragments of 16 x 16 each held across
//   the K loop; K advances 64 at a time;
// - global loads of 16 bytes (8 halves) into registers a step ahead, stored
//   into one staging buffer as uvec4 (row strides padded by 8 halves so the
//   8 rows a fragment load reads fall in distinct banks), two barriers per
//   step (two buffers need 74 KB of workgroup memory, past the 48 KB
//   NVIDIA's Vulkan driver allows);
// - workgroups numbered so that 8 rows of blocks sweep N together (their A
//   rows and B columns stay in L2).
// - blocks inside M and N whose K run is whole steps load unchecked (the K
//   loop, gemm_khr_k_loop.glsl, is compiled twice).
// Measured on an H100 (BENCHMARKS.md), this ran (N, K) weights 1.04-1.15x
// the 128 x 128 x 32 tile of gemm_coop_khr.comp; with unchecked loads (on
// both), (K, N) weights 1.07-1.09x on an H200.
//
// Variants (-D, 0 or 1): IN_BF16 (bf16 A and B on VK_KHR_shader_bfloat16,
// the generator's bf16 set: f32 C only; the tiles are staged as raw 16-byte
// words either way, so it switches the fragments' type only), B_T (B dense
// along K: (N, K) weights, else along N), OUT_F16 (f16 C and bias, else f32), DIRECT (fragments stored straight
// to C: the host checks that every block is whole and C plain; else the
// epilogue, which writes the edge blocks and products that are not plain
// through workgroup memory). A is read along K (row-major A only). Loads
// in blocks that cross M or N, or whose K run ends inside a step, are
// guarded at M, N and the split's K end (the host requires 16-byte aligned
// dense dims, strides and offsets).

#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
#ifndef IN_BF16
#define IN_BF16 0
#endif
#if IN_BF16
#extension GL_EXT_bfloat16 : require
#define IN_T bfloat16_t
#else
#define IN_T float16_t
#endif

#define WM 2u       // subgroups along M
#define WN 4u       // subgroups along N
#define FM 4u       // fragments per subgroup along M
#define FN 2u       // fragments per subgroup along N
#define GROUP_M 8u  // rows of blocks that sweep N together
// What gemm_khr_k_loop.glsl reads: one staging buffer, A read along K.
#define STAGES 1
#define A_T 0
#define THREADS_DEF 256

const uint BM = 16u * FM * WM;
const uint BN = 16u * FN * WN;
const uint BK = 64u;
const uint THREADS = THREADS_DEF;
// Row strides of the staged tiles in units of 8 halves, padded by 8 halves.
const uint K_STRIDE8 = (BK + 8u) / 8u;     // a tile staged K-dense (rows of M or N)
const uint MN_STRIDE8_B = (BN + 8u) / 8u;  // B staged N-dense (rows of K)
const uint STAGE8_A = BM * K_STRIDE8;
const uint STAGE8_B = max(BN * K_STRIDE8, BK * MN_STRIDE8_B);
const uint SLOTS_A = BM * BK / 8u / THREADS;  // 16-byte slots of A per invocation and step
const uint SLOTS_B = BN * BK / 8u / THREADS;
const uint REGS_A = SLOTS_A;  // the prefetch arrays' lengths (never 2 here: see gemm_coop_khr.comp)
const uint REGS_B = SLOTS_B;
const uint CS = 20u;  // row stride of a subgroup's staged 16 x 16 f32 fragment (epilogue)
const uint EPILOGUE8 = WM * WN * 16u * CS / 4u;

layout(local_size_x = THREADS_DEF, local_size_y = 1, local_size_z = 1) in;

shared uvec4 ta[STAGE8_A];
shared uvec4 tb[max(STAGE8_B, EPILOGUE8)];

#define EPILOGUE_STAGE tb
#include "gemm_khr_common.glsl"

// Slot s of a staged tile of `rows` rows of M or N: its (m or n, k) in the
// tile. k_dense: rows run along K (BK / 8 slots a row), else along M or N.
uvec2 slot_mk(uint s, bool k_dense, uint rows) {
    if (k_dense) {
        return uvec2(s / (BK / 8u), (s % (BK / 8u)) * 8u);
    }
    return uvec2((s % (rows / 8u)) * 8u, s / (rows / 8u));
}

// Where slot s goes in a staging buffer, in units of 8 halves.
uint stage_at(uint s, bool k_dense, uint rows) {
    uvec2 mk = slot_mk(s, k_dense, rows);
    return k_dense ? mk.x * K_STRIDE8 + mk.y / 8u : mk.y * ((rows + 8u) / 8u) + mk.x / 8u;
}

// Slot s of the A (B) tile at rows m0 (columns n0), K from kt; `guarded`
// (a constant at each use): zero past M (N) or k_end, else the caller
// knows the block and its K run are whole.
uvec4 load_a(uint s, uint m0, uint kt, uint k_end, uint base8, uint ld8, bool guarded) {
    uvec2 mk = slot_mk(s, true, BM);
    uint gm = m0 + mk.x;
    uint gk = kt + mk.y;
    if (guarded && (gm >= p.m || gk >= k_end)) {
        return uvec4(0u);
    }
    return a.v[base8 + gm * ld8 + gk / 8u];
}

uvec4 load_b(uint s, uint n0, uint kt, uint k_end, uint base8, uint ld8, bool guarded) {
    uvec2 nk = slot_mk(s, B_T == 1, BN);
    uint gn = n0 + nk.x;
    uint gk = kt + nk.y;
    if (guarded && (gn >= p.n || gk >= k_end)) {
        return uvec4(0u);
    }
#if B_T
    return b.v[base8 + gn * ld8 + gk / 8u];
#else
    return b.v[base8 + gk * ld8 + gn / 8u];
#endif
}

#define LOAD_A(l, kt) load_a(lid + (l) * THREADS, row0, kt, k_end, a_base8, a_ld8, GUARDED == 1)
#define LOAD_B(l, kt) load_b(lid + (l) * THREADS, col0, kt, k_end, b_base8, b_ld8, GUARDED == 1)

// The block (row, column) of workgroup (x, y) of a gx x gy grid: GROUP_M
// rows of blocks at a time, down the rows first.
uvec2 block_of(uvec2 wg, uvec2 grid) {
    uint pid = wg.y * grid.x + wg.x;
    uint per_group = GROUP_M * grid.x;
    uint first = (pid / per_group) * GROUP_M;
    uint rows = min(grid.y - first, GROUP_M);
    uint in_group = pid % per_group;
    return uvec2(first + in_group % rows, in_group / rows);
}

#if !DIRECT
// The epilogue's choice for the block at (row0, col0) of C from element
// c_base: true where its fragments go through gemm_khr_common.glsl's
// store_fragment (alpha, beta, the row bias, the fused epilogue, strided C,
// or a block that crosses M or N), false where they are stored straight to
// C. The same rule as gemm_coop_khr.comp's epilogue variant.
bool needs_epilogue(uint row0, uint col0, int c_base) {
    bool plain = p.alpha == 1.0 && p.beta == 0.0 && p.has_bias == 0u && !epi_any() && p.c_sn == 1 && p.c_sm >= 0 &&
                 p.c_sm % 8 == 0 && c_base % 8 == 0;
    return !plain || row0 + BM > p.m || col0 + BN > p.n;
}
#endif

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
    uint a_base8 = uint(bases.x) / 8u;
    uint b_base8 = uint(bases.y) / 8u;
    uint a_ld8 = uint(p.a_sm) / 8u;
    uint b_ld8 = uint(B_T == 1 ? p.b_sn : p.b_sk) / 8u;

    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[FM * FN];
    [[unroll]] for (uint f = 0u; f < FM * FN; f++) {
        acc[f] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    }

    // Whole blocks (inside M and N, with a K run of whole steps), all but
    // the edges of most products, load without bounds checks: the checks
    // cost 8-20% of the rate (H200; the CUDA twin in bench/ceiling/ loses
    // as much), so the loop (gemm_khr_k_loop.glsl) is compiled twice.
    if (row0 + BM <= p.m && col0 + BN <= p.n && (k_end - k0) % BK == 0u) {
#define GUARDED 0
#include "gemm_khr_k_loop.glsl"
#undef GUARDED
    } else {
#define GUARDED 1
#include "gemm_khr_k_loop.glsl"
#undef GUARDED
    }

    int c_base = bases.z + int(split * p.split_c);
#if !DIRECT
    int res_base = epi_res_base(bz);
    if (needs_epilogue(row0, col0, c_base) && row0 + BM <= p.m && col0 + BN <= p.n && epi_registers(c_base, res_base)) {
        [[unroll]] for (uint i = 0u; i < FM; i++) {
            [[unroll]] for (uint j = 0u; j < FN; j++) {
                store_fragment_registers(acc[i * FN + j], c_base, row0 + sub_row + 16u * i,
                                         col0 + sub_col + 16u * j, res_base);
            }
        }
        return;
    }
    if (needs_epilogue(row0, col0, c_base)) {
        // Every subgroup's last fragment loads are done before the
        // epilogue overwrites tb.
        barrier();
        bool has_beta = p.beta != 0.0;
        [[unroll]] for (uint i = 0u; i < FM; i++) {
            [[unroll]] for (uint j = 0u; j < FN; j++) {
                store_fragment(acc[i * FN + j], sg, c_base, row0 + sub_row + 16u * i, col0 + sub_col + 16u * j,
                               has_beta, res_base);
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
