// The CUDA twin of the library's wide-block GEMM (shaders/spirv/gemm_khr_wide.comp):
// the same algorithm written with mma.sync and ldmatrix, to separate what
// the algorithm reaches on this GPU from what the Vulkan driver makes of it.
//
//   C (M x N, f32) = A (M x K, row-major f16) * B^T, B (N x K) row-major f16
//
// Blocks of BM x BN of WM x WN warps, K steps of BK, grouped block order (8
// rows of blocks sweep N together), tiles staged in shared memory with rows
// padded by 8 halves, fragments read with ldmatrix. Two ways to stage:
// - "registers": what Vulkan can express. Each thread loads its 16-byte
//   pieces of the next step's tiles into registers a step ahead and stores
//   them to the one staging buffer between two barriers (the library's
//   kernel, instruction for instruction).
// - "cp.async": Ampere's asynchronous copy global -> shared over STAGES
//   buffers, which no Vulkan extension exposes. Hopper's TMA and wgmma are
//   further still.
// Every product is checked (64 sampled entries against a double-precision
// dot product) before it is timed (median of 7 runs of 5 products).
//   nvcc -O3 -arch=sm_90 -o staged_gemm staged_gemm.cu && ./staged_gemm
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_fp16.h>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], const void *p) {
    uint32_t s = (uint32_t)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(s));
}

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem) {
    uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(s), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" :: "n"(N)); }

template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, bool ASYNC_, bool GUARD_ = true, int MINB_ = 1>
struct Cfg {
    static constexpr int MINB = MINB_;  // blocks per SM the registers are capped for
    static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = STAGES_;
    static constexpr bool ASYNC = ASYNC_;
    // Register staging: each load checked against M (N) and K as the library's is.
    static constexpr bool GUARD = GUARD_;
    static constexpr int THREADS = WM * WN * 32;
    static constexpr int LD = BK + 8;                 // padded row, in halves
    static constexpr int MT = BM / WM / 16;           // 16-row tiles per warp
    static constexpr int NT = BN / WN / 8;            // 8-column tiles per warp
    static constexpr int CA = BM * BK / 8 / THREADS;  // 16-byte pieces per thread and step
    static constexpr int CB = BN * BK / 8 / THREADS;
    static constexpr int STAGE = (BM + BN) * LD;      // halves per staging buffer
    static constexpr size_t SMEM = (size_t)STAGES * STAGE * 2;
};

// Piece c of a BM (or BN) x BK tile: its row and first column.
template <class C> __device__ __forceinline__ int piece_row(int c) { return c / (C::BK / 8); }
template <class C> __device__ __forceinline__ int piece_col(int c) { return (c % (C::BK / 8)) * 8; }

template <class C>
__device__ __forceinline__ void multiply(const half *as, const half *bs, float (&acc)[C::MT][C::NT][4], int wm0, int wn0, int lane) {
#pragma unroll
    for (int kk = 0; kk < C::BK; kk += 16) {
        uint32_t af[C::MT][4], bf[C::NT / 2][4];
#pragma unroll
        for (int i = 0; i < C::MT; i++)
            ldsm_x4(af[i], as + (wm0 + i * 16 + (lane & 15)) * C::LD + kk + (lane >> 4) * 8);
#pragma unroll
        for (int j = 0; j < C::NT / 2; j++)
            ldsm_x4(bf[j], bs + (wn0 + j * 16 + (lane & 7) + (lane >> 4) * 8) * C::LD + kk + ((lane >> 3) & 1) * 8);
#pragma unroll
        for (int i = 0; i < C::MT; i++)
#pragma unroll
            for (int j = 0; j < C::NT; j++) mma(acc[i][j], af[i], bf[j / 2][(j & 1) * 2], bf[j / 2][(j & 1) * 2 + 1]);
    }
}

template <class C>
__global__ void __launch_bounds__(C::THREADS, C::MINB) gemm(const half *A, const half *B, float *Cm, int M, int N, int K) {
    extern __shared__ __align__(16) half smem[];
    int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
    // Grouped block order, as the library's kernel numbers its workgroups.
    int gx = gridDim.x, gy = gridDim.y, pid = blockIdx.y * gx + blockIdx.x;
    int per_group = 8 * gx, first = (pid / per_group) * 8, rows = min(gy - first, 8), in_group = pid % per_group;
    int row0 = (first + in_group % rows) * C::BM, col0 = (in_group / rows) * C::BN;
    int wm0 = (warp / C::WN) * (C::BM / C::WM), wn0 = (warp % C::WN) * (C::BN / C::WN);
    const half *a = A + (size_t)row0 * K, *b = B + (size_t)col0 * K;
    float acc[C::MT][C::NT][4];
#pragma unroll
    for (int i = 0; i < C::MT; i++)
#pragma unroll
        for (int j = 0; j < C::NT; j++)
#pragma unroll
            for (int r = 0; r < 4; r++) acc[i][j][r] = 0.f;
    int steps = K / C::BK;
    if constexpr (C::ASYNC) {
        auto issue = [&](int t) {
            half *as = smem + (t % C::STAGES) * C::STAGE, *bs = as + C::BM * C::LD;
#pragma unroll
            for (int l = 0; l < C::CA; l++) {
                int c = tid + l * C::THREADS, r = piece_row<C>(c), k = piece_col<C>(c);
                cp_async16(as + r * C::LD + k, a + (size_t)r * K + t * C::BK + k);
            }
#pragma unroll
            for (int l = 0; l < C::CB; l++) {
                int c = tid + l * C::THREADS, r = piece_row<C>(c), k = piece_col<C>(c);
                cp_async16(bs + r * C::LD + k, b + (size_t)r * K + t * C::BK + k);
            }
        };
#pragma unroll
        for (int s = 0; s < C::STAGES - 1; s++) {
            if (s < steps) issue(s);
            cp_async_commit();
        }
        for (int t = 0; t < steps; t++) {
            cp_async_wait<C::STAGES - 2>();
            __syncthreads();
            if (t + C::STAGES - 1 < steps) issue(t + C::STAGES - 1);
            cp_async_commit();
            const half *as = smem + (t % C::STAGES) * C::STAGE;
            multiply<C>(as, as + C::BM * C::LD, acc, wm0, wn0, lane);
        }
    } else {
        half *as = smem, *bs = smem + C::BM * C::LD;
        uint4 ra[C::CA], rb[C::CB];
        auto load = [&](int t) {
#pragma unroll
            for (int l = 0; l < C::CA; l++) {
                int c = tid + l * C::THREADS, r = piece_row<C>(c), k = t * C::BK + piece_col<C>(c);
                bool in = !C::GUARD || (row0 + r < M && k < K);
                ra[l] = in ? *(const uint4 *)(a + (size_t)r * K + k) : make_uint4(0, 0, 0, 0);
            }
#pragma unroll
            for (int l = 0; l < C::CB; l++) {
                int c = tid + l * C::THREADS, r = piece_row<C>(c), k = t * C::BK + piece_col<C>(c);
                bool in = !C::GUARD || (col0 + r < N && k < K);
                rb[l] = in ? *(const uint4 *)(b + (size_t)r * K + k) : make_uint4(0, 0, 0, 0);
            }
        };
        auto store = [&](int buf) {
            half *sa = smem + buf * C::STAGE, *sb = sa + C::BM * C::LD;
#pragma unroll
            for (int l = 0; l < C::CA; l++) {
                int c = tid + l * C::THREADS;
                *(uint4 *)(sa + piece_row<C>(c) * C::LD + piece_col<C>(c)) = ra[l];
            }
#pragma unroll
            for (int l = 0; l < C::CB; l++) {
                int c = tid + l * C::THREADS;
                *(uint4 *)(sb + piece_row<C>(c) * C::LD + piece_col<C>(c)) = rb[l];
            }
        };
        load(0);
        if constexpr (C::STAGES == 2) {
            // Two buffers, one barrier a step: store step t + 1's tiles
            // into the buffer step t - 1 read, fetch t + 2's, multiply t's.
            store(0);
            if (1 < steps) load(1);
            __syncthreads();
            for (int t = 0; t < steps; t++) {
                if (t + 1 < steps) {
                    store((t + 1) & 1);
                    if (t + 2 < steps) load(t + 2);
                }
                half *sa = smem + (t & 1) * C::STAGE;
                multiply<C>(sa, sa + C::BM * C::LD, acc, wm0, wn0, lane);
                __syncthreads();
            }
        } else {
            for (int t = 0; t < steps; t++) {
                __syncthreads();
                store(0);
                __syncthreads();
                if (t + 1 < steps) load(t + 1);
                multiply<C>(as, bs, acc, wm0, wn0, lane);
            }
        }
    }
    int g = lane >> 2, q = (lane & 3) * 2;
#pragma unroll
    for (int i = 0; i < C::MT; i++)
#pragma unroll
        for (int j = 0; j < C::NT; j++) {
            size_t r = row0 + wm0 + i * 16 + g, c = col0 + wn0 + j * 8 + q;
            *(float2 *)(Cm + r * N + c) = make_float2(acc[i][j][0], acc[i][j][1]);
            *(float2 *)(Cm + (r + 8) * N + c) = make_float2(acc[i][j][2], acc[i][j][3]);
        }
}

template <class C>
void run(const char *name, const half *A, const half *B, float *Cm, const std::vector<half> &ha, const std::vector<half> &hb,
         int M, int N, int K) {
    cudaFuncAttributes attr;
    CK(cudaFuncGetAttributes(&attr, gemm<C>));
    CK(cudaFuncSetAttribute(gemm<C>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)C::SMEM));
    dim3 grid(N / C::BN, M / C::BM);
    CK(cudaMemset(Cm, 0xff, (size_t)M * N * 4));
    gemm<C><<<grid, C::THREADS, C::SMEM>>>(A, B, Cm, M, N, K);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    int bad = 0;
    for (int s = 0; s < 64; s++) {
        int i = (int)((s * 2654435761u) % M), j = (int)((s * 40503u + 7) % N);
        double ref = 0, mag = 0;
        for (int k = 0; k < K; k++) {
            double x = __half2float(ha[(size_t)i * K + k]) * (double)__half2float(hb[(size_t)j * K + k]);
            ref += x, mag += fabs(x);
        }
        float got;
        CK(cudaMemcpy(&got, Cm + (size_t)i * N + j, 4, cudaMemcpyDeviceToHost));
        if (!(fabs(got - ref) <= 1e-3 * mag + 1e-3)) bad++;
    }
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
    float ms[7];
    for (int rep = 0; rep < 7; rep++) {
        CK(cudaEventRecord(e0));
        for (int r = 0; r < 5; r++) gemm<C><<<grid, C::THREADS, C::SMEM>>>(A, B, Cm, M, N, K);
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        CK(cudaEventElapsedTime(&ms[rep], e0, e1));
        ms[rep] /= 5;
    }
    std::sort(ms, ms + 7);
    printf("{\"probe\":\"staged_gemm\",\"kernel\":\"%s\",\"shape\":\"%dx%dx%d\",\"block\":\"%dx%dx%d\",\"warps\":%d,\"stages\":%d,"
           "\"staging\":\"%s\",\"regs\":%d,\"local_bytes\":%d,\"ms\":%.4f,\"tflops\":%.1f,\"check\":\"%s\"}\n",
           name, M, N, K, C::BM, C::BN, C::BK, C::WM * C::WN, C::STAGES, C::ASYNC ? "cp.async" : "registers", attr.numRegs,
           (int)attr.localSizeBytes, ms[3], 2.0 * M * N * K / (ms[3] * 1e9), bad ? "WRONG" : "ok");
    fflush(stdout);
    cudaEventDestroy(e0); cudaEventDestroy(e1);
}

int main() {
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("{\"gpu\":\"%s\",\"sms\":%d}\n", prop.name, prop.multiProcessorCount);
    const int shapes[][3] = {{8192, 8192, 8192}, {4096, 4096, 4096}, {2048, 4096, 4096}, {2048, 11264, 4096}};
    size_t max_a = 0, max_b = 0, max_c = 0;
    for (auto &s : shapes) {
        max_a = std::max(max_a, (size_t)s[0] * s[2]);
        max_b = std::max(max_b, (size_t)s[1] * s[2]);
        max_c = std::max(max_c, (size_t)s[0] * s[1]);
    }
    std::vector<half> ha(max_a), hb(max_b);
    uint32_t x = 12345;
    auto rnd = [&]() { x = x * 1664525u + 1013904223u; return ((x >> 8) & 0xffff) / 32768.0f - 1.0f; };
    for (auto &v : ha) v = __float2half(rnd());
    for (auto &v : hb) v = __float2half(rnd());
    half *A, *B;
    float *Cm;
    CK(cudaMalloc(&A, max_a * 2)); CK(cudaMalloc(&B, max_b * 2)); CK(cudaMalloc(&Cm, max_c * 4));
    for (auto &s : shapes) {
        int M = s[0], N = s[1], K = s[2];
        // Each shape's A and B are the first M x K and N x K of the same data.
        CK(cudaMemcpy(A, ha.data(), (size_t)M * K * 2, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(B, hb.data(), (size_t)N * K * 2, cudaMemcpyHostToDevice));
        run<Cfg<128, 128, 64, 2, 4, 1, false>>("library_twin", A, B, Cm, ha, hb, M, N, K);
        run<Cfg<128, 128, 64, 2, 4, 1, false, false>>("registers_unguarded", A, B, Cm, ha, hb, M, N, K);
        run<Cfg<128, 128, 64, 2, 4, 2, false, false>>("registers_unguarded_2buf", A, B, Cm, ha, hb, M, N, K);
        run<Cfg<128, 128, 128, 2, 4, 1, false, false>>("registers_unguarded_k128", A, B, Cm, ha, hb, M, N, K);
        run<Cfg<128, 256, 64, 2, 4, 1, false, false>>("registers_unguarded_128x256", A, B, Cm, ha, hb, M, N, K);
        run<Cfg<128, 128, 32, 2, 4, 1, false, false, 2>>("registers_unguarded_k32_2blocks", A, B, Cm, ha, hb, M, N, K);
        run<Cfg<256, 128, 32, 4, 2, 1, false>>("registers_256", A, B, Cm, ha, hb, M, N, K);
        run<Cfg<128, 128, 64, 2, 4, 3, true>>("async_128", A, B, Cm, ha, hb, M, N, K);
        run<Cfg<128, 128, 64, 2, 4, 4, true>>("async_128_4stages", A, B, Cm, ha, hb, M, N, K);
        run<Cfg<128, 256, 64, 2, 4, 3, true>>("async_128x256", A, B, Cm, ha, hb, M, N, K);
        run<Cfg<128, 128, 32, 2, 4, 4, true>>("async_128_k32", A, B, Cm, ha, hb, M, N, K);
        run<Cfg<256, 128, 32, 4, 2, 4, true>>("async_256", A, B, Cm, ha, hb, M, N, K);
    }
    return 0;
}
