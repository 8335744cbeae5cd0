/* Devices: enumeration, adapter info, the WGC_ADAPTER / WGC_BACKEND
 * variables, ABI and version checks, options, memory statistics and the
 * buffer pool (reuse, limit, dropping what came back longest ago when
 * full), the pipeline cache file. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

static void check_info_sane(const WgcAdapterInfo *a) {
    EXPECT(a->struct_size == sizeof *a);
    EXPECT(a->name[0] != '\0');
    EXPECT(memchr(a->name, '\0', sizeof a->name) != NULL);
    EXPECT(memchr(a->driver, '\0', sizeof a->driver) != NULL);
    EXPECT(a->backend <= WGC_BACKEND_GL);
    EXPECT(a->device_type <= WGC_DEVICE_TYPE_CPU);
    EXPECT(a->limits.max_buffer_size >= (1u << 27));
    EXPECT(a->limits.max_storage_buffer_binding_size >= (1u << 27));
    EXPECT(a->limits.max_storage_buffer_binding_size <= a->limits.max_buffer_size);
    EXPECT(a->limits.max_uniform_buffer_binding_size >= 16384);
    EXPECT(a->limits.max_compute_workgroup_size_x >= 256);
    EXPECT(a->limits.max_compute_workgroup_size_y >= 256);
    EXPECT(a->limits.max_compute_workgroup_size_z >= 64);
    EXPECT(a->limits.max_compute_invocations_per_workgroup >= 256);
    EXPECT(a->limits.max_compute_workgroups_per_dimension >= 65535);
    EXPECT(a->limits.max_compute_workgroup_storage_size >= 16384);
    EXPECT(a->limits.max_storage_buffers_per_shader_stage >= 8);
    uint32_t sa = a->limits.min_storage_buffer_offset_alignment;
    EXPECT(sa >= 4 && sa <= 256 && (sa & (sa - 1)) == 0);
    uint32_t ua = a->limits.min_uniform_buffer_offset_alignment;
    EXPECT(ua >= 4 && ua <= 256 && (ua & (ua - 1)) == 0);
    EXPECT(a->has_f16 <= 1 && a->has_subgroups <= 1 && a->has_timestamps <= 1);
    EXPECT(a->has_cooperative_matrix <= 1 && a->has_pipeline_cache <= 1 && a->has_immediates <= 1);
    if (a->has_subgroups) {
        EXPECT(a->subgroup_min_size >= 1 && a->subgroup_min_size <= a->subgroup_max_size);
        EXPECT(a->subgroup_max_size <= 128);
    }
}

static void test_versions(void) {
    EXPECT(wgc_abi_version() == WGC_ABI_VERSION);
    EXPECT(wgc_version() == ((WGC_VERSION_MAJOR << 16) | (WGC_VERSION_MINOR << 8) | WGC_VERSION_PATCH));
    WgcInstance *inst = (WgcInstance *)(uintptr_t)0x1;
    EXPECT_STATUS(wgc_instance_create(WGC_ABI_VERSION + 1, &inst), WGC_ERROR_ABI_MISMATCH);
    EXPECT(inst == (WgcInstance *)(uintptr_t)0x1); /* untouched on failure */
    EXPECT(strstr(wgc_last_error_message(), "ABI") != NULL);
    EXPECT_STATUS(wgc_instance_create(0, &inst), WGC_ERROR_ABI_MISMATCH);
}

static void test_enumerate(WgcInstance *inst, uint32_t *count) {
    CHECK(wgc_instance_adapter_count(inst, count));
    EXPECT(*count >= 1);
    for (uint32_t i = 0; i < *count; i++) {
        WgcAdapterInfo a;
        memset(&a, 0, sizeof a);
        a.struct_size = sizeof a;
        CHECK(wgc_instance_adapter_info(inst, i, &a));
        printf("adapter %u: %s [%s] backend=%u type=%u f16=%u subgroups=%u(%u..%u) ts=%u coop=%u cache=%u\n", i,
               a.name, a.driver, a.backend, a.device_type, a.has_f16, a.has_subgroups, a.subgroup_min_size,
               a.subgroup_max_size, a.has_timestamps, a.has_cooperative_matrix, a.has_pipeline_cache);
        check_info_sane(&a);
    }
    WgcAdapterInfo a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    EXPECT_STATUS(wgc_instance_adapter_info(inst, *count, &a), WGC_ERROR_OUT_OF_RANGE);

    /* An older, smaller struct: nothing past its declared size is written. */
    unsigned char raw[sizeof(WgcAdapterInfo)];
    memset(raw, 0xAB, sizeof raw);
    uint32_t small = 12;
    memcpy(raw, &small, 4);
    CHECK(wgc_instance_adapter_info(inst, 0, (WgcAdapterInfo *)(void *)raw));
    int untouched = 1;
    for (size_t i = small; i < sizeof raw; i++) untouched &= raw[i] == 0xAB;
    EXPECT(untouched);
    uint32_t backend;
    memcpy(&backend, raw + 4, 4);
    EXPECT(backend <= WGC_BACKEND_GL);
}

static WgcStatus open_device(WgcInstance *inst, int32_t index, WgcPowerPreference pref, WgcDevice **dev) {
    WgcDeviceOptions o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.adapter_index = index;
    o.preference = pref;
    return wgc_device_create(inst, &o, dev);
}

static void device_name(WgcDevice *dev, char *name) {
    WgcAdapterInfo a;
    memset(&a, 0, sizeof a);
    a.struct_size = sizeof a;
    CHECK(wgc_device_info(dev, &a));
    check_info_sane(&a);
    strcpy(name, a.name);
}

static void test_selection(WgcInstance *inst, uint32_t count) {
    WgcDevice *dev = NULL;
    char name[256], first[256];
    WgcAdapterInfo a0;
    memset(&a0, 0, sizeof a0);
    a0.struct_size = sizeof a0;
    CHECK(wgc_instance_adapter_info(inst, 0, &a0));

    CHECK(open_device(inst, 0, WGC_POWER_PREFERENCE_DEFAULT, &dev));
    device_name(dev, first);
    EXPECT(strcmp(first, a0.name) == 0);
    wgc_device_release(dev);

    dev = (WgcDevice *)(uintptr_t)0x1;
    EXPECT_STATUS(open_device(inst, (int32_t)count, WGC_POWER_PREFERENCE_DEFAULT, &dev), WGC_ERROR_NOT_FOUND);
    EXPECT(dev == (WgcDevice *)(uintptr_t)0x1);
    dev = NULL;
    EXPECT_STATUS(open_device(inst, -1, (WgcPowerPreference)77, &dev), WGC_ERROR_INVALID_ARGUMENT);

    /* Software preference: a CPU adapter, or NOT_FOUND where there is none. */
    WgcStatus s = open_device(inst, -1, WGC_POWER_PREFERENCE_SOFTWARE, &dev);
    EXPECT(s == WGC_OK || s == WGC_ERROR_NOT_FOUND);
    if (s == WGC_OK) {
        WgcAdapterInfo a;
        memset(&a, 0, sizeof a);
        a.struct_size = sizeof a;
        CHECK(wgc_device_info(dev, &a));
        EXPECT(a.device_type == WGC_DEVICE_TYPE_CPU);
        wgc_device_release(dev);
    }
    dev = NULL;
    CHECK(open_device(inst, -1, WGC_POWER_PREFERENCE_HIGH_PERFORMANCE, &dev));
    wgc_device_release(dev);
    dev = NULL;
    CHECK(open_device(inst, -1, WGC_POWER_PREFERENCE_LOW_POWER, &dev));
    wgc_device_release(dev);

    /* WGC_ADAPTER by index, by part of the name (any case), and bad values. */
    setenv("WGC_ADAPTER", "0", 1);
    CHECK(wgc_device_create(inst, NULL, &dev));
    device_name(dev, name);
    EXPECT(strcmp(name, a0.name) == 0);
    wgc_device_release(dev);

    /* The first four characters of adapter 0's name, upper-cased. */
    char part[8] = {0};
    size_t len = strlen(a0.name) < 4 ? strlen(a0.name) : 4;
    for (size_t i = 0; i < len; i++) {
        char c = a0.name[i];
        part[i] = (c >= 'a' && c <= 'z') ? (char)(c - 32) : c;
    }
    setenv("WGC_ADAPTER", part, 1);
    CHECK(wgc_device_create(inst, NULL, &dev));
    device_name(dev, name);
    EXPECT(strcmp(name, a0.name) == 0); /* the first adapter whose name matches */
    wgc_device_release(dev);

    char big[32];
    snprintf(big, sizeof big, "%u", count + 5);
    setenv("WGC_ADAPTER", big, 1);
    EXPECT_STATUS(wgc_device_create(inst, NULL, &dev), WGC_ERROR_NOT_FOUND);
    setenv("WGC_ADAPTER", "no-such-adapter-xyz", 1);
    EXPECT_STATUS(wgc_device_create(inst, NULL, &dev), WGC_ERROR_NOT_FOUND);
    EXPECT(strstr(wgc_last_error_message(), "no-such-adapter-xyz") != NULL);
    /* An explicit index wins over the variable. */
    CHECK(open_device(inst, 0, WGC_POWER_PREFERENCE_DEFAULT, &dev));
    wgc_device_release(dev);
    unsetenv("WGC_ADAPTER");
}

static void test_backend_env(void) {
    WgcInstance *inst = (WgcInstance *)(uintptr_t)0x1;
    setenv("WGC_BACKEND", "bogus-api", 1);
    EXPECT_STATUS(wgc_instance_create(WGC_ABI_VERSION, &inst), WGC_ERROR_INVALID_ARGUMENT);
    EXPECT(inst == (WgcInstance *)(uintptr_t)0x1);
    EXPECT(strstr(wgc_last_error_message(), "WGC_BACKEND") != NULL);

    /* Restricting to the backend of adapter 0 keeps only adapters of it. */
    unsetenv("WGC_BACKEND");
    WgcInstance *all = NULL;
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &all));
    WgcAdapterInfo a0;
    memset(&a0, 0, sizeof a0);
    a0.struct_size = sizeof a0;
    CHECK(wgc_instance_adapter_info(all, 0, &a0));
    wgc_instance_release(all);
    static const char *names[] = {"other", "vulkan", "metal", "dx12", "gl"};
    if (a0.backend != WGC_BACKEND_OTHER) {
        setenv("WGC_BACKEND", names[a0.backend], 1);
        CHECK(wgc_instance_create(WGC_ABI_VERSION, &inst));
        uint32_t n = 0;
        CHECK(wgc_instance_adapter_count(inst, &n));
        EXPECT(n >= 1);
        for (uint32_t i = 0; i < n; i++) {
            WgcAdapterInfo a;
            memset(&a, 0, sizeof a);
            a.struct_size = sizeof a;
            CHECK(wgc_instance_adapter_info(inst, i, &a));
            EXPECT(a.backend == a0.backend);
        }
        wgc_instance_release(inst);
    }
    unsetenv("WGC_BACKEND");
}

static void stats_of(WgcDevice *dev, WgcMemoryStats *m) {
    memset(m, 0, sizeof *m);
    m->struct_size = sizeof *m;
    CHECK(wgc_device_memory_stats(dev, m));
}

static void test_memory_stats(WgcInstance *inst) {
    WgcDevice *dev = NULL;
    CHECK(wgc_device_create(inst, NULL, &dev));
    const uint64_t size = 1 << 20; /* a size class of its own */
    WgcMemoryStats m0, m1, m2, m3, m4;
    stats_of(dev, &m0);
    WgcBuffer *b = NULL;
    CHECK(wgc_buffer_create(dev, size, WGC_BUFFER_USAGE_STORAGE, &b));
    stats_of(dev, &m1);
    EXPECT(m1.live_bytes == m0.live_bytes + size);
    EXPECT(m1.peak_bytes >= m1.live_bytes);
    EXPECT(m1.driver_allocations == m0.driver_allocations + 1);

    wgc_buffer_release(b);
    CHECK(wgc_device_synchronize(dev));
    stats_of(dev, &m2);
    EXPECT(m2.live_bytes == m0.live_bytes);
    EXPECT(m2.peak_bytes == m1.peak_bytes);
    EXPECT(m2.pooled_bytes == m0.pooled_bytes + size);

    /* Same size again: served from the pool, not the driver. */
    CHECK(wgc_buffer_create(dev, size - 100, WGC_BUFFER_USAGE_STORAGE, &b));
    stats_of(dev, &m3);
    EXPECT(m3.pool_hits == m2.pool_hits + 1);
    EXPECT(m3.driver_allocations == m2.driver_allocations);
    EXPECT(m3.pooled_bytes == m0.pooled_bytes);
    EXPECT(m3.live_bytes == m1.live_bytes);
    wgc_buffer_release(b);

    CHECK(wgc_device_synchronize(dev));
    CHECK(wgc_device_trim_pool(dev, 0));
    stats_of(dev, &m4);
    EXPECT(m4.pooled_bytes == 0);
    EXPECT(m4.live_bytes == m0.live_bytes);
    wgc_device_release(dev);

    /* A pool limit below the buffer's size: nothing is kept. */
    WgcDeviceOptions o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.adapter_index = -1;
    o.pool_limit_bytes = 4096;
    CHECK(wgc_device_create(inst, &o, &dev));
    CHECK(wgc_buffer_create(dev, size, WGC_BUFFER_USAGE_STORAGE, &b));
    wgc_buffer_release(b);
    CHECK(wgc_device_synchronize(dev));
    stats_of(dev, &m1);
    EXPECT(m1.pooled_bytes == 0);
    EXPECT(m1.live_bytes == 0);
    EXPECT(m1.peak_bytes == size);
    wgc_device_release(dev);

    /* A full pool makes room for what comes back by dropping what came back
     * longest ago: three 1 MiB buffers fill a 3 MiB pool, a 1.5 MiB one
     * pushes two of them out and is then served from the pool. */
    o.pool_limit_bytes = 3 * size;
    CHECK(wgc_device_create(inst, &o, &dev));
    WgcBuffer *three[3];
    for (int i = 0; i < 3; i++) CHECK(wgc_buffer_create(dev, size, WGC_BUFFER_USAGE_STORAGE, &three[i]));
    for (int i = 0; i < 3; i++) wgc_buffer_release(three[i]);
    CHECK(wgc_device_synchronize(dev));
    stats_of(dev, &m1);
    EXPECT(m1.pooled_bytes == 3 * size);
    const uint64_t other = size + size / 2; /* a size class of its own */
    CHECK(wgc_buffer_create(dev, other, WGC_BUFFER_USAGE_STORAGE, &b));
    wgc_buffer_release(b);
    CHECK(wgc_device_synchronize(dev));
    stats_of(dev, &m2);
    EXPECT(m2.pooled_bytes == size + other);
    CHECK(wgc_buffer_create(dev, other, WGC_BUFFER_USAGE_STORAGE, &b));
    stats_of(dev, &m3);
    EXPECT(m3.pool_hits == m2.pool_hits + 1);
    EXPECT(m3.driver_allocations == m2.driver_allocations);
    wgc_buffer_release(b);
    /* The 1 MiB buffer that stayed is still served from the pool. */
    CHECK(wgc_buffer_create(dev, size, WGC_BUFFER_USAGE_STORAGE, &b));
    stats_of(dev, &m4);
    EXPECT(m4.pool_hits == m3.pool_hits + 1);
    EXPECT(m4.driver_allocations == m3.driver_allocations);
    wgc_buffer_release(b);
    wgc_device_release(dev);
}

static const char *TRIVIAL =
    "@group(0) @binding(0) var<storage, read_write> x: array<u32>;\n"
    "@compute @workgroup_size(1) fn main() { x[0] = x[0] + 1u; }\n";

static void test_pipeline_cache(WgcInstance *inst) {
    char path[] = "/tmp/wgc_pipeline_cache_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 ? WGC_OK : WGC_ERROR_INTERNAL);
    close(fd);
    remove(path);

    for (int round = 0; round < 2; round++) {
        WgcDeviceOptions o;
        memset(&o, 0, sizeof o);
        o.struct_size = sizeof o;
        o.adapter_index = -1;
        o.pipeline_cache_path = path;
        WgcDevice *dev = NULL;
        CHECK(wgc_device_create(inst, &o, &dev));
        WgcAdapterInfo a;
        memset(&a, 0, sizeof a);
        a.struct_size = sizeof a;
        CHECK(wgc_device_info(dev, &a));
        WgcKernelDesc d;
        memset(&d, 0, sizeof d);
        d.struct_size = sizeof d;
        d.source = TRIVIAL;
        d.entry_point = "main";
        WgcKernel *k = NULL;
        CHECK(wgc_kernel_create(dev, &d, &k));
        uint32_t saved = 7;
        CHECK(wgc_device_save_pipeline_cache(dev, &saved));
        EXPECT(saved == a.has_pipeline_cache);
        CHECK(wgc_device_save_pipeline_cache(dev, NULL));
        FILE *f = fopen(path, "rb");
        if (a.has_pipeline_cache) {
            EXPECT(f != NULL);
            if (f) {
                fseek(f, 0, SEEK_END);
                EXPECT(ftell(f) > 0);
            }
        }
        if (f) fclose(f);
        wgc_kernel_release(k);
        wgc_device_release(dev);
    }
    remove(path);

    /* Without a path nothing is saved. */
    WgcDevice *dev = NULL;
    CHECK(wgc_device_create(inst, NULL, &dev));
    uint32_t saved = 7;
    CHECK(wgc_device_save_pipeline_cache(dev, &saved));
    EXPECT(saved == 0);
    wgc_device_release(dev);
}

int main(void) {
    unsetenv("WGC_ADAPTER");
    unsetenv("WGC_BACKEND");
    test_versions();
    test_backend_env();
    WgcInstance *inst = NULL;
    CHECK(wgc_instance_create(WGC_ABI_VERSION, &inst));
    uint32_t count = 0;
    test_enumerate(inst, &count);
    test_selection(inst, count);
    test_memory_stats(inst);
    test_pipeline_cache(inst);
    wgc_instance_release(inst);
    return test_finish("test_device");
}
