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
    // The fused epilogue (as shaders/gemm_epilogue.wgsl; below).
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
    // CONV = 2: pixels per image where every image's pixels are rows of M
    // (the batch folded into M; then images lie img8 words apart), else 0.
    uint fold_pixels;
    int img8;
#endif
} p;

layout(std430, set = 0, binding = 0) readonly buffer ABuffer { uvec4 v[]; } a;
layout(std430, set = 0, binding = 1) readonly buffer BBuffer { uvec4 v[]; } b;
layout(std430, set = 0, binding = 2) buffer CBuffer { OUT v[]; } c;
#if !DIRECT
layout(std430, set = 0, binding = 4) readonly buffer BiasBuffer { OUT v[]; } bias;
// The epilogue's per-column scale and residual.
layout(std430, set = 0, binding = 5) readonly buffer ScaleBuffer { OUT v[]; } scale;
layout(std430, set = 0, binding = 6) readonly buffer ResidualBuffer { OUT v[]; } residual;
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
// The fused epilogue, as shaders/gemm_epilogue.wgsl computes it (the
// flags and WgcActivation's values; NaN stays NaN):
//   y = alpha * acc;  y *= scale[n];  y += bias;  (y += residual)
//   y = act(y);  (y += residual)
const uint EPI_COL_BIAS = 1u;
const uint EPI_SCALE = 2u;
const uint EPI_RES_BEFORE = 4u;
const uint EPI_RES_AFTER = 8u;

bool epi_isnan(float x) {
    return (floatBitsToUint(x) & 0x7fffffffu) > 0x7f800000u;
}

// erf by Abramowitz-Stegun 7.1.26 (|error| <= 1.5e-7), as erf_c.
float epi_erf(float x) {
    float a = abs(x);
    float t = 1.0 / (1.0 + 0.3275911 * a);
    float poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t;
    return sign(x) * (1.0 - poly * exp(-a * a));
}

// tanh clamped where it saturates (drivers computing it through exp
// would give inf / inf), NaN kept, as tanh_c.
float epi_tanh(float x) {
    return epi_isnan(x) ? x : tanh(clamp(x, -15.0, 15.0));
}

float epi_activate(float x) {
    switch (p.epi_act) {
    case 1u: return epi_isnan(x) ? x : max(x, 0.0);
    case 2u: return epi_isnan(x) ? x : min(max(x, 0.0), 6.0);
    case 3u: return (x >= 3.0 || epi_isnan(x)) ? x : x * max(x + 3.0, 0.0) / 6.0;
    case 4u: return 0.5 * x * (1.0 + epi_erf(x * 0.7071067811865476));
    case 5u: return 0.5 * x * (1.0 + epi_tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    // -inf / inf is NaN, as x * sigmoid(x) at -inf.
    case 6u: return x / (1.0 + exp(-x));
    case 7u: return epi_tanh(x);
    default: return x;
    }
}

// The residual's element offset of batch matrix z.
int epi_res_base(uint z) {
    int base = int(p.res_off);
    uint rest = z;
    for (int d = int(p.batch_rank) - 1; d >= 0; d--) {
        uint dim = p.batch_shape[d / 4][d % 4];
        base += int(rest % dim) * p.res_bstride[d / 4][d % 4];
        rest = rest / dim;
    }
    return base;
}

// True if the epilogue does more than alpha, beta and the row bias.
bool epi_any() {
    return p.epi_flags != 0u || p.epi_act != 0u;
}

// Writes fragment f, the product at rows gm0.. and columns gn0.. of C
// (from element c_base), as OUT(alpha * f + bias[m] + beta * C), guarded
// at M and N (C read only when has_beta: beta != 0). It goes through subgroup sg's
// own 16 x 16 of workgroup memory; lane l then writes column l % 16 of
// rows 2 r + l / 16.
void store_fragment(coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> f, uint sg, int c_base,
                    uint gm0, uint gn0, bool has_beta, int res_base) {
    uint lane = gl_LocalInvocationIndex % 32u;
    // Subgroup sg's 16 x 16 f32 in EPILOGUE_STAGE (row stride CS floats).
    uint cs0 = sg * 16u * CS;
    coopMatStore(f, EPILOGUE_STAGE, cs0 / 4u, CS / 4u, gl_CooperativeMatrixLayoutRowMajor);
    subgroupBarrier();
    uint gn = gn0 + lane % 16u;
    // Not unrolled: store_fragment is inlined once per fragment (16 times),
    // and eight copies of the epilogue's arithmetic (the activations' exp
    // and erf) in each would bloat the kernel that the K loop shares.
    [[dont_unroll]] for (uint r = 0u; r < 8u; r++) {
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
            float v = p.alpha * uintBitsToFloat(EPILOGUE_STAGE[fi / 4u][fi % 4u]);
            if ((p.epi_flags & EPI_SCALE) != 0u) {
                v *= float(scale.v[int(p.scale_off) + int(gn) * p.scale_stride]);
            }
            if ((p.epi_flags & EPI_COL_BIAS) != 0u) {
                v += float(bias.v[int(p.bias_off) + int(gn) * p.bias_stride]);
            }
            v += add;
            if (has_beta) {
                v += p.beta * float(c.v[ci]);
            }
            if (epi_any()) {
                float r = 0.0;
                if ((p.epi_flags & (EPI_RES_BEFORE | EPI_RES_AFTER)) != 0u) {
                    r = float(residual.v[res_base + int(gm) * p.res_sm + int(gn) * p.res_sn]);
                }
                if ((p.epi_flags & EPI_RES_BEFORE) != 0u) {
                    v += r;
                }
                v = epi_activate(v);
                if ((p.epi_flags & EPI_RES_AFTER) != 0u) {
                    v += r;
                }
            }
            c.v[ci] = OUT(v);
        }
    }
    // Every lane has read the fragment before the next one is stored.
    subgroupBarrier();
}

// The epilogue in registers, for whole tiles: each operand is read as a
// 16 x 16 fragment (the bias and the scale with row or column stride 0,
// repeating one row or column) and the activation runs on the fragment's
// elements, which are at the same positions in fragments of one type; C is
// stored straight from the fragment. store_fragment's arithmetic in its
// order, without its trip through workgroup memory and its per-element
// indexing, which made the epilogue most of a short-K product's time.
// Fragment loads and stores need 16-byte aligned rows: EPI_ALIGN elements.
const int EPI_ALIGN = OUT_F16 != 0 ? 8 : 4;

bool epi_aligned(int offset, int stride) {
    return offset >= 0 && offset % EPI_ALIGN == 0 && stride >= 0 && stride % EPI_ALIGN == 0;
}

// True if store_fragment_registers can write this product's whole tiles:
// no beta, C, the residual rows, the bias and the scale aligned and dense.
bool epi_registers(int c_base, int res_base) {
    bool bias = p.has_bias != 0u || (p.epi_flags & EPI_COL_BIAS) != 0u;
    bool res = (p.epi_flags & (EPI_RES_BEFORE | EPI_RES_AFTER)) != 0u;
    // The other activations keep store_fragment's loop: inlined into every
    // fragment's store here, GELU's erf made a 2048 x 4096 x 4096 product
    // 1.5x slower on an H100.
    return p.epi_act <= 2u && p.beta == 0.0 && p.c_sn == 1 && epi_aligned(c_base, p.c_sm) &&
           (!bias || (p.bias_stride == 1 && epi_aligned(int(p.bias_off), 0))) &&
           ((p.epi_flags & EPI_SCALE) == 0u || (p.scale_stride == 1 && epi_aligned(int(p.scale_off), 0))) &&
           (!res || (p.res_sn == 1 && epi_aligned(res_base, p.res_sm)));
}

#define EPI_FRAG coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define EPI_OUT_FRAG coopmat<OUT, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

// A vector from element `at` repeated over a 16 x 16 fragment (stride 0):
// along its rows (a value per column of C) or columns (per row).
EPI_FRAG epi_per_column(uint at, bool scale_buffer) {
    EPI_OUT_FRAG o;
    if (scale_buffer) {
        coopMatLoad(o, scale.v, at, 0u, gl_CooperativeMatrixLayoutRowMajor);
    } else {
        coopMatLoad(o, bias.v, at, 0u, gl_CooperativeMatrixLayoutRowMajor);
    }
    return EPI_FRAG(o);
}

EPI_FRAG epi_per_row(uint at) {
    EPI_OUT_FRAG o;
    coopMatLoad(o, bias.v, at, 0u, gl_CooperativeMatrixLayoutColumnMajor);
    return EPI_FRAG(o);
}

// Writes fragment f (rows gm0.., columns gn0.., inside M and N) as
// store_fragment does, where epi_registers holds.
void store_fragment_registers(EPI_FRAG f, int c_base, uint gm0, uint gn0, int res_base) {
    EPI_FRAG v = f * p.alpha;
    if ((p.epi_flags & EPI_SCALE) != 0u) {
        EPI_FRAG s = epi_per_column(p.scale_off + gn0, true);
        for (int e = 0; e < v.length(); e++) {
            v[e] *= s[e];
        }
    }
    if ((p.epi_flags & EPI_COL_BIAS) != 0u) {
        v += epi_per_column(p.bias_off + gn0, false);
    }
    if (p.has_bias != 0u) {
        // Per row; per column where the columns are a convolution's output
        // channels (CONV = 2).
        v += CONV == 2 ? epi_per_column(p.bias_off + gn0, false) : epi_per_row(p.bias_off + gm0);
    }
    if (epi_any()) {
        EPI_FRAG r = EPI_FRAG(0.0);
        if ((p.epi_flags & (EPI_RES_BEFORE | EPI_RES_AFTER)) != 0u) {
            EPI_OUT_FRAG o;
            coopMatLoad(o, residual.v, uint(res_base) + gm0 * uint(p.res_sm) + gn0, uint(p.res_sm),
                        gl_CooperativeMatrixLayoutRowMajor);
            r = EPI_FRAG(o);
        }
        if ((p.epi_flags & EPI_RES_BEFORE) != 0u) {
            v += r;
        }
        // ReLU and ReLU6 (epi_registers), as epi_activate computes them.
        if (p.epi_act == 1u) {
            for (int e = 0; e < v.length(); e++) {
                v[e] = epi_isnan(v[e]) ? v[e] : max(v[e], 0.0);
            }
        } else if (p.epi_act == 2u) {
            for (int e = 0; e < v.length(); e++) {
                v[e] = epi_isnan(v[e]) ? v[e] : min(max(v[e], 0.0), 6.0);
            }
        }
        if ((p.epi_flags & EPI_RES_AFTER) != 0u) {
            v += r;
        }
    }
    coopMatStore(EPI_OUT_FRAG(v), c.v, uint(c_base) + gm0 * uint(p.c_sm) + gn0, uint(p.c_sm),
                 gl_CooperativeMatrixLayoutRowMajor);
}
#endif
