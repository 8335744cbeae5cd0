/* Actions on graphs, each within one step: capture a fill and a copy of the
 * action's own buffers, try what a capture must refuse, end it, then replay
 * with plausible or hostile binding tables and scalar patches on streams of
 * this or another device, sometimes after the captured buffers were
 * released, and check a replay's result. */
#include <string.h>

#include "fuzz.h"

#define SENTINEL_PTR ((void *)(uintptr_t)0x5a5a5a5a5a5a5a5aull)

static WgcBuffer *own_buffer(Fuzz *f, int dev, uint64_t size) {
    WgcBuffer *b = NULL;
    fz_call(f, "wgc_buffer_create");
    fz_uses_device(f, dev);
    fz_must_succeed(f);
    if (fz_result(f, wgc_buffer_create(f->dev[dev].h, size, WGC_BUFFER_USAGE_STORAGE, &b)) != WGC_OK) return NULL;
    return b;
}

/* A call a capture must refuse with WGC_ERROR_INVALID_OPERATION. */
static void refused(Fuzz *f, const char *name, int dev, WgcStatus s) {
    (void)name;
    (void)dev;
    if (s == WGC_OK || s == WGC_ERROR_DEVICE_LOST) return; /* fz_result judged it */
    if (s != WGC_ERROR_INVALID_OPERATION)
        fz_finding(f, "refused with %s, expected WGC_ERROR_INVALID_OPERATION", wgc_status_string(s));
}

static void misuse_during_capture(Fuzz *f, int dev, WgcStream *s, WgcBuffer *a, WgcBuffer *b, uint64_t n) {
    uint32_t what = fz_below(f, 5);
    unsigned char tmp[16];
    memset(tmp, 0, sizeof tmp);
    WgcEvent *ev = (WgcEvent *)SENTINEL_PTR;
    WgcStatus st;
    const char *names[] = {"wgc_stream_begin_capture", "wgc_stream_synchronize", "wgc_stream_record_event",
                           "wgc_buffer_read", "wgc_buffer_write"};
    fz_call(f, names[what]);
    fz_uses_device(f, dev);
    fz_must_fail(f, "a capturing stream or a captured buffer");
    switch (what) {
    case 0: st = wgc_stream_begin_capture(s); break;
    case 1: st = wgc_stream_synchronize(s); break;
    case 2: st = wgc_stream_record_event(s, &ev); break;
    case 3: st = wgc_buffer_read(b, 0, tmp, n < 16 ? n : 16); break;
    default: st = wgc_buffer_write(a, 0, tmp, n < 16 ? n : 16); break;
    }
    st = fz_result(f, st);
    if (what == 2) fz_untouched(f, st, ev == (WgcEvent *)SENTINEL_PTR, "*out_event");
    refused(f, names[what], dev, st);
}

static void act_graph(Fuzz *f) {
    int dev = fz_live_device(f);
    if (dev < 0 || fz_device_dead(f, dev)) return;
    int si = fz_pick_stream(f, dev);
    if (si < 0 || f->str[si].dev != dev) return;
    WgcStream *s = f->str[si].h;
    uint64_t n = 4 * (1 + fz_below(f, 256));
    uint32_t pattern = (uint32_t)fz_u64(f);
    fz_describe(f, "stream %d, %llu bytes, pattern %08x", si, (unsigned long long)n, pattern);
    WgcBuffer *a = own_buffer(f, dev, n), *b = own_buffer(f, dev, n), *c = own_buffer(f, dev, n + 4 * fz_below(f, 4));
    WgcGraph *g = NULL;
    if (!a || !b || !c) goto done;

    fz_call(f, "wgc_stream_begin_capture");
    fz_uses_device(f, dev);
    fz_must_succeed(f);
    if (fz_result(f, wgc_stream_begin_capture(s)) != WGC_OK) goto done;
    fz_call(f, "wgc_stream_fill_buffer");
    fz_uses_device(f, dev);
    fz_must_succeed(f);
    WgcStatus fill = fz_result(f, wgc_stream_fill_buffer(s, a, 0, n, pattern));
    fz_call(f, "wgc_stream_copy_buffer");
    fz_uses_device(f, dev);
    fz_must_succeed(f);
    WgcStatus copy = fz_result(f, wgc_stream_copy_buffer(s, a, 0, b, 0, n));
    if (fz_chance(f, 60)) misuse_during_capture(f, dev, s, a, b, n);
    fz_call(f, "wgc_stream_end_capture");
    fz_uses_device(f, dev);
    fz_must_succeed(f);
    if (fz_result(f, wgc_stream_end_capture(s, &g)) != WGC_OK) goto done;
    if (fill != WGC_OK || copy != WGC_OK) goto done;
    uint32_t dispatches = 0, launches = 0, slots = 0;
    fz_call(f, "wgc_graph_counts");
    fz_must_succeed(f);
    fz_result(f, wgc_graph_counts(g, &dispatches, &launches, &slots));
    if (slots != 2 || dispatches < 1 || launches != dispatches)
        fz_finding(f, "a fill and a copy made %u slots, %u dispatches, %u launches", slots, dispatches, launches);

    /* The graph holds its buffers: the caller may let them go. */
    int released = fz_chance(f, 30);
    if (released) {
        wgc_buffer_release(a);
        wgc_buffer_release(b);
        a = b = NULL;
    }
    int rounds = 1 + (int)fz_below(f, 3);
    for (int r = 0; r < rounds; r++) {
        int ti = fz_pick_stream(f, dev);
        if (ti < 0) break;
        int tdev = f->str[ti].dev;
        WgcGraphRebind rebind = {fz_below(f, 2), c};
        WgcGraphScalar patch = {0, 0, &pattern, 4};
        WgcGraphReplay desc;
        memset(&desc, 0, sizeof desc);
        desc.struct_size = sizeof desc;
        int pool = -1;
        if (fz_chance(f, 50)) {
            desc.rebinds = &rebind;
            desc.rebind_count = 1;
            if (fz_chance(f, 10)) rebind.slot = fz_hostile_u32(f);
            if (fz_chance(f, 30)) {
                pool = fz_pick_buffer(f, dev);
                if (pool >= 0) rebind.buffer = f->buf[pool].h;
            }
            if (fz_chance(f, 5)) rebind.buffer = NULL;
        }
        if (fz_chance(f, 15)) { /* the fill is a built-in operator's: never patchable */
            patch.launch = fz_chance(f, 50) ? 0 : fz_hostile_u32(f);
            desc.scalars = &patch;
            desc.scalar_count = 1;
        }
        fz_describe(f, "replay on stream %d (device %d), rebind %u slot %u (pool %d), %u patches", ti, tdev,
                    desc.rebind_count, rebind.slot, pool, desc.scalar_count);
        fz_call(f, "wgc_graph_replay");
        fz_uses_device(f, dev);
        fz_uses_device(f, tdev);
        if (tdev != dev) fz_must_fail(f, "a stream of another device");
        if (desc.scalar_count) fz_must_fail(f, "a patch of a built-in operator's launch or past the launches");
        if (desc.rebind_count) {
            if (rebind.slot >= 2) fz_must_fail(f, "a slot past the graph's");
            if (!rebind.buffer) fz_must_fail(f, "a NULL buffer");
            if (pool >= 0 && f->buf[pool].dev != dev) fz_must_fail(f, "a buffer of another device");
            if (pool >= 0 && f->buf[pool].size < n) fz_must_fail(f, "a buffer smaller than the captured one");
        }
        int plain = !desc.rebind_count && !desc.scalar_count && tdev == dev;
        int into_c = desc.rebind_count && rebind.slot == 1 && rebind.buffer == c && !desc.scalar_count && tdev == dev;
        if (plain || into_c || (desc.rebind_count && rebind.buffer == c && rebind.slot < 2 && !desc.scalar_count &&
                                tdev == dev))
            fz_must_succeed(f);
        WgcStatus st = fz_result(f, wgc_graph_replay(g, f->str[ti].h, &desc));
        if (st != WGC_OK || !(into_c || (plain && b))) continue;
        /* Check what the replay wrote: c (rebound copy target) or b. */
        WgcBuffer *target = into_c ? c : b;
        uint32_t words[256];
        memset(words, 0, sizeof words);
        fz_call(f, "wgc_buffer_read");
        fz_uses_device(f, dev);
        fz_must_succeed(f);
        if (fz_result(f, wgc_buffer_read(target, 0, words, n)) != WGC_OK) continue;
        for (uint64_t i = 0; i < n / 4; i++) {
            if (words[i] != pattern) {
                fz_finding(f, "replayed fill and copy: word %llu is %08x, expected %08x", (unsigned long long)i,
                           words[i], pattern);
                break;
            }
        }
    }
done:
    wgc_graph_release(g);
    wgc_buffer_release(a);
    wgc_buffer_release(b);
    wgc_buffer_release(c);
}

/* fuzz_act_graph_ops.c: random operators captured and replayed. */
void fz_act_graph_ops(Fuzz *f);

const FzActionDef fz_graph_actions[] = {
    {"graph", act_graph, 20},
    {"graph_ops", fz_act_graph_ops, 20},
    {NULL, NULL, 0},
};
