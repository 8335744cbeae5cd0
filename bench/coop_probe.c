/* Times cooperative-matrix GEMM tile variants through the user-kernel API:
 *   coop_probe N file.wgsl FM FN SGM SGN [file FM FN SGM SGN ...]
 * Each variant is checked on sampled entries of an N x N x N f16 product
 * (f32 accumulation) before it is timed with GPU timestamps. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"


static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(1); }
    fseek(f, 0, SEEK_END); long n = ftell(f); fseek(f, 0, SEEK_SET);
    char *s = malloc(n + 1); if (fread(s, 1, n, f) != (size_t)n) exit(1); s[n] = 0; fclose(f);
    return s;
}

int main(int argc, char **argv) {
    if (argc < 7) { fprintf(stderr, "usage: coop_probe N file FM FN SGM SGN ...\n"); return 2; }
    uint32_t n = (uint32_t)atoi(argv[1]);
    WgcInstance *inst; WgcDevice *dev; WgcStream *st;
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &inst));
    CHECK(wgc_device_create(inst, NULL, &dev));
    CHECK(wgc_stream_create(dev, &st));
    size_t nn = (size_t)n * n;
    float *fa = malloc(nn * 4), *fb = malloc(nn * 4), *fc = malloc(nn * 4);
    uint16_t *ha = malloc(nn * 2), *hb = malloc(nn * 2);
    uint64_t r = 88172645463325252ull;
    for (size_t i = 0; i < nn; i++) {
        r ^= r << 13; r ^= r >> 7; r ^= r << 17; ha[i] = to_half((float)((r >> 11) * (1.0 / 9007199254740992.0)) * 2 - 1); fa[i] = from_half(ha[i]);
        r ^= r << 13; r ^= r >> 7; r ^= r << 17; hb[i] = to_half((float)((r >> 11) * (1.0 / 9007199254740992.0)) * 2 - 1); fb[i] = from_half(hb[i]);
    }
    WgcBuffer *a, *b, *c;
    CHECK(wgc_buffer_create(dev, nn * 2, WGC_BUFFER_USAGE_STORAGE, &a));
    CHECK(wgc_buffer_create(dev, nn * 2, WGC_BUFFER_USAGE_STORAGE, &b));
    CHECK(wgc_buffer_create(dev, nn * 4, WGC_BUFFER_USAGE_STORAGE, &c));
    CHECK(wgc_buffer_write(a, 0, ha, nn * 2));
    CHECK(wgc_buffer_write(b, 0, hb, nn * 2));
    for (int v = 2; v + 4 < argc; v += 5) {
        int fm = atoi(argv[v + 1]), fn_ = atoi(argv[v + 2]), sgm = atoi(argv[v + 3]), sgn = atoi(argv[v + 4]);
        WgcKernelDesc d = {0};
        d.struct_size = sizeof d; d.source = slurp(argv[v]); d.entry_point = "gemm_coop_f16"; d.skip_bounds_checks = 1;
        WgcKernel *k;
        WgcStatus ks = wgc_kernel_create(dev, &d, &k);
        if (ks != WGC_OK) {
            printf("coop %s: %s: %.200s\n", argv[v], wgc_status_string(ks), wgc_last_error_message());
            continue;
        }
        uint32_t params[9] = {n, n, n, 0, 0, 0, 0, 0, 0};
        WgcBinding bind[3] = {{0, a, 0, 0}, {1, b, 0, 0}, {2, c, 0, 0}};
        WgcLaunch l = {0};
        l.struct_size = sizeof l; l.bindings = bind; l.binding_count = 3; l.params = params; l.params_size = sizeof params;
        l.workgroups[0] = n / (16 * fn_ * sgn); l.workgroups[1] = n / (16 * fm * sgm); l.workgroups[2] = 1;
        CHECK(wgc_stream_fill_buffer(st, c, 0, nn * 4, 0x7fc00000u)); /* poison with NaN */
        CHECK(wgc_stream_launch(st, k, &l));
        CHECK(wgc_buffer_read(c, 0, fc, nn * 4));
        int bad = 0;
        for (int s = 0; s < 64; s++) {
            size_t i = (size_t)(s * 2654435761u) % n, j = (size_t)(s * 40503u + 17) % n;
            double ref = 0, mag = 0;
            for (size_t q = 0; q < n; q++) { double p = (double)fa[i * n + q] * fb[q * n + j]; ref += p; mag += fabs(p); }
            if (!(fabs(fc[i * n + j] - ref) <= 1e-5 * mag + 1e-5)) bad++;
        }
        double ms[10];
        for (int rep = 0; rep < 10; rep++) {
            WgcEvent *e0, *e1;
            CHECK(wgc_stream_record_event(st, &e0));
            CHECK(wgc_stream_launch(st, k, &l));
            CHECK(wgc_stream_record_event(st, &e1));
            CHECK(wgc_event_elapsed_ms(e0, e1, &ms[rep]));
            wgc_event_release(e0); wgc_event_release(e1);
        }
        qsort(ms, 10, sizeof(double), cmp_double);
        printf("%s n=%u: %.3f ms, %.1f TFLOP/s, check %s\n", argv[v], n, ms[5],
               2.0 * n * n * n / (ms[5] * 1e9), bad ? "WRONG" : "ok");
        wgc_kernel_release(k);
    }
    wgc_buffer_release(a); wgc_buffer_release(b); wgc_buffer_release(c);
    wgc_stream_release(st); wgc_device_release(dev); wgc_instance_release(inst);
    return 0;
}
