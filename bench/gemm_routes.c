/* Prints the route wgc_op_gemm_explain gives for the benchmark's GEMM
 * shapes on this machine's first adapter (no work is recorded):
 *   gemm_routes            every shape below
 * Build like wgc_bench: cc -O2 -std=c99 -Iinclude bench/gemm_routes.c
 * -Ltarget/release -lwgcompute -o gemm_routes */
#include <stdio.h>
#include <stdlib.h>
#include <wgcompute.h>

typedef struct {
    const char *name;
    WgcDtype in, out;
    int64_t batch, m, n, k;
    int b_t; /* B given as (N, K), transposed by the flag */
} Shape;

#define F32 WGC_DTYPE_F32
#define F16 WGC_DTYPE_F16
#define BF16 WGC_DTYPE_BF16

static const Shape SHAPES[] = {
    {"sgemm 4096^3", F32, F32, 1, 4096, 4096, 4096, 0},
    {"f16->f32 4096^3", F16, F32, 1, 4096, 4096, 4096, 0},
    {"bf16 4096^3", BF16, BF16, 1, 4096, 4096, 4096, 0},
    {"bmm f32 512x128^3", F32, F32, 512, 128, 128, 128, 0},
    {"prefill up f16->f32 kn", F16, F32, 1, 4096, 14336, 4096, 0},
    {"prefill up f16 nk", F16, F16, 1, 4096, 14336, 4096, 1},
    {"prefill down bf16->f32 kn", BF16, F32, 1, 2048, 4096, 14336, 0},
    {"decode f16 m1 kn", F16, F16, 1, 1, 14336, 4096, 0},
    {"decode f16 m2 kn", F16, F16, 1, 2, 14336, 4096, 0},
    {"decode f16 m8 kn", F16, F16, 1, 8, 14336, 4096, 0},
    {"decode f16 m16 nk", F16, F16, 1, 16, 4096, 14336, 1},
    {"decode f16 m32 nk", F16, F16, 1, 32, 4096, 14336, 1},
    {"decode f32 m1 nk", F32, F32, 1, 1, 14336, 4096, 1},
    {"decode f32 m16 kn", F32, F32, 1, 16, 14336, 4096, 0},
    {"decode f32 m32 kn", F32, F32, 1, 32, 4096, 14336, 0},
    {"decode bf16 m1 nk", BF16, BF16, 1, 1, 14336, 4096, 1},
    {"decode bf16 m16 kn", BF16, BF16, 1, 16, 4096, 14336, 0},
    {"odd f16 4095x4097x1023", F16, F16, 1, 4095, 4097, 1023, 0},
    {"odd f16 4000^3", F16, F16, 1, 4000, 4000, 4000, 0},
    {"odd f16 4096x4096x4080", F16, F16, 1, 4096, 4096, 4080, 0},
    {"odd f32 3000x50x5000", F32, F32, 1, 3000, 50, 5000, 0},
    {"few tiles f32 512x512x8192", F32, F32, 1, 512, 512, 8192, 0},
    {"few tiles f16 1024x1024x4096", F16, F16, 1, 1024, 1024, 4096, 0},
    {"qk f16->f32 8x2048x2048x128 nk", F16, F32, 8, 2048, 2048, 128, 1},
};

static size_t dsize(WgcDtype d) { return d == F32 ? 4 : 2; }

int main(void) {
    WgcInstance *inst = NULL;
    WgcDevice *dev = NULL;
    WgcStream *s = NULL;
    if (wgc_instance_create(WGC_ABI_VERSION, &inst) || wgc_device_create(inst, NULL, &dev) ||
        wgc_stream_create(dev, &s)) {
        fprintf(stderr, "no device: %s\n", wgc_last_error_message());
        return 1;
    }
    const size_t bytes = (size_t)256 << 20;
    WgcBuffer *buf[3];
    for (int i = 0; i < 3; i++) {
        if (wgc_buffer_create(dev, bytes, WGC_BUFFER_USAGE_STORAGE, &buf[i])) {
            fprintf(stderr, "buffer: %s\n", wgc_last_error_message());
            return 1;
        }
    }
    int failures = 0;
    for (size_t i = 0; i < sizeof SHAPES / sizeof SHAPES[0]; i++) {
        const Shape *x = &SHAPES[i];
        int64_t sa[3] = {x->batch, x->m, x->k}, sc[3] = {x->batch, x->m, x->n};
        int64_t sb[3] = {x->batch, x->b_t ? x->n : x->k, x->b_t ? x->k : x->n};
        uint32_t r = x->batch > 1 ? 3 : 2, o = x->batch > 1 ? 0 : 1;
        WgcTensor a, b, c;
        if ((size_t)(x->batch * x->m * x->k) * dsize(x->in) > bytes ||
            (size_t)(x->batch * x->n * x->k) * dsize(x->in) > bytes ||
            (size_t)(x->batch * x->m * x->n) * dsize(x->out) > bytes) {
            printf("%-32s (larger than the probe's buffers)\n", x->name);
            continue;
        }
        wgc_tensor_contiguous(buf[0], x->in, r, sa + o, &a);
        wgc_tensor_contiguous(buf[1], x->in, r, sb + o, &b);
        wgc_tensor_contiguous(buf[2], x->out, r, sc + o, &c);
        char line[1024];
        size_t len = 0;
        WgcStatus st = wgc_op_gemm_explain(s, 1.0f, &a, 0, &b, (uint32_t)x->b_t, 0.0f, &c, line, sizeof line, &len);
        if (st != WGC_OK) {
            printf("%-32s %s: %s\n", x->name, wgc_status_string(st), wgc_last_error_message());
            failures++;
        } else {
            printf("%-32s %s\n", x->name, line);
        }
    }
    for (int i = 0; i < 3; i++) wgc_buffer_release(buf[i]);
    wgc_stream_release(s);
    wgc_device_release(dev);
    wgc_instance_release(inst);
    return failures != 0;
}
