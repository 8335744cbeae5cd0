/* Actions on instances and devices, environment variables the library
 * reads, and the calls that take no handle. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

#define SENTINEL_PTR ((void *)(uintptr_t)0x5a5a5a5a5a5a5a5aull)

/* Output structs sit in a larger block of a known pattern: a failed call
 * must leave all of it alone, a successful one may write struct_size bytes. */
typedef union OutBlock {
    WgcAdapterInfo info;
    WgcMemoryStats stats;
    WgcTuningStats tuning;
    unsigned char bytes[sizeof(WgcAdapterInfo) + 64];
} OutBlock;

static void block_init(OutBlock *b, uint32_t struct_size) {
    memset(b->bytes, 0xa5, sizeof b->bytes);
    memcpy(b->bytes, &struct_size, 4);
}

static void block_check(Fuzz *f, WgcStatus s, const OutBlock *b, uint32_t struct_size, size_t real, const char *what) {
    size_t from = s == WGC_OK ? (struct_size < real ? struct_size : real) : 4;
    if (s == WGC_OK && struct_size < 4) from = 4;
    for (size_t i = from; i < sizeof b->bytes; i++)
        if (b->bytes[i] != 0xa5) {
            fz_finding(f, "%s: byte %zu written (struct_size %u, status %s)", what, i, struct_size,
                       wgc_status_string(s));
            return;
        }
    uint32_t now;
    memcpy(&now, b->bytes, 4);
    if (s != WGC_OK && now != struct_size) fz_finding(f, "%s: struct_size changed by a failed call", what);
}

static void act_instance(Fuzz *f) {
    uint32_t abi = fz_chance(f, 85) ? WGC_ABI_VERSION : fz_hostile_u32(f);
    int null_out = fz_chance(f, 5);
    WgcInstance *inst = (WgcInstance *)SENTINEL_PTR;
    fz_describe(f, "abi %u null_out %d", abi, null_out);
    fz_call(f, "wgc_instance_create");
    if (abi != WGC_ABI_VERSION) fz_must_fail(f, "another ABI version");
    if (null_out) fz_must_fail(f, "a NULL out_instance");
    WgcStatus s = fz_result(f, wgc_instance_create(abi, null_out ? NULL : &inst));
    fz_untouched(f, s, inst == (WgcInstance *)SENTINEL_PTR, "*out_instance");
    if (s != WGC_OK) return;
    if (f->ninst < FZ_MAX_INSTANCES && fz_chance(f, 50)) {
        f->inst[f->ninst++] = inst;
    } else {
        wgc_instance_retain(inst);
        wgc_instance_release(inst);
        wgc_instance_release(inst);
    }
}

static void act_instance_release(Fuzz *f) {
    if (f->ninst == 0) return;
    int i = (int)fz_below(f, (uint32_t)f->ninst);
    fz_describe(f, "instance %d of %d", i, f->ninst);
    wgc_instance_release(f->inst[i]);
    f->inst[i] = f->inst[--f->ninst];
}

static void act_adapters(Fuzz *f) {
    WgcInstance *inst = fz_chance(f, 5) ? NULL : fz_instance(f);
    uint32_t count = 0xdeadbeefu;
    fz_call(f, "wgc_instance_adapter_count");
    if (!inst) fz_must_fail(f, "a NULL instance");
    WgcStatus s = fz_result(f, wgc_instance_adapter_count(inst, &count));
    fz_untouched(f, s, count == 0xdeadbeefu, "*out_count");
    if (s != WGC_OK) count = 1;
    uint32_t index = fz_chance(f, 70) ? fz_below(f, count + 1) : fz_hostile_u32(f);
    uint32_t size = fz_struct_size(f, sizeof(WgcAdapterInfo));
    OutBlock b;
    block_init(&b, size);
    int null_info = fz_chance(f, 5);
    fz_describe(f, "index %u of %u, struct_size %u, null_info %d", index, count, size, null_info);
    fz_call(f, "wgc_instance_adapter_info");
    if (!inst) fz_must_fail(f, "a NULL instance");
    if (null_info) fz_must_fail(f, "a NULL info");
    if (size < 4) fz_must_fail(f, "struct_size below 4");
    if (inst && s == WGC_OK && index >= count) fz_must_fail(f, "an adapter index past the count");
    WgcStatus s2 = fz_result(f, wgc_instance_adapter_info(inst, index, null_info ? NULL : &b.info));
    block_check(f, s2, &b, size, sizeof(WgcAdapterInfo), "WgcAdapterInfo");
}

/* WGC_BACKEND and WGC_ADAPTER with values that must be refused. */
static void act_environment(Fuzz *f) {
    static const char *BACKENDS[] = {"vulkan", "VULKAN", "bogus", "\xff\xfe", "vulkan\xff", "metal,dx12"};
    static const char *ADAPTERS[] = {"llvmpipe", "0", "99", "no such adapter", "\xff", "-1", "1e3"};
    int backend = fz_chance(f, 50);
    uint32_t k = fz_below(f, backend ? 6 : 7);
    const char *v = backend ? BACKENDS[k] : ADAPTERS[k];
    fz_describe(f, "%s=%s", backend ? "WGC_BACKEND" : "WGC_ADAPTER", v);
    setenv(backend ? "WGC_BACKEND" : "WGC_ADAPTER", v, 1);
    if (backend) {
        WgcInstance *inst = (WgcInstance *)SENTINEL_PTR;
        fz_call(f, "wgc_instance_create");
        if (k >= 2 && k <= 4) fz_must_fail(f, "a WGC_BACKEND that names no backend");
        WgcStatus s = fz_result(f, wgc_instance_create(WGC_ABI_VERSION, &inst));
        fz_untouched(f, s, inst == (WgcInstance *)SENTINEL_PTR, "*out_instance");
        if (s == WGC_OK) wgc_instance_release(inst);
    } else {
        WgcInstance *inst = fz_instance(f);
        WgcDevice *dev = (WgcDevice *)SENTINEL_PTR;
        fz_call(f, "wgc_device_create");
        if (!inst) fz_must_fail(f, "a NULL instance");
        if (k == 2 || k == 3 || k == 4) fz_must_fail(f, "a WGC_ADAPTER that matches no adapter");
        WgcStatus s = fz_result(f, wgc_device_create(inst, NULL, &dev));
        fz_untouched(f, s, dev == (WgcDevice *)SENTINEL_PTR, "*out_device");
        if (s == WGC_OK) wgc_device_release(dev);
    }
    unsetenv(backend ? "WGC_BACKEND" : "WGC_ADAPTER");
}

static void act_device_create(Fuzz *f) {
    union {
        WgcDeviceOptions o;
        unsigned char bytes[sizeof(WgcDeviceOptions) + 64];
    } u;
    char path[800];
    WgcInstance *inst = fz_chance(f, 3) ? NULL : fz_instance(f);
    uint32_t count = 1;
    if (inst) wgc_instance_adapter_count(inst, &count);
    memset(u.bytes, 0xa5, sizeof u.bytes);
    memset(&u.o, 0, sizeof u.o);
    u.o.adapter_index = fz_chance(f, 60) ? -1 : fz_chance(f, 50) ? (int32_t)fz_below(f, count + 1) : fz_hostile_i32(f);
    u.o.preference = fz_enum(f, 4);
    u.o.pipeline_cache_path = fz_chance(f, 30) ? fz_cache_path(f, path, sizeof path) : NULL;
    if (!fz_enabled(f, "cache_path")) u.o.pipeline_cache_path = NULL;
    u.o.pool_limit_bytes = fz_chance(f, 70) ? 0 : fz_hostile_u64(f);
    /* Sometimes the autotuner on: later operators time their candidates amid the random work. */
    u.o.autotune = fz_chance(f, 80) ? 0 : fz_enum(f, 4);
    u.o.struct_size = fz_struct_size(f, sizeof u.o);
    const uint32_t size = u.o.struct_size;
    int null_opts = fz_chance(f, 10), null_out = fz_chance(f, 3);
    fz_describe(f, "struct_size %u adapter %d pref %u path %s pool %llu autotune %u null_opts %d", size,
                u.o.adapter_index, u.o.preference, u.o.pipeline_cache_path ? u.o.pipeline_cache_path : "(none)",
                (unsigned long long)u.o.pool_limit_bytes, u.o.autotune, null_opts);
#define COVERS(field) (size >= offsetof(WgcDeviceOptions, field) + sizeof u.o.field)
    WgcDevice *dev = (WgcDevice *)SENTINEL_PTR;
    fz_call(f, "wgc_device_create");
    if (!inst) fz_must_fail(f, "a NULL instance");
    if (null_out) fz_must_fail(f, "a NULL out_device");
    if (!null_opts) {
        if (size < 4) fz_must_fail(f, "struct_size below 4");
        if (COVERS(adapter_index) && u.o.adapter_index >= (int32_t)count) fz_must_fail(f, "an adapter index past the count");
        if (COVERS(adapter_index) && u.o.adapter_index < 0 && COVERS(preference) && u.o.preference > 3)
            fz_must_fail(f, "an unknown power preference");
        if (COVERS(autotune) && u.o.autotune > 3) fz_must_fail(f, "an unknown autotune mode");
        if (COVERS(pipeline_cache_path) && u.o.pipeline_cache_path && u.o.pipeline_cache_path == path &&
            strchr(path, '\xff'))
            fz_must_fail(f, "a cache path that is not UTF-8");
    }
#undef COVERS
    WgcStatus s = fz_result(f, wgc_device_create(inst, null_opts ? NULL : &u.o, null_out ? NULL : &dev));
    fz_untouched(f, s, dev == (WgcDevice *)SENTINEL_PTR, "*out_device");
    if (s != WGC_OK) return;
    int slot = -1;
    for (int i = 0; i < FZ_MAX_DEVICES && slot < 0; i++)
        if (!f->dev[i].used) slot = i;
    if (slot < 0) {
        wgc_device_release(dev);
        return;
    }
    FzDevice *d = &f->dev[slot];
    memset(d, 0, sizeof *d);
    d->used = 1;
    d->h = dev;
    d->info.struct_size = sizeof d->info;
    fz_call(f, "wgc_device_info");
    fz_uses_device(f, slot);
    fz_must_succeed(f);
    fz_result(f, wgc_device_info(dev, &d->info));
}

static void act_device_query(Fuzz *f) {
    int dev = fz_live_device(f);
    int null_dev = fz_chance(f, 4);
    WgcDevice *h = null_dev ? NULL : fz_device_handle(f, dev);
    if (!null_dev && !h) return;
    uint32_t what = fz_below(f, 7);
    uint32_t size = fz_struct_size(f, what == 0   ? sizeof(WgcAdapterInfo)
                                      : what == 4 ? sizeof(WgcTuningStats)
                                                  : sizeof(WgcMemoryStats));
    OutBlock b;
    block_init(&b, size);
    int null_out = fz_chance(f, 4);
    fz_describe(f, "device %d query %u struct_size %u null_out %d", dev, what, size, null_out);
    WgcStatus s;
    switch (what) {
    case 0:
        fz_call(f, "wgc_device_info");
        fz_uses_device(f, dev);
        if (!h) fz_must_fail(f, "a NULL device");
        if (null_out) fz_must_fail(f, "a NULL info");
        if (size < 4) fz_must_fail(f, "struct_size below 4");
        s = fz_result(f, wgc_device_info(h, null_out ? NULL : &b.info));
        block_check(f, s, &b, size, sizeof(WgcAdapterInfo), "WgcAdapterInfo");
        break;
    case 1:
        fz_call(f, "wgc_device_memory_stats");
        fz_uses_device(f, dev);
        if (!h) fz_must_fail(f, "a NULL device");
        if (null_out) fz_must_fail(f, "a NULL stats");
        if (size < 4) fz_must_fail(f, "struct_size below 4");
        s = fz_result(f, wgc_device_memory_stats(h, null_out ? NULL : &b.stats));
        block_check(f, s, &b, size, sizeof(WgcMemoryStats), "WgcMemoryStats");
        if (s == WGC_OK && size >= sizeof(WgcMemoryStats) && b.stats.live_bytes > b.stats.peak_bytes)
            fz_finding(f, "memory stats: live %llu above peak %llu", (unsigned long long)b.stats.live_bytes,
                       (unsigned long long)b.stats.peak_bytes);
        break;
    case 2: {
        uint64_t keep = fz_chance(f, 50) ? 0 : fz_hostile_u64(f);
        fz_call(f, "wgc_device_trim_pool");
        fz_uses_device(f, dev);
        if (!h) fz_must_fail(f, "a NULL device");
        fz_result(f, wgc_device_trim_pool(h, keep));
        break;
    }
    case 3:
        fz_call(f, "wgc_device_synchronize");
        fz_uses_device(f, dev);
        if (!h) fz_must_fail(f, "a NULL device");
        fz_result(f, wgc_device_synchronize(h));
        break;
    case 4:
        fz_call(f, "wgc_device_tuning_stats");
        fz_uses_device(f, dev);
        if (!h) fz_must_fail(f, "a NULL device");
        if (null_out) fz_must_fail(f, "a NULL stats");
        if (size < 4) fz_must_fail(f, "struct_size below 4");
        s = fz_result(f, wgc_device_tuning_stats(h, null_out ? NULL : &b.tuning));
        block_check(f, s, &b, size, sizeof(WgcTuningStats), "WgcTuningStats");
        if (s == WGC_OK && size >= sizeof(WgcTuningStats) && b.tuning.entries < b.tuning.loaded)
            fz_finding(f, "tuning stats: %llu entries, fewer than the %llu loaded",
                       (unsigned long long)b.tuning.entries, (unsigned long long)b.tuning.loaded);
        break;
    case 5: {
        /* The fuzzer's devices have no tuning cache path: nothing to save. */
        uint32_t saved = 0xdeadbeefu;
        fz_call(f, "wgc_device_save_tuning");
        fz_uses_device(f, dev);
        if (!h) fz_must_fail(f, "a NULL device");
        s = fz_result(f, wgc_device_save_tuning(h, null_out ? NULL : &saved));
        fz_untouched(f, s, saved == 0xdeadbeefu, "*out_saved");
        if (s == WGC_OK && !null_out && saved != 0) fz_finding(f, "*out_saved is %u without a tuning path", saved);
        break;
    }
    default: {
        uint32_t saved = 0xdeadbeefu;
        fz_call(f, "wgc_device_save_pipeline_cache");
        fz_uses_device(f, dev);
        if (!h) fz_must_fail(f, "a NULL device");
        s = fz_result(f, wgc_device_save_pipeline_cache(h, null_out ? NULL : &saved));
        fz_untouched(f, s, saved == 0xdeadbeefu, "*out_saved");
        if (s == WGC_OK && !null_out && saved > 1) fz_finding(f, "*out_saved is %u", saved);
        fz_check_cache_dir(f);
        break;
    }
    }
}

/* Drop the fuzzer's reference; children keep the device alive. */
static void act_device_release(Fuzz *f) {
    int dev = fz_any_device(f);
    if (dev < 0 || !f->dev[dev].h) return;
    fz_describe(f, "device %d (children %d, destroyed %d)", dev, f->dev[dev].children, f->dev[dev].destroyed);
    WgcDevice *h = f->dev[dev].h;
    wgc_device_retain(h);
    wgc_device_release(h);
    f->dev[dev].h = NULL;
    wgc_device_release(h);
    if (f->dev[dev].children == 0) memset(&f->dev[dev], 0, sizeof f->dev[dev]);
    fz_check_cache_dir(f);
}

static void act_device_destroy(Fuzz *f) {
    int dev = fz_any_device(f);
    if (dev < 0 || !f->dev[dev].h) return;
    if (f->dev[dev].destroyed && !fz_enabled(f, "destroy_twice")) return;
    fz_describe(f, "device %d (already destroyed %d)", dev, f->dev[dev].destroyed);
    fz_call(f, "wgc_device_destroy");
    fz_uses_device(f, dev);
    if (f->dev[dev].destroyed) fz_must_fail(f, "a device destroyed before");
    WgcStatus s = fz_result(f, wgc_device_destroy(f->dev[dev].h));
    if (s == WGC_OK) f->dev[dev].destroyed = 1;
}

/* The row-major strides or the element count of `shape` (no negative dims)
 * pass int64_t, which wgc_tensor_contiguous refuses. */
static int contiguous_overflows(const int64_t *shape, uint32_t rank) {
    const unsigned __int128 max = INT64_MAX;
    unsigned __int128 stride = 1, count = 1;
    int empty = 0;
    for (uint32_t k = rank; k-- > 0;) {
        if (shape[k] == 0) empty = 1;
        if (k > 0 && (stride *= (uint64_t)(shape[k] ? shape[k] : 1)) > max) return 1;
        if (count <= max) count *= (uint64_t)shape[k];
    }
    return !empty && count > max;
}

static void act_misc(Fuzz *f) {
    uint32_t v = fz_chance(f, 50) ? fz_below(f, 24) : fz_hostile_u32(f);
    fz_describe(f, "status %u", v);
    const char *name = wgc_status_string(v);
    if (!name || !name[0]) fz_finding(f, "wgc_status_string(%u) is empty", v);
    if (wgc_version() != ((WGC_VERSION_MAJOR << 16) | (WGC_VERSION_MINOR << 8) | WGC_VERSION_PATCH))
        fz_finding(f, "wgc_version() does not match the header");
    if (wgc_abi_version() != WGC_ABI_VERSION) fz_finding(f, "wgc_abi_version() does not match the header");
    if (!wgc_last_error_message()) fz_finding(f, "wgc_last_error_message() is NULL");

    /* wgc_tensor_contiguous with hostile ranks, shapes and dtypes. */
    int64_t shape[16];
    uint32_t rank = fz_chance(f, 85) ? fz_below(f, 10) : fz_hostile_u32(f);
    for (int i = 0; i < 16; i++) shape[i] = fz_chance(f, 80) ? (int64_t)fz_below(f, 9) : fz_hostile_i64(f);
    uint32_t dtype = fz_enum(f, 5);
    int b = fz_pick_buffer(f, fz_any_device(f));
    int null_shape = fz_chance(f, 5), null_out = fz_chance(f, 3);
    WgcTensor t, before;
    memset(&t, 0x5a, sizeof t);
    before = t;
    fz_describe(f, "tensor_contiguous rank %u dtype %u null_shape %d", rank, dtype, null_shape);
    fz_call(f, "wgc_tensor_contiguous");
    if (b < 0) fz_must_fail(f, "a NULL buffer");
    if (rank > WGC_MAX_RANK) fz_must_fail(f, "rank above WGC_MAX_RANK");
    if (dtype > WGC_DTYPE_BF16) fz_must_fail(f, "an unknown dtype");
    if (null_shape && rank > 0) fz_must_fail(f, "a NULL shape");
    if (null_out) fz_must_fail(f, "a NULL out_tensor");
    int negative = 0;
    for (uint32_t k = 0; k < rank && k < WGC_MAX_RANK && !null_shape; k++)
        if (shape[k] < 0) {
            fz_must_fail(f, "a negative dimension");
            negative = 1;
        }
    if (rank <= WGC_MAX_RANK && !null_shape && !negative && contiguous_overflows(shape, rank))
        fz_must_fail(f, "an element count or stride above 2^63-1");
    WgcStatus s = fz_result(f, wgc_tensor_contiguous(b >= 0 ? f->buf[b].h : NULL, dtype, rank,
                                                     null_shape ? NULL : shape, null_out ? NULL : &t));
    fz_untouched(f, s, memcmp(&t, &before, sizeof t) == 0, "*out_tensor");
}

/* Calls made while a thread exits, from a pthread key destructor, when the
 * thread's own storage is being torn down. They must still just fail. */
static pthread_key_t g_exit_key;
static WgcStatus g_exit_status[2];

static void at_thread_exit(void *arg) {
    (void)arg;
    uint64_t size = 0;
    g_exit_status[0] = wgc_buffer_size(NULL, &size);
    g_exit_status[1] = wgc_tensor_contiguous(NULL, 0, 0, NULL, NULL);
    (void)wgc_last_error_message();
}

static void *exiting_thread(void *arg) {
    (void)arg;
    uint32_t count = 0;
    WgcInstance *inst = NULL;
    (void)wgc_instance_adapter_count(inst, &count); /* this thread's error storage now exists */
    pthread_setspecific(g_exit_key, &g_exit_key);
    return NULL;
}

static void act_thread_exit(Fuzz *f) {
    static int key_made;
    if (!key_made) key_made = pthread_key_create(&g_exit_key, at_thread_exit) == 0;
    fz_describe(f, "failing calls from a pthread key destructor");
    f->call = "wgc_buffer_size (at thread exit)";
    pthread_t t;
    g_exit_status[0] = g_exit_status[1] = WGC_OK;
    if (!key_made || pthread_create(&t, NULL, exiting_thread, NULL) != 0) return;
    pthread_join(t, NULL);
    if (g_exit_status[0] != WGC_ERROR_NULL_POINTER || g_exit_status[1] != WGC_ERROR_NULL_POINTER)
        fz_finding(f, "calls at thread exit returned %s and %s, expected WGC_ERROR_NULL_POINTER",
                   wgc_status_string(g_exit_status[0]), wgc_status_string(g_exit_status[1]));
}

const FzActionDef fz_device_actions[] = {
    {"instance", act_instance, 3},
    {"instance_release", act_instance_release, 1},
    {"adapters", act_adapters, 3},
    {"environment", act_environment, 1},
    {"device_create", act_device_create, 3},
    {"device_query", act_device_query, 8},
    {"device_release", act_device_release, 1},
    {"device_destroy", act_device_destroy, 1},
    {"misc", act_misc, 4},
    {"thread_exit", act_thread_exit, 1},
    {NULL, NULL, 0},
};
