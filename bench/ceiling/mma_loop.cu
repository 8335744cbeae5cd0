// The CUDA twin of coop_loop.wgsl: Hopper's warp-level tensor-core MMA
// (mma.sync m16n8k16, what Vulkan cooperative matrices can map to), every
// warp keeping a 64 x 64 f32 accumulator block (4 x 8 tiles of 16x8) and
// multiplying f16 (or bf16) fragments `iters` times. MODE as in the WGSL:
// 0 registers only, 1 fragments reloaded from shared memory with ldmatrix
// every iteration, 2 reloaded from global memory (cache resident).
// Inputs are all ones, so every accumulator ends at 16 * iters (checked).
//   nvcc -O3 -arch=sm_90 -o mma_loop mma_loop.cu && ./mma_loop
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <cuda_fp16.h>
#include <cuda_bf16.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

template <bool BF16>
__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    if (BF16) {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    } else {
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
    }
}

__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const void *p) {
    uint32_t s = (uint32_t)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(s));
}

__device__ __forceinline__ void ldsm_x2(uint32_t (&r)[2], const void *p) {
    uint32_t s = (uint32_t)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n" : "=r"(r[0]), "=r"(r[1]) : "r"(s));
}

// src: 4096 16-bit values (two halves of 2048: A tiles then B tiles).
template <bool BF16, int MODE>
__global__ void mma_loop(const uint32_t *src, float *dst, int iters) {
    __shared__ __align__(16) uint16_t tile[4096];
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (MODE == 1) {
        for (int i = threadIdx.x; i < 2048; i += blockDim.x) ((uint32_t *)tile)[i] = src[i];
        __syncthreads();
    }
    uint32_t a[4][4], b[8][2];
    float c[4][8][4];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int r = 0; r < 4; r++) a[i][r] = src[i * 128 + r * 32 + lane];
#pragma unroll
    for (int j = 0; j < 8; j++)
#pragma unroll
        for (int r = 0; r < 2; r++) b[j][r] = src[512 + j * 64 + r * 32 + lane];
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 8; j++)
#pragma unroll
            for (int r = 0; r < 4; r++) c[i][j][r] = 0.f;
    for (int it = 0; it < iters; it++) {
        int h = (it & 1) * 2048;
        if (MODE == 1) {
#pragma unroll
            for (int i = 0; i < 4; i++) ldsm_x4(a[i], &tile[h / 2 + i * 256 + (lane & 15) * 16 + (lane >> 4) * 8]);
#pragma unroll
            for (int j = 0; j < 8; j++) ldsm_x2(b[j], &tile[h / 2 + 1024 + j * 128 + (lane & 15) * 8]);
        } else if (MODE == 2) {
            const uint32_t *s = src + h / 2;
#pragma unroll
            for (int i = 0; i < 4; i++)
#pragma unroll
                for (int r = 0; r < 4; r++) a[i][r] = __ldg(&s[i * 128 + r * 32 + lane]);
#pragma unroll
            for (int j = 0; j < 8; j++)
#pragma unroll
                for (int r = 0; r < 2; r++) b[j][r] = __ldg(&s[512 + j * 64 + r * 32 + lane]);
        }
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int j = 0; j < 8; j++) mma<BF16>(c[i][j], a[i], b[j]);
    }
    size_t base = ((size_t)blockIdx.x * (blockDim.x >> 5) + warp) * 4096;
#pragma unroll
    for (int i = 0; i < 4; i++)
#pragma unroll
        for (int j = 0; j < 8; j++)
#pragma unroll
            for (int r = 0; r < 4; r++) dst[base + (i * 8 + j) * 128 + r * 32 + lane] = c[i][j][r];
}

template <bool BF16, int MODE>
void run(const uint32_t *src, float *dst, int sms, int iters, std::vector<float> &host) {
    const char *modes[3] = {"registers", "shared", "global"};
    for (int warps = 1; warps <= 8; warps *= 2) {
        for (int per_sm = 1; per_sm <= 16; per_sm *= 2) {
            int blocks = sms * per_sm;
            if ((size_t)blocks * warps * 4096 > host.size()) continue;
            size_t n = (size_t)blocks * warps * 4096;
            CK(cudaMemset(dst, 0xff, n * 4));
            mma_loop<BF16, MODE><<<blocks, warps * 32>>>(src, dst, iters);
            CK(cudaGetLastError());
            CK(cudaMemcpy(host.data(), dst, n * 4, cudaMemcpyDeviceToHost));
            size_t bad = 0;
            for (size_t i = 0; i < n; i++) bad += host[i] != 16.0f * iters;
            cudaEvent_t e0, e1;
            CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
            float ms[7];
            for (int rep = 0; rep < 7; rep++) {
                CK(cudaEventRecord(e0));
                mma_loop<BF16, MODE><<<blocks, warps * 32>>>(src, dst, iters);
                CK(cudaEventRecord(e1));
                CK(cudaEventSynchronize(e1));
                CK(cudaEventElapsedTime(&ms[rep], e0, e1));
            }
            std::sort(ms, ms + 7);
            double flop = (double)blocks * warps * iters * 32.0 * 2 * 16 * 8 * 16;
            printf("{\"probe\":\"mma_sync\",\"dtype\":\"%s\",\"mode\":\"%s\",\"warps\":%d,\"blocks_per_sm\":%d,\"ms\":%.4f,\"tflops\":%.1f,\"check\":\"%s\"}\n",
                   BF16 ? "bf16" : "f16", modes[MODE], warps, per_sm, ms[3], flop / (ms[3] * 1e9), bad ? "WRONG" : "ok");
            fflush(stdout);
            cudaEventDestroy(e0); cudaEventDestroy(e1);
        }
    }
}

int main() {
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    int sms = prop.multiProcessorCount, iters = 4096;
    printf("{\"gpu\":\"%s\",\"sms\":%d,\"iters\":%d}\n", prop.name, sms, iters);
    std::vector<uint32_t> ones_h(2048, 0x3c003c00u), ones_b(2048, 0x3f803f80u);
    uint32_t *src_h, *src_b;
    float *dst;
    size_t max_elems = (size_t)sms * 16 * 8 * 4096;
    CK(cudaMalloc(&src_h, 8192)); CK(cudaMalloc(&src_b, 8192)); CK(cudaMalloc(&dst, max_elems * 4));
    CK(cudaMemcpy(src_h, ones_h.data(), 8192, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(src_b, ones_b.data(), 8192, cudaMemcpyHostToDevice));
    std::vector<float> host(max_elems);
    run<false, 0>(src_h, dst, sms, iters, host);
    run<false, 1>(src_h, dst, sms, iters, host);
    run<false, 2>(src_h, dst, sms, iters, host);
    run<true, 0>(src_b, dst, sms, iters, host);
    return 0;
}
