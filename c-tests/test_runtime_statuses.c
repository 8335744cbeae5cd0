/* Statuses of the runtime in corner cases: fills of buffers that are not
 * storage buffers, a uniform bound with too small a range, a second device
 * destroy, and environment variables that are not UTF-8. */
#include "test_util.h"

static const char *UNIFORM_SRC =
    "struct P { a: vec4<f32> }\n"
    "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n"
    "@group(0) @binding(1) var<uniform> p: P;\n"
    "@compute @workgroup_size(1)\n"
    "fn main() { y[0] = p.a.x + p.a.w; }\n";

/* A fill is a write, and writes are allowed whatever the usage. */
static void test_fill_any_usage(TestEnv *e) {
    uint32_t usages[2] = {WGC_BUFFER_USAGE_UNIFORM, WGC_BUFFER_USAGE_INDIRECT};
    for (int i = 0; i < 2; i++) {
        WgcBuffer *b = NULL;
        CHECK(wgc_buffer_create(e->device, 64, usages[i], &b));
        EXPECT_STATUS(wgc_stream_fill_buffer(e->stream, b, 16, 32, 0x12345678u), WGC_OK);
        uint32_t got[16];
        CHECK(wgc_buffer_read(b, 0, got, sizeof got));
        for (int w = 0; w < 16; w++) EXPECT(got[w] == (w >= 4 && w < 12 ? 0x12345678u : 0));
        wgc_buffer_release(b);
    }
}

/* A uniform bound with a range smaller than the uniform is refused. */
static void test_uniform_range(TestEnv *e) {
    WgcKernel *k = compile(e->device, UNIFORM_SRC, "main");
    WgcBuffer *y = NULL, *u = NULL;
    CHECK(wgc_buffer_create(e->device, 16, WGC_BUFFER_USAGE_STORAGE, &y));
    CHECK(wgc_buffer_create(e->device, 512, WGC_BUFFER_USAGE_UNIFORM, &u));
    float p[4] = {1, 2, 3, 4};
    CHECK(wgc_buffer_write(u, 256, p, sizeof p));
    WgcBinding b[2] = {{0, y, 0, 0}, {1, u, 256, 8}};
    WgcLaunch l;
    memset(&l, 0, sizeof l);
    l.struct_size = sizeof l;
    l.bindings = b;
    l.binding_count = 2;
    l.workgroups[0] = l.workgroups[1] = l.workgroups[2] = 1;
    EXPECT_STATUS(wgc_stream_launch(e->stream, k, &l), WGC_ERROR_BINDING_MISMATCH);
    b[1].size = 16;
    CHECK(wgc_stream_launch(e->stream, k, &l));
    b[1].size = 0; /* to the end */
    CHECK(wgc_stream_launch(e->stream, k, &l));
    float got = 0;
    CHECK(wgc_buffer_read(y, 0, &got, 4));
    EXPECT(got == 5.0f);
    wgc_buffer_release(y);
    wgc_buffer_release(u);
    wgc_kernel_release(k);
}

static void test_destroy_twice(TestEnv *e) {
    WgcDevice *dev = NULL;
    CHECK(wgc_device_create(e->instance, NULL, &dev));
    EXPECT_STATUS(wgc_device_destroy(dev), WGC_OK);
    EXPECT_STATUS(wgc_device_destroy(dev), WGC_ERROR_DEVICE_LOST);
    wgc_device_release(dev);
}

/* Not UTF-8: refused with a message, not silently ignored. */
static void test_env_not_utf8(void) {
    const char *names[2] = {"WGC_BACKEND", "WGC_ADAPTER"};
    for (int i = 0; i < 2; i++) {
        const char *was = getenv(names[i]);
        char *saved = was ? strdup(was) : NULL;
        setenv(names[i], "vulk\xff\xfe", 1);
        WgcInstance *inst = NULL;
        WgcDevice *dev = NULL;
        if (i == 0) {
            EXPECT_STATUS(wgc_instance_create(WGC_ABI_VERSION, &inst), WGC_ERROR_INVALID_ARGUMENT);
            EXPECT(inst == NULL);
            EXPECT(strstr(wgc_last_error_message(), "WGC_BACKEND") != NULL);
        } else {
            CHECK(wgc_instance_create(WGC_ABI_VERSION, &inst));
            EXPECT_STATUS(wgc_device_create(inst, NULL, &dev), WGC_ERROR_INVALID_ARGUMENT);
            EXPECT(dev == NULL);
            EXPECT(strstr(wgc_last_error_message(), "WGC_ADAPTER") != NULL);
            wgc_instance_release(inst);
        }
        if (saved) {
            setenv(names[i], saved, 1);
            free(saved);
        } else {
            unsetenv(names[i]);
        }
    }
}

int main(void) {
    TestEnv env = test_env();
    test_fill_any_usage(&env);
    test_uniform_range(&env);
    test_destroy_twice(&env);
    test_env_not_utf8();
    test_env_release(&env);
    return test_finish("test_runtime_statuses");
}
