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
// A workgroup computes a BM x BN block of C; each of its SGM x SGN
// subgroups (32 invocations each; the host requires a subgroup size of 32)
// a 64 x 64 part as 4 x 4 fragments of 16 x 16 (TILE_FM x TILE_FN). K
// advances BK at a time.
//
// Variants (-D; STAGES 1 or 2, TILE_SGM and TILE_SGN 1 or 2, the others 0
// or 1):
// - TILE_SGM, TILE_SGN: subgroups along M and N (2 x 2 by default, a
//   128 x 128 block; 1 x 2 or 2 x 1 make a 64 x 128 or 128 x 64 block of
//   64 invocations, for convolutions of 64 output channels). Blocks of
//   256 x 128 and 128 x 256 (8 subgroups; half the loads from L2 per
//   product) measured 5-8% slower than 128 x 128 on an H200
//   (BENCHMARKS.md), so none is built.
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
// Loads in blocks that cross M or N, or whose K run ends inside a step,
// are guarded against M, N and the split's K range (a 16-byte load is in
// or out of bounds as a whole: the host uses this kernel only where the
// dense dims, the other strides and every offset are multiples of 8), so
// partial tiles need no variant of their own; the other blocks load
// unchecked (the K loop, gemm_khr_k_loop.glsl, is compiled for both).

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
// CONV (1 or 2: gemm_conv_khr_*.spv) makes B (1) or A (2) a convolution's
// input columns, gathered from a channels-last f16 image (gather_a/_b).
#ifndef CONV
#define CONV 0
#endif
#if IN_BF16
#extension GL_EXT_bfloat16 : require
#define IN_T bfloat16_t
#else
#define IN_T float16_t
#endif

#ifndef TILE_SGM
#define TILE_SGM 2
#endif
#ifndef TILE_SGN
#define TILE_SGN 2
#endif
// Fragments per subgroup along M and N (4 x 4: 64 x 64 per subgroup; 2 x 2
// for the convolutions' small block, c2s).
#ifndef TILE_FM
#define TILE_FM 4
#endif
#ifndef TILE_FN
#define TILE_FN 4
#endif
#define THREADS_DEF (32 * TILE_SGM * TILE_SGN)

const uint SGM = TILE_SGM;  // subgroups along M
const uint SGN = TILE_SGN;  // subgroups along N
const uint FM = TILE_FM;    // fragments per subgroup along M
const uint FN = TILE_FN;    // fragments per subgroup along N
const uint BM = 16u * FM * SGM;
const uint BN = 16u * FN * SGN;
const uint BK = 32u;
const uint THREADS = THREADS_DEF;
// Row strides of the staged tiles in units of 8 halves, padded by 8 halves
// so that the 8 rows a fragment load reads at once fall in distinct banks.
const uint K_STRIDE8 = (BK + 8u) / 8u;     // a tile staged K-dense (rows of M or N)
const uint MN_STRIDE8_A = (BM + 8u) / 8u;  // A staged M-dense (rows of K)
const uint MN_STRIDE8_B = (BN + 8u) / 8u;  // B staged N-dense (rows of K)
// One staging buffer of each operand, in units of 8 halves: the larger of
// its two layouts.
const uint STAGE8_A = max(BM * K_STRIDE8, BK * MN_STRIDE8_A);
const uint STAGE8_B = max(BN * K_STRIDE8, BK * MN_STRIDE8_B);
const uint SLOTS_A = BM * BK / 8u / THREADS;  // 16-byte slots of A per invocation and step
const uint SLOTS_B = BN * BK / 8u / THREADS;
// The prefetch arrays' lengths: glslang 13 gives a function-scope uvec4[2]
// the uniform's uvec4[2] type, with its ArrayStride, which spirv-val
// rejects; a third element, never used, is removed by spirv-opt.
const uint REGS_A = SLOTS_A == 2u ? 3u : SLOTS_A;
const uint REGS_B = SLOTS_B == 2u ? 3u : SLOTS_B;
const uint CS = 20u;  // row stride of a subgroup's staged 16 x 16 f32 fragment
// The epilogue's staging (every subgroup's 16 x 16 f32 fragment) fits in tb.
const uint EPILOGUE8 = SGM * SGN * 16u * CS / 4u;

layout(local_size_x = THREADS_DEF, local_size_y = 1, local_size_z = 1) in;

shared uvec4 ta[STAGES * STAGE8_A];
shared uvec4 tb[max(STAGES * STAGE8_B, EPILOGUE8)];

// The epilogue stages fragments in B's tile once the products are done.
#define EPILOGUE_STAGE tb
#include "gemm_khr_common.glsl"

// Slot s of a staged tile of `rows` (BM or BN) rows of M or N (8 halves
// along the dense dim): its tile coordinates (m or n, k). k_dense: the
// tile's rows run along K (`rows` rows of BK / 8 slots), else along M or N
// (BK rows of rows / 8 slots).
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

// Slot s of the A tile at rows m0.., K from kt; `guarded` (a constant
// where the K loop is included): zero past M or k_end, else the block and
// its K run are whole. base8 and ld8: the batch matrix's offset and the
// stride of A's non-dense dim, in units of 8 halves.
uvec4 load_a(uint s, uint m0, uint kt, uint k_end, uint base8, uint ld8, bool guarded) {
    uvec2 mk = slot_mk(s, A_T == 0, BM);
    uint gm = m0 + mk.x;
    uint gk = kt + mk.y;
    if (guarded && (gm >= p.m || gk >= k_end)) {
        return uvec4(0u);
    }
#if A_T
    return a.v[base8 + gk * ld8 + gm / 8u];
#else
    return a.v[base8 + gm * ld8 + gk / 8u];
#endif
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

#if CONV
// A convolution as this GEMM, one batch dim (the image). K runs (kh, kw,
// c), c fastest, and image n's pixels lie channels-last at channel stride 1
// (pixels p.pix8 and rows p.row8 words of 8 halves apart; the batch base
// from the batch strides, 16-byte aligned: the host requires Cg and every
// stride to be multiples of 8), so each 8-channel slot is one 16-byte load.
// CONV = 1 gathers B (K-dense, B_T = 1), the output channels along M:
//     out[n] (O x OH*OW) = W (O x K) * X[n]^T (OH*OW x K)
// CONV = 2 gathers A (K-dense, A_T = 0), the output channels along N (a
// channels-last output, stored along its rows):
//     out[n] (OH*OW x O) = X[n] (OH*OW x K) * W^T (O x K)
// Output pixel `g`'s top-left input corner (of `pixels`), once per slot:
ivec2 conv_corner(uint g, uint pixels) {
    if (g >= pixels) {
        return ivec2(-0x40000000);  // never in the image: its slots load 0
    }
    uint oh = g / p.out_w;
    uint ow = g - oh * p.out_w;
    return ivec2(int(oh) * p.stride_h - p.pad_h, int(ow) * p.stride_w - p.pad_w);
}

// 8 channels at K `gk` for the pixel whose corner is `corner`, from the
// operand `img` (a or b); zero past k_end and in the padding.
#define GATHER(img, corner, gk, k_end, base8)                                        \
    {                                                                                \
        uint tap = gk / p.cg;                                                        \
        uint c = gk - tap * p.cg;                                                    \
        uint th = tap / p.kw;                                                        \
        int ih = corner.x + int(th) * p.dil_h;                                       \
        int iw = corner.y + int(tap - th * p.kw) * p.dil_w;                          \
        if (gk < k_end && uint(ih) < uint(p.in_h) && uint(iw) < uint(p.in_w)) {      \
            return img.v[int(base8) + ih * p.row8 + iw * p.pix8 + int(c / 8u)];      \
        }                                                                            \
        return uvec4(0u);                                                            \
    }

uvec4 gather_a(uint s, ivec2 corner, uint kt, uint k_end, uint base8) {
    uint gk = kt + slot_mk(s, true, BM).y;
    GATHER(a, corner, gk, k_end, base8)
}

uvec4 gather_b(uint s, ivec2 corner, uint kt, uint k_end, uint base8) {
    uint gk = kt + slot_mk(s, true, BN).y;
    GATHER(b, corner, gk, k_end, base8)
}
#endif

#if CONV == 2
#define LOAD_A(l, kt) gather_a(lid + (l) * THREADS, corner_a[l], kt, k_end, uint(int(a_base8) + image_a[l]))
#else
#define LOAD_A(l, kt) load_a(lid + (l) * THREADS, row0, kt, k_end, a_base8, a_ld8, GUARDED == 1)
#endif
#if CONV == 1
#define LOAD_B(l, kt) gather_b(lid + (l) * THREADS, corner_b[l], kt, k_end, b_base8)
#else
#define LOAD_B(l, kt) load_b(lid + (l) * THREADS, col0, kt, k_end, b_base8, b_ld8, GUARDED == 1)
#endif

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

#if CONV == 1
    ivec2 corner_b[REGS_B];
    [[unroll]] for (uint l = 0u; l < SLOTS_B; l++) {
        corner_b[l] = conv_corner(col0 + slot_mk(lid + l * THREADS, true, BN).x, p.n);
    }
#elif CONV == 2
    // Each slot's pixel, and its image's offset where the images are
    // folded into M (short images fill whole blocks then).
    ivec2 corner_a[REGS_A];
    int image_a[REGS_A];
    uint per_image = p.fold_pixels != 0u ? p.fold_pixels : p.m;
    [[unroll]] for (uint l = 0u; l < SLOTS_A; l++) {
        uint gm = row0 + slot_mk(lid + l * THREADS, true, BM).x;
        uint image = gm < p.m ? gm / per_image : 0u;
        image_a[l] = int(image) * p.img8;
        corner_a[l] = conv_corner(gm < p.m ? gm - image * per_image : per_image, per_image);
    }
#endif
    // Whole blocks (inside M and N, with a K run of whole steps) load
    // without bounds checks: the checks cost 8-20% of the rate on an H200
    // (so does the CUDA twin in bench/ceiling/), so the loop is compiled twice.
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
    // The epilogue variant stores a whole tile of a plain product (alpha 1,
    // beta 0, no bias, unit column stride, rows and offset whole 16-byte
    // words) straight to C as DIRECT does: the edge tiles alone go through
    // workgroup memory. (H200, 4000^3 into f16: 1.18 ms with every tile
    // through workgroup memory, 0.96 with whole tiles direct, 0.58 once the
    // epilogue also staged in tb instead of an array of its own.)
    bool plain = p.alpha == 1.0 && p.beta == 0.0 && p.has_bias == 0u && !epi_any() && p.c_sn == 1 && p.c_sm >= 0 &&
                 p.c_sm % 8 == 0 && c_base % 8 == 0;
    bool whole = row0 + BM <= p.m && col0 + BN <= p.n;
    int res_base = epi_res_base(bz);
    bool regs = epi_registers(c_base, res_base);
    if (!plain && whole && regs) {
        // Straight-line, so that the fragments' operand loads overlap (with
        // a branch per fragment, as below, a residual's made the 1x1
        // convolutions of ResNet-50's 256 -> 1024 layers 1.4x slower).
        [[unroll]] for (uint i = 0u; i < FM; i++) {
            [[unroll]] for (uint j = 0u; j < FN; j++) {
                store_fragment_registers(acc[i * FN + j], c_base, row0 + sub_row + 16u * i,
                                         col0 + sub_col + 16u * j, res_base);
            }
        }
        return;
    }
    if (!plain || !whole) {
        // Every subgroup's last fragment loads are done before the
        // epilogue overwrites tb.
        barrier();
        bool has_beta = p.beta != 0.0;
        if (!regs) {
            // Every fragment through workgroup memory, straight-line (a
            // branch per fragment made ResNet-50's K-split 3x3 layers at 7 x 7
            // 6-9% slower).
            [[unroll]] for (uint i = 0u; i < FM; i++) {
                [[unroll]] for (uint j = 0u; j < FN; j++) {
                    store_fragment(acc[i * FN + j], sg, c_base, row0 + sub_row + 16u * i, col0 + sub_col + 16u * j,
                                   has_beta, res_base);
                }
            }
            return;
        }
        // An edge block's fragments wholly inside C store from registers,
        // those across M's or N's edge through workgroup memory, and those
        // past it nothing (64-column blocks over 24, 32, 96 or 144 output
        // channels: most of their fragments).
        [[unroll]] for (uint i = 0u; i < FM; i++) {
            [[unroll]] for (uint j = 0u; j < FN; j++) {
                uint gm0 = row0 + sub_row + 16u * i;
                uint gn0 = col0 + sub_col + 16u * j;
                if (gm0 >= p.m || gn0 >= p.n) {
                    continue;
                }
                if (gm0 + 16u <= p.m && gn0 + 16u <= p.n) {
                    store_fragment_registers(acc[i * FN + j], c_base, gm0, gn0, res_base);
                } else {
                    store_fragment(acc[i * FN + j], sg, c_base, gm0, gn0, has_beta, res_base);
                }
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
