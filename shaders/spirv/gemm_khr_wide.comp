// f16 x f16 GEMM on VK_KHR_cooperative_matrix with configurable block
// tiles, compiled to SPIR-V by tools/gen_gemm_spirv.py (set `wide`) and run
// by src/ops/gemm/khr_wide.rs:
//
//     C[b] = alpha * A[b] (M x K) * B[b] (K x N) + beta * C[b] (+ bias per row)
//
// Same contract as gemm_coop_khr.comp (the Params uniform, bindings, split-K,
// batch and epilogue of gemm_khr_common.glsl), with the block shape a
// compile-time choice instead of 128 x 128 x 32:
// - WM x WN subgroups (32 invocations each), each owning FM x FN
//   accumulator fragments of 16 x 16 held across the K loop; the block is
//   BM = 16 FM WM rows by BN = 16 FN WN columns, K advances BK at a time;
// - global loads of 16 bytes (8 halves) into registers a step ahead, stored
//   into workgroup memory as uvec4 (row strides padded by 8 halves so the
//   8 rows a fragment load reads fall in distinct banks);
// - STAGES 2: two staging buffers, one barrier per K step (the next step is
//   stored into the buffer no subgroup reads); STAGES 1: one buffer, two
//   barriers per step;
// - GROUP_M > 0: workgroups are numbered so that GROUP_M rows of blocks
//   sweep N together (their A rows and B columns stay in L2);
// - DIAG (timing probes only, wrong results): 1 no global loads in the K
//   loop, 2 no staging stores in it, 3 neither.
// Variants: A_T (A dense along M), B_T (B dense along K: (N, K) weights),
// OUT_F16 (f16 C and bias, else f32), DIRECT (fragments stored straight to
// C: the host checks that every tile is whole and C plain; else the
// epilogue, which writes the edge tiles and non-plain products through
// workgroup memory). Loads are guarded at M, N and the split's K end (the
// host requires 16-byte aligned dense dims, strides and offsets).

#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require

#ifndef DIAG
#define DIAG 0
#endif
#ifndef GROUP_M
#define GROUP_M 0
#endif
#ifndef UNROLL2
#define UNROLL2 0
#endif
// PAD_SMEM (a probe of occupancy): allocate a second, unused staging
// buffer with one (STAGES 1), as much workgroup memory as two.
#ifndef PAD_SMEM
#define PAD_SMEM 0
#endif
#define THREADS_DEF (32 * WM * WN)

const uint BM = 16u * FM * WM;
const uint BN = 16u * FN * WN;
const uint BK_ = BK;
const uint THREADS = THREADS_DEF;
// Row strides of the staged tiles in units of 8 halves, padded by 8 halves.
const uint K_STRIDE8 = (BK_ + 8u) / 8u;    // a tile staged K-dense (rows of M or N)
const uint MN_STRIDE8_A = (BM + 8u) / 8u;  // A staged M-dense (rows of K)
const uint MN_STRIDE8_B = (BN + 8u) / 8u;  // B staged N-dense (rows of K)
const uint STAGE8_A = max(BM * K_STRIDE8, BK_ * MN_STRIDE8_A);
const uint STAGE8_B = max(BN * K_STRIDE8, BK_ * MN_STRIDE8_B);
const uint SLOTS_A = BM * BK_ / 8u / THREADS;  // 16-byte slots of A per invocation and step
const uint SLOTS_B = BN * BK_ / 8u / THREADS;
// glslang 13 gives a function-scope uvec4[2] the uniform's uvec4[2] type
// (with its ArrayStride, which spirv-val rejects): a third element, never
// used, which spirv-opt removes.
const uint REGS_A = SLOTS_A == 2u ? 3u : SLOTS_A;
const uint REGS_B = SLOTS_B == 2u ? 3u : SLOTS_B;
const uint CS = 20u;  // row stride of a subgroup's staged 16 x 16 f32 fragment (epilogue)
const uint EPILOGUE8 = WM * WN * 16u * CS / 4u;

layout(local_size_x = THREADS_DEF, local_size_y = 1, local_size_z = 1) in;

shared uvec4 ta[(STAGES + PAD_SMEM) * STAGE8_A];
shared uvec4 tb[max((STAGES + PAD_SMEM) * STAGE8_B, EPILOGUE8)];

#define EPILOGUE_STAGE tb
#include "gemm_khr_common.glsl"

// Slot s of a staged tile of `rows` rows of M or N: its (m or n, k) in the
// tile. k_dense: rows run along K (BK / 8 slots a row), else along M or N.
uvec2 slot_mk(uint s, bool k_dense, uint rows) {
    if (k_dense) {
        return uvec2(s / (BK_ / 8u), (s % (BK_ / 8u)) * 8u);
    }
    return uvec2((s % (rows / 8u)) * 8u, s / (rows / 8u));
}

// Where slot s goes in a staging buffer, in units of 8 halves.
uint stage_at(uint s, bool k_dense, uint rows) {
    uvec2 mk = slot_mk(s, k_dense, rows);
    return k_dense ? mk.x * K_STRIDE8 + mk.y / 8u : mk.y * ((rows + 8u) / 8u) + mk.x / 8u;
}

uvec4 load_a(uint s, uint m0, uint kt, uint k_end, uint base8, uint ld8) {
    uvec2 mk = slot_mk(s, A_T == 0, BM);
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
    uvec2 nk = slot_mk(s, B_T == 1, BN);
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

#define LOAD_A(l, kt) load_a(lid + (l) * THREADS, row0, kt, k_end, a_base8, a_ld8)
#define LOAD_B(l, kt) load_b(lid + (l) * THREADS, col0, kt, k_end, b_base8, b_ld8)

// The block (row, column) of workgroup (x, y) of a gx x gy grid: row-major,
// or GROUP_M rows of blocks at a time, down the rows first.
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
    uint a_ld8 = uint(A_T == 1 ? p.a_sk : p.a_sm) / 8u;
    uint b_ld8 = uint(B_T == 1 ? p.b_sn : p.b_sk) / 8u;
    // DIAG 2 and 3 skip the staging stores behind a predicate the compiler
    // cannot fold (alpha is never this), keeping their loads alive.
    bool store_tiles = (DIAG & 2) == 0 || p.alpha == -1234.5;

    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc[FM * FN];
    [[unroll]] for (uint f = 0u; f < FM * FN; f++) {
        acc[f] = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    }

    // This invocation's share of the next A and B tiles, fetched a step ahead.
    uvec4 ra[REGS_A];
    uvec4 rb[REGS_B];
    [[unroll]] for (uint l = 0u; l < SLOTS_A; l++) {
        ra[l] = LOAD_A(l, k0);
    }
    [[unroll]] for (uint l = 0u; l < SLOTS_B; l++) {
        rb[l] = LOAD_B(l, k0);
    }
#if STAGES == 2 || (DIAG & 2) != 0
    [[unroll]] for (uint l = 0u; l < SLOTS_A; l++) {
        ta[stage_at(lid + l * THREADS, A_T == 0, BM)] = ra[l];
    }
    [[unroll]] for (uint l = 0u; l < SLOTS_B; l++) {
        tb[stage_at(lid + l * THREADS, B_T == 1, BN)] = rb[l];
    }
    barrier();
#endif

    uint steps = (k_end - k0 + BK_ - 1u) / BK_;
#if UNROLL2
    // Two K steps per iteration, so that each step's staging buffer is a
    // constant offset.
    for (uint t2 = 0u; t2 < steps; t2 += 2u) {
        {
            uint t = t2;
#define PAR 0u
#include "gemm_khr_wide_step.glsl"
#undef PAR
        }
        if (t2 + 1u < steps) {
            uint t = t2 + 1u;
#define PAR 1u
#include "gemm_khr_wide_step.glsl"
#undef PAR
        }
    }
#else
    for (uint t = 0u; t < steps; t++) {
#include "gemm_khr_wide_step.glsl"
    }
#endif

    int c_base = bases.z + int(split * p.split_c);
#if !DIRECT
    bool plain = p.alpha == 1.0 && p.beta == 0.0 && p.has_bias == 0u && p.c_sn == 1 && p.c_sm >= 0 &&
                 p.c_sm % 8 == 0 && c_base % 8 == 0;
    if (!plain || row0 + BM > p.m || col0 + BN > p.n) {
        // Every subgroup's last fragment loads are done before the
        // epilogue overwrites tb.
        barrier();
        bool has_beta = p.beta != 0.0;
        [[unroll]] for (uint i = 0u; i < FM; i++) {
            [[unroll]] for (uint j = 0u; j < FN; j++) {
                // (A branch around this call kept spirv-opt from unrolling
                // the loop, which left acc an array in local memory.)
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
