/* Settings are read once per device, when it is created: two devices of
 * one process keep the settings they were created with, whatever the
 * environment says later. Observed through the autotuner's mode, which
 * wgc_device_tuning_stats reports (WGC_AUTOTUNE; docs/TUNING.md lists the
 * others, read the same way). */
#include "test_util.h"

static uint32_t mode_of(WgcDevice *dev) {
    WgcTuningStats s;
    memset(&s, 0, sizeof s);
    s.struct_size = sizeof s;
    CHECK(wgc_device_tuning_stats(dev, &s));
    return s.mode;
}

static WgcDevice *create(WgcInstance *inst, const WgcDeviceOptions *opts) {
    WgcDevice *dev = NULL;
    CHECK(wgc_device_create(inst, opts, &dev));
    return dev;
}

int main(void) {
    unsetenv("WGC_AUTOTUNE");
    WgcInstance *inst = NULL;
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &inst));

    /* Each device takes the value the variable had when it was created. */
    setenv("WGC_AUTOTUNE", "1", 1);
    WgcDevice *on = create(inst, NULL);
    setenv("WGC_AUTOTUNE", "cached", 1);
    WgcDevice *cached = create(inst, NULL);
    unsetenv("WGC_AUTOTUNE");
    WgcDevice *off = create(inst, NULL);
    EXPECT(mode_of(on) == WGC_AUTOTUNE_ON);
    EXPECT(mode_of(cached) == WGC_AUTOTUNE_CACHED);
    EXPECT(mode_of(off) == WGC_AUTOTUNE_OFF);

    /* A value the variable does not take fails the creation, naming it;
     * the devices made before keep their settings. */
    setenv("WGC_AUTOTUNE", "sometimes", 1);
    WgcDevice *bad = NULL;
    EXPECT_STATUS(wgc_device_create(inst, NULL, &bad), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT(bad == NULL);
    EXPECT(strstr(wgc_last_error_message(), "WGC_AUTOTUNE") != NULL);
    EXPECT(mode_of(on) == WGC_AUTOTUNE_ON);
    EXPECT(mode_of(off) == WGC_AUTOTUNE_OFF);

    /* The options' own mode wins over the environment (even a bad value). */
    WgcDeviceOptions opts;
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.adapter_index = -1;
    opts.autotune = WGC_AUTOTUNE_ON;
    WgcDevice *chosen = create(inst, &opts);
    EXPECT(mode_of(chosen) == WGC_AUTOTUNE_ON);
    unsetenv("WGC_AUTOTUNE");

    /* The devices work side by side. */
    WgcDevice *devs[4] = {on, cached, off, chosen};
    for (int i = 0; i < 4; i++) {
        WgcBuffer *b = NULL;
        float x[4] = {1, 2, 3, (float)i}, y[4];
        CHECK(wgc_buffer_create(devs[i], sizeof x, WGC_BUFFER_USAGE_STORAGE, &b));
        CHECK(wgc_buffer_write(b, 0, x, sizeof x));
        CHECK(wgc_buffer_read(b, 0, y, sizeof y));
        EXPECT(memcmp(x, y, sizeof x) == 0);
        wgc_buffer_release(b);
        wgc_device_release(devs[i]);
    }
    wgc_instance_release(inst);
    return test_finish("test_settings");
}
