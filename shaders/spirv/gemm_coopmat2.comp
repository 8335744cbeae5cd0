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
// Variants (-D, each 0 or 1):
// - A_T: A is dense along M (a transposed view), else along K.
// - B_T: B is dense along K (the (N, K) weights of a linear layer), else along N.
// - OUT_F16: C is f16, else f32 (either at unit column stride: the host checks).

#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require

#if OUT_F16
#define OUT float16_t
#else
#define OUT float
#endif

const uint BM = 128u;
const uint BN = 128u;
const uint BK = 32u;

layout(local_size_x = 128, local_size_y = 1, local_size_z = 1) in;

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

void main() {
    uint split = gl_WorkGroupID.z % p.splits;
    uint bz = gl_WorkGroupID.z / p.splits;
    uint k0 = split * p.k_chunk;
    uint k_end = min(k0 + p.k_chunk, p.k);
    uint row0 = gl_WorkGroupID.y * BM;
    uint col0 = gl_WorkGroupID.x * BN;
    ivec3 bases = batch_bases(bz);

    // Each operand as it lies in memory (rows along its non-dense dim), K
    // cut at the split's end; a transposing view reads the transposed ones.
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> la =
        createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lb =
        createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> lc =
        createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);
#if A_T
    la = setTensorLayoutDimensionNV(la, k_end, p.m);
    la = setTensorLayoutStrideNV(la, uint(p.a_sk), 1);
#else
    la = setTensorLayoutDimensionNV(la, p.m, k_end);
    la = setTensorLayoutStrideNV(la, uint(p.a_sm), 1);
#endif
#if B_T
    lb = setTensorLayoutDimensionNV(lb, p.n, k_end);
    lb = setTensorLayoutStrideNV(lb, uint(p.b_sn), 1);
#else
    lb = setTensorLayoutDimensionNV(lb, k_end, p.n);
    lb = setTensorLayoutStrideNV(lb, uint(p.b_sk), 1);
#endif
    lc = setTensorLayoutDimensionNV(lc, p.m, p.n);
    lc = setTensorLayoutStrideNV(lc, uint(p.c_sm), 1);

    coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(0.0);
    for (uint kt = k0; kt < k_end; kt += BK) {
        coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> fa;
        coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> fb;
#if A_T
        coopMatLoadTensorNV(fa, a.v, uint(bases.x), sliceTensorLayoutNV(la, kt, BK, row0, BM), transposed);
#else
        coopMatLoadTensorNV(fa, a.v, uint(bases.x), sliceTensorLayoutNV(la, row0, BM, kt, BK));
#endif
#if B_T
        coopMatLoadTensorNV(fb, b.v, uint(bases.y), sliceTensorLayoutNV(lb, col0, BN, kt, BK), transposed);
#else
        coopMatLoadTensorNV(fb, b.v, uint(bases.y), sliceTensorLayoutNV(lb, kt, BK, col0, BN));
#endif
        acc = coopMatMulAdd(fa, fb, acc);
    }
    uint c_base = uint(bases.z) + split * p.split_c;
#if OUT_F16
    coopmat<float16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> h =
        coopmat<float16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(acc);
    coopMatStoreTensorNV(h, c.v, c_base, sliceTensorLayoutNV(lc, row0, BM, col0, BN));
#else
    coopMatStoreTensorNV(acc, c.v, c_base, sliceTensorLayoutNV(lc, row0, BM, col0, BN));
#endif
}
