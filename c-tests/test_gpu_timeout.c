/* With WgcDeviceOptions.gpu_timeout_ms set, calls that wait for a long
 * kernel return WGC_ERROR_TIMEOUT instead of blocking, leave their outputs
 * alone, and the device stays usable: once the kernel has finished, waits
 * succeed and its result is right. */
#include <time.h>

#include "test_util.h"

enum { TIMEOUT_MS = 100 };

/* Every invocation steps a linear congruential generator STEPS times (a
 * software driver caps an invocation at 65535 loop iterations); the grid's
 * size sets how long a launch runs. */
enum { STEPS = 60000 };
static const char *SRC =
    "struct P { steps: u32, seed: u32 }\n"
    "@group(0) @binding(0) var<storage, read_write> y: array<u32>;\n"
    "@group(0) @binding(1) var<uniform> p: P;\n"
    "@compute @workgroup_size(64)\n"
    "fn spin() {\n"
    "    var x = p.seed;\n"
    "    for (var i = 0u; i < p.steps; i++) { x = x * 1664525u + 1013904223u; }\n"
    "    y[0] = x;\n"
    "}\n";

/* The same n steps on the host, by squaring the affine map. */
static uint32_t lcg_jump(uint32_t x, uint64_t n) {
    uint32_t a = 1664525u, c = 1013904223u, acc_a = 1, acc_c = 0;
    while (n) {
        if (n & 1) {
            acc_a *= a;
            acc_c = acc_c * a + c;
        }
        c = c * a + c;
        a *= a;
        n >>= 1;
    }
    return acc_a * x + acc_c;
}

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void spin2(WgcStream *s, WgcKernel *k, WgcBuffer *y, uint32_t gx, uint32_t gy, uint32_t seed) {
    uint32_t p[2] = {STEPS, seed};
    WgcBinding b = {0, y, 0, 0};
    WgcLaunch l;
    memset(&l, 0, sizeof l);
    l.struct_size = sizeof l;
    l.bindings = &b;
    l.binding_count = 1;
    l.params = p;
    l.params_size = sizeof p;
    l.workgroups[0] = gx;
    l.workgroups[1] = gy;
    l.workgroups[2] = 1;
    CHECK(wgc_stream_launch(s, k, &l));
}

static void spin(WgcStream *s, WgcKernel *k, WgcBuffer *y, uint32_t groups, uint32_t seed) {
    spin2(s, k, y, groups, 1, seed);
}

/* Reads y[0], waiting through timeouts: a calibration grid on a loaded
 * machine may itself run past the device's timeout, and a timed-out read
 * leaves the work running, so reading again is how a caller waits longer. */
static WgcStatus read_waiting(WgcBuffer *y, uint32_t *got) {
    WgcStatus st = WGC_ERROR_TIMEOUT;
    for (int i = 0; i < 600 && st == WGC_ERROR_TIMEOUT; i++) st = wgc_buffer_read(y, 0, got, 4);
    return st;
}

int main(void) {
    WgcInstance *inst = NULL;
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &inst));
    WgcDeviceOptions o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.adapter_index = -1;
    o.gpu_timeout_ms = TIMEOUT_MS;
    WgcDevice *dev = NULL;
    CHECK(wgc_device_create(inst, &o, &dev));
    WgcStream *s = NULL;
    CHECK(wgc_stream_create(dev, &s));
    WgcKernel *k = compile(dev, SRC, "spin");
    WgcBuffer *y = NULL;
    CHECK(wgc_buffer_create(dev, 16, WGC_BUFFER_USAGE_STORAGE, &y));

    /* A short kernel and a read work as usual with the timeout set (the
     * first run includes the driver's compilation). Then grids twice as
     * large until one takes 40 ms (a GPU runs thousands of workgroups at
     * once, so a small grid's time says little about a large one's); the
     * long kernel is that grid scaled to about three seconds, in two
     * dimensions where it exceeds 65535 workgroups. */
    uint32_t got = 0;
    spin(s, k, y, 1, 3);
    CHECK(read_waiting(y, &got));
    EXPECT(got == lcg_jump(3, STEPS));
    uint32_t groups = 8;
    double ms = 0;
    for (;;) {
        double t0 = now_ms();
        spin(s, k, y, groups, 5);
        CHECK(read_waiting(y, &got));
        ms = now_ms() - t0;
        EXPECT(got == lcg_jump(5, STEPS));
        if (ms >= 40 || groups >= 65535u / 2) break;
        groups *= 2;
    }
    double want = groups * 3000.0 / (ms > 0.1 ? ms : 0.1);
    double gy = want / 65535 < 1 ? 1 : want / 65535 > 65535 ? 65535 : ceil(want / 65535);
    double gx = want / gy > 65535 ? 65535 : want / gy < 256 ? 256 : want / gy;
    printf("%u workgroups took %.2f ms; the long kernel runs %.0f x %.0f\n", groups, ms, gx, gy);

    spin2(s, k, y, (uint32_t)gx, (uint32_t)gy, 11);
    WgcEvent *ev = NULL;
    CHECK(wgc_stream_record_event(s, &ev));
    got = 0xdeadbeef;
    double t0 = now_ms();
    EXPECT_STATUS(wgc_buffer_read(y, 0, &got, 4), WGC_ERROR_TIMEOUT);
    double waited = now_ms() - t0;
    printf("the read returned after %.0f ms\n", waited);
    EXPECT(waited < 1000);
    EXPECT(got == 0xdeadbeef);
    EXPECT_STATUS(wgc_event_wait(ev), WGC_ERROR_TIMEOUT);
    EXPECT_STATUS(wgc_stream_synchronize(s), WGC_ERROR_TIMEOUT);
    EXPECT_STATUS(wgc_device_synchronize(dev), WGC_ERROR_TIMEOUT);

    /* The device is still usable: wait until the kernel is done. */
    WgcStatus st = WGC_ERROR_TIMEOUT;
    for (int i = 0; i < 600 && st == WGC_ERROR_TIMEOUT; i++) st = wgc_stream_synchronize(s);
    EXPECT(st == WGC_OK);
    CHECK(wgc_event_wait(ev));
    CHECK(wgc_buffer_read(y, 0, &got, 4));
    EXPECT(got == lcg_jump(11, STEPS));
    spin(s, k, y, 1, 13);
    CHECK(read_waiting(y, &got));
    EXPECT(got == lcg_jump(13, STEPS));

    wgc_event_release(ev);
    wgc_buffer_release(y);
    wgc_kernel_release(k);
    wgc_stream_release(s);
    wgc_device_release(dev);
    wgc_instance_release(inst);
    return test_finish("test_gpu_timeout");
}
