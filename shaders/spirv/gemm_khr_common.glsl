// What the VK_KHR_cooperative_matrix GEMM kernels (gemm_coop_khr.comp,
// gemm_skinny_khr.comp) share: the contract of shaders/gemm_coop_f16.wgsl
// (the uniform, the bindings, the batch rule) and the epilogue. Included
// after the kernel has defined OUT_F16, DIRECT (0: C is written through the
// epilogue, which needs the bias binding and workgroup memory), CS and
// EPILOGUE_STAGE: a shared uvec4 array of at least 4 * 16 * CS / 4
// elements that the epilogue may overwrite (a staging tile, after a
// barrier). Its own array would add 5 KiB of workgroup memory to the
// square tile's 20, which measured 1.6x slower on an H200.

#ifndef CONV
#define CONV 0
#endif

#if OUT_F16
#define OUT float16_t
#else
#define OUT float
#endif

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
#if CONV
    // The convolution's geometry (gemm_coop_khr.comp's load_b_conv).
    int in_h;
    int in_w;
    uint out_w;
    uint cg;
    uint kw;
    int stride_h;
    int stride_w;
    int pad_h;
    int pad_w;
    int dil_h;
    int dil_w;
    int row8;
    int pix8;
#endif
} p;

layout(std430, set = 0, binding = 0) readonly buffer ABuffer { uvec4 v[]; } a;
layout(std430, set = 0, binding = 1) readonly buffer BBuffer { uvec4 v[]; } b;
layout(std430, set = 0, binding = 2) buffer CBuffer { OUT v[]; } c;
#if !DIRECT
layout(std430, set = 0, binding = 4) readonly buffer BiasBuffer { OUT v[]; } bias;
#endif

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

#if !DIRECT
// Writes fragment f, the product at rows gm0.. and columns gn0.. of C
// (from element c_base), as OUT(alpha * f + bias[m] + beta * C), guarded
// at M and N (C read only when has_beta: beta != 0). It goes through subgroup sg's
// own 16 x 16 of workgroup memory; lane l then writes column l % 16 of
// rows 2 r + l / 16.
void store_fragment(coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> f, uint sg, int c_base,
                    uint gm0, uint gn0, bool has_beta) {
    uint lane = gl_LocalInvocationIndex % 32u;
    // Subgroup sg's 16 x 16 f32 in EPILOGUE_STAGE (row stride CS floats).
    uint cs0 = sg * 16u * CS;
    coopMatStore(f, EPILOGUE_STAGE, cs0 / 4u, CS / 4u, gl_CooperativeMatrixLayoutRowMajor);
    subgroupBarrier();
    uint gn = gn0 + lane % 16u;
    [[unroll]] for (uint r = 0u; r < 8u; r++) {
        uint row = 2u * r + lane / 16u;
        uint gm = gm0 + row;
        if (gm < p.m && gn < p.n) {
            float add = 0.0;
            if (p.has_bias != 0u) {
                // Per row; per column where the columns are a convolution's
                // output channels (CONV = 2).
                uint bias_at = CONV == 2 ? gn : gm;
                add = float(bias.v[int(p.bias_off) + int(bias_at) * p.bias_stride]);
            }
            int ci = c_base + int(gm) * p.c_sm + int(gn) * p.c_sn;
            uint fi = cs0 + row * CS + lane % 16u;
            float v = p.alpha * uintBitsToFloat(EPILOGUE_STAGE[fi / 4u][fi % 4u]) + add;
            if (has_beta) {
                v += p.beta * float(c.v[ci]);
            }
            c.v[ci] = OUT(v);
        }
    }
    // Every lane has read the fragment before the next one is stored.
    subgroupBarrier();
}
#endif
