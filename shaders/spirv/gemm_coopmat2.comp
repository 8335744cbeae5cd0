// f16 x f16 GEMM on VK_NV_cooperative_matrix2 (workgroup-scope cooperative
// matrices loaded and stored through tensor layouts), f32 accumulation,
// compiled to SPIR-V by tools/gen_gemm_spirv.py (one module per variant,
// selected with -D) and run through wgpu's SPIR-V passthrough on devices
// opened with the extension (runtime/coopmat2.rs):
//
//     C[b] = A[b] (M x K) * B[b] (K x N)
//
// The same Params, binding names, grid, split-K and batch rules as
// shaders/gemm_coop_f16.wgsl, without its epilogue: the host sends alpha,
// beta and the bias through an f32 slab and the split-K sum pass. The
// workgroup computes one BM x BN block of C as one matrix; the driver
// stages the A and B tiles. The tensor layouts clamp: loads past M, N or
// the split's K range read zeros and stores past M or N are dropped, so
// partial tiles need nothing of their own, and any strides and offsets
// work (no 16-byte alignment needed).
//
// The block (-D, defaults 128 x 128 x 32 on 128 invocations): BM x BN of
// C per workgroup, K in steps of BK, WG invocations; the driver must list
// the shape among its flexible dimensions for WG invocations
// (runtime/coopmat2.rs checks before the device enables the extension).
//
// A block wholly inside C whose K run is a whole number of steps, with
// 16-byte aligned rows and bases, loads through unclamped layouts (no
// per-element bounds) with the aligned strides made visible to the
// compiler, UNROLL steps per loop trip; other blocks take clamped layouts.
//
// Variants (-D, each 0 or 1):
// - SKINNY: products of at most BM rows (decode): A is always loaded
//   through a clamped layout, so the unclamped path needs only B inside.
// - A_T: A is dense along M (a transposed view), else along K.
// - B_T: B is dense along K (the (N, K) weights of a linear layer), else along N.
// - OUT_F16: C is f16, else f32 (either at unit column stride: the host checks).

#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_control_flow_attributes : require

#if OUT_F16
#define OUT float16_t
#else
#define OUT float
#endif

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 32
#endif
#ifndef WG
#define WG 128
#endif
#ifndef SKINNY
#define SKINNY 0
#endif
#define UNROLL 4

layout(local_size_x = WG, local_size_y = 1, local_size_z = 1) in;

layout(std140, set = 0, binding = 3) uniform Params {
    uint m;
    uint n;
    uint k;
    uint batch_rank;
    float alpha;
    float beta;
    uint has_bias;
    int bias_stride;
    int a_sm;
    int a_sk;
    int b_sk;
    int b_sn;
    int c_sm;
    int c_sn;
    uint bias_off;
    uint k_chunk;
    uint a_off;
    uint b_off;
    uint c_off;
    uint splits;
    uint split_c;
    uvec4 batch_shape[2];
    ivec4 a_bstride[2];
    ivec4 b_bstride[2];
    ivec4 c_bstride[2];
    // The GEMM epilogue's fields (gemm_khr_common.glsl): this kernel stores
    // plain products only, so it never reads them.
    uint epi_act;
    uint epi_flags;
    uint scale_off;
    int scale_stride;
    uint res_off;
    int res_sm;
    int res_sn;
    uint nan;
    uint inf;
    ivec4 res_bstride[2];
} p;

layout(std430, set = 0, binding = 0) readonly buffer ABuffer { float16_t v[]; } a;
layout(std430, set = 0, binding = 1) readonly buffer BBuffer { float16_t v[]; } b;
layout(std430, set = 0, binding = 2) buffer CBuffer { OUT v[]; } c;

// Element offsets of batch matrix z in a, b and c (broadcast strides may be 0).
ivec3 batch_bases(uint z) {
    ivec3 bases = ivec3(int(p.a_off), int(p.b_off), int(p.c_off));
    uint rest = z;
    for (int d = int(p.batch_rank) - 1; d >= 0; d--) {
        uint dim = p.batch_shape[d / 4][d % 4];
        int i = int(rest % dim);
        rest = rest / dim;
        bases += i * ivec3(p.a_bstride[d / 4][d % 4], p.b_bstride[d / 4][d % 4], p.c_bstride[d / 4][d % 4]);
    }
    return bases;
}

// One K step at kt: A's BM x BK tile and B's BK x BN tile through the
// layouts la and lb (each operand as it lies: rows along its non-dense dim;
// a transposing view reads the transposed ones), into acc.
#if A_T
#define LOAD_A(base, kt) coopMatLoadTensorNV(fa, a.v, base, sliceTensorLayoutNV(la, kt, BK, row0, BM), transposed);
#else
#define LOAD_A(base, kt) coopMatLoadTensorNV(fa, a.v, base, sliceTensorLayoutNV(la, row0, BM, kt, BK));
#endif
#if B_T
#define LOAD_B(base, kt) coopMatLoadTensorNV(fb, b.v, base, sliceTensorLayoutNV(lb, col0, BN, kt, BK), transposed);
#else
#define LOAD_B(base, kt) coopMatLoadTensorNV(fb, b.v, base, sliceTensorLayoutNV(lb, kt, BK, col0, BN));
#endif
#define STEP(a_base, b_base, kt)                                             \
    {                                                                        \
        coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> fa;     \
        coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> fb;     \
        LOAD_A(a_base, kt)                                                   \
        LOAD_B(b_base, kt)                                                   \
        acc = coopMatMulAdd(fa, fb, acc);                                    \
    }

// Each operand's extent (K cut at the split's end) and row stride, as it
// lies in memory: rows along its non-dense dim.
#if A_T
#define SHAPE_A() la = setTensorLayoutDimensionNV(la, k_end, p.m);
#else
#define SHAPE_A() la = setTensorLayoutDimensionNV(la, p.m, k_end);
#endif
#if B_T
#define SHAPE_B() lb = setTensorLayoutDimensionNV(lb, p.n, k_end);
#else
#define SHAPE_B() lb = setTensorLayoutDimensionNV(lb, k_end, p.n);
#endif
#define SHAPE_LAYOUTS()                               \
    SHAPE_A()                                         \
    SHAPE_B()                                         \
    la = setTensorLayoutStrideNV(la, a_stride, 1);    \
    lb = setTensorLayoutStrideNV(lb, b_stride, 1);

void main() {
    uint split = gl_WorkGroupID.z % p.splits;
    uint bz = gl_WorkGroupID.z / p.splits;
    uint k0 = split * p.k_chunk;
    uint k_end = min(k0 + p.k_chunk, p.k);
    uint row0 = gl_WorkGroupID.y * BM;
    uint col0 = gl_WorkGroupID.x * BN;
    ivec3 bases = batch_bases(bz);

    uint c_base = uint(bases.z) + split * p.split_c;
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lc =
        createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    lc = setTensorLayoutDimensionNV(lc, p.m, p.n);
    lc = setTensorLayoutStrideNV(lc, uint(p.c_sm), 1);
    tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);
    coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(0.0);

#if A_T
    uint a_stride = uint(p.a_sk);
#else
    uint a_stride = uint(p.a_sm);
#endif
#if B_T
    uint b_stride = uint(p.b_sn);
#else
    uint b_stride = uint(p.b_sk);
#endif
#if SKINNY
    // Few rows: A (a few KiB) is always clamped, so rows past M need nothing.
    bool inside = col0 + BN <= p.n && k0 < k_end && (k_end - k0) % BK == 0;
    bool aligned = (b_stride | uint(bases.y)) % 8u == 0u;
#else
    bool inside = row0 + BM <= p.m && col0 + BN <= p.n && k0 < k_end && (k_end - k0) % BK == 0;
    bool aligned = (a_stride | b_stride | uint(bases.x) | uint(bases.y)) % 8u == 0u;
#endif
    if (inside && aligned) {
        // Aligned strides and bases the compiler can see (16 bytes).
        b_stride &= ~7u;
        uint b_base = uint(bases.y) & ~7u;
#if SKINNY
        uint a_base = uint(bases.x);
        tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> la =
            createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
#else
        a_stride &= ~7u;
        uint a_base = uint(bases.x) & ~7u;
        tensorLayoutNV<2> la = createTensorLayoutNV(2);
#endif
        // The host's K runs are whole 32-element steps.
        k0 &= ~31u;
        tensorLayoutNV<2> lb = createTensorLayoutNV(2);
        SHAPE_LAYOUTS()
        uint kt = k0;
        uint whole = k0 + (k_end - k0) / (BK * UNROLL) * (BK * UNROLL);
        for (; kt < whole; kt += BK * UNROLL) {
            [[unroll]] for (uint u = 0u; u < UNROLL; u++) {
                STEP(a_base, b_base, kt + u * BK)
            }
        }
        for (; kt < k_end; kt += BK) {
            STEP(a_base, b_base, kt)
        }
    } else {
        // Loads past M, N or the split's K range read zeros.
        tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> la =
            createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
        tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lb =
            createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
        SHAPE_LAYOUTS()
        for (uint kt = k0; kt < k_end; kt += BK) {
            STEP(uint(bases.x), uint(bases.y), kt)
        }
    }
#if OUT_F16
    coopmat<float16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> h =
        coopmat<float16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(acc);
    coopMatStoreTensorNV(h, c.v, c_base, sliceTensorLayoutNV(lc, row0, BM, col0, BN));
#else
    coopMatStoreTensorNV(acc, c.v, c_base, sliceTensorLayoutNV(lc, row0, BM, col0, BN));
#endif
}
