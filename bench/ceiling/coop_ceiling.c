/* Tensor-core ceiling through Vulkan cooperative matrices (WGSL, lowered by
 * naga to SPV_KHR_cooperative_matrix): runs coop_loop.wgsl for each
 * (subgroups per workgroup, mode, workgroups per SM) and prints TFLOP/s.
 *   coop_ceiling coop_loop.wgsl SMS
 * Every run is checked (each accumulator must equal 16 * iters) before it
 * is timed with GPU timestamps; the median of 7 runs is reported. */
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

static char *variant(const char *src, int sg, int mode) {
    const char *mark = strstr(src, "// @CONSTS");
    if (!mark) { fprintf(stderr, "no // @CONSTS marker\n"); exit(1); }
    size_t head = (size_t)(mark - src);
    char consts[128];
    snprintf(consts, sizeof consts, "const SG: u32 = %du;\nconst MODE: u32 = %du;\n", sg, mode);
    char *out = malloc(strlen(src) + sizeof consts);
    memcpy(out, src, head);
    strcpy(out + head, consts);
    strcat(out, mark);
    return out;
}

int main(int argc, char **argv) {
    if (argc < 3) { fprintf(stderr, "usage: coop_ceiling coop_loop.wgsl SMS\n"); return 2; }
    char *src = slurp(argv[1]);
    int sms = atoi(argv[2]);
    const uint32_t iters = 4096;
    WgcInstance *inst; WgcDevice *dev; WgcStream *st;
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &inst));
    CHECK(wgc_device_create(inst, NULL, &dev));
    CHECK(wgc_stream_create(dev, &st));
    uint16_t ones[4096];
    for (int i = 0; i < 4096; i++) ones[i] = to_half(1.0f);
    size_t max_groups = (size_t)sms * 16 * 8;
    size_t dst_elems = max_groups * 4096;
    WgcBuffer *a, *c;
    CHECK(wgc_buffer_create(dev, sizeof ones, WGC_BUFFER_USAGE_STORAGE, &a));
    CHECK(wgc_buffer_create(dev, dst_elems * 4, WGC_BUFFER_USAGE_STORAGE, &c));
    CHECK(wgc_buffer_write(a, 0, ones, sizeof ones));
    float *out = malloc(dst_elems * 4);
    static const char *mode_name[5] = {"registers", "workgroup", "storage", "staged_f16", "barrier"};
    printf("{\"probe\":\"coop_ceiling\",\"iters\":%u,\"sms\":%d}\n", iters, sms);
    for (int mode = 0; mode < 5; mode++) {
        for (int sg = 1; sg <= 8; sg *= 2) {
            WgcKernelDesc d = {0};
            char *text = variant(src, sg, mode);
            d.struct_size = sizeof d; d.source = text; d.entry_point = "coop_loop"; d.skip_bounds_checks = 1;
            WgcKernel *k;
            WgcStatus ks = wgc_kernel_create(dev, &d, &k);
            free(text);
            if (ks != WGC_OK) {
                printf("{\"mode\":\"%s\",\"sg\":%d,\"error\":\"%s\"}\n", mode_name[mode], sg, wgc_status_string(ks));
                fprintf(stderr, "%.400s\n", wgc_last_error_message());
                continue;
            }
            for (int per_sm = 1; per_sm <= 16; per_sm *= 2) {
                uint32_t groups = (uint32_t)(sms * per_sm);
                if ((size_t)groups * sg > max_groups) continue;
                uint32_t params[4] = {iters, 0, 0, 0};
                WgcBinding bind[3] = {{0, a, 0, 0}, {1, c, 0, 0}, {2, NULL, 0, 0}};
                WgcLaunch l = {0};
                l.struct_size = sizeof l; l.bindings = bind; l.binding_count = 2;
                l.params = params; l.params_size = sizeof params;
                l.workgroups[0] = groups; l.workgroups[1] = 1; l.workgroups[2] = 1;
                size_t n = (size_t)groups * sg * 4096;
                CHECK(wgc_stream_fill_buffer(st, c, 0, n * 4, 0x7fc00000u));
                CHECK(wgc_stream_launch(st, k, &l));
                CHECK(wgc_buffer_read(c, 0, out, n * 4));
                size_t bad = 0;
                for (size_t i = 0; i < n; i++) bad += out[i] != 16.0f * iters;
                double ms[7];
                for (int rep = 0; rep < 7; rep++) {
                    WgcEvent *e0, *e1;
                    CHECK(wgc_stream_record_event(st, &e0));
                    CHECK(wgc_stream_launch(st, k, &l));
                    CHECK(wgc_stream_record_event(st, &e1));
                    CHECK(wgc_event_elapsed_ms(e0, e1, &ms[rep]));
                    wgc_event_release(e0); wgc_event_release(e1);
                }
                qsort(ms, 7, sizeof(double), cmp_double);
                double flop = (double)groups * sg * iters * 16.0 * 2 * 16 * 16 * 16;
                printf("{\"mode\":\"%s\",\"sg\":%d,\"groups_per_sm\":%d,\"ms\":%.4f,\"tflops\":%.1f,\"check\":\"%s\"}\n",
                       mode_name[mode], sg, per_sm, ms[3], flop / (ms[3] * 1e9), bad ? "WRONG" : "ok");
                fflush(stdout);
            }
            wgc_kernel_release(k);
        }
    }
    free(out);
    wgc_buffer_release(a); wgc_buffer_release(c);
    wgc_stream_release(st); wgc_device_release(dev); wgc_instance_release(inst);
    return 0;
}
