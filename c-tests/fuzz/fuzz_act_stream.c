/* Actions on streams and events: create, flush, synchronize, release with
 * work pending, record events, wait, query and time them. */
#include <math.h>
#include <string.h>

#include "fuzz.h"

#define SENTINEL_PTR ((void *)(uintptr_t)0x5a5a5a5a5a5a5a5aull)

static void act_stream(Fuzz *f) {
    int dev = fz_live_device(f);
    if (dev < 0) return;
    uint32_t what = fz_below(f, 6);
    fz_describe(f, "device %d what %u", dev, what);
    if (what == 0) { /* create with NULL arguments */
        int null_dev = fz_chance(f, 50);
        WgcStream *s = (WgcStream *)SENTINEL_PTR;
        fz_call(f, "wgc_stream_create");
        fz_uses_device(f, dev);
        fz_must_fail(f, null_dev ? "a NULL device" : "a NULL out_stream");
        WgcStatus st = fz_result(f, wgc_stream_create(null_dev ? NULL : f->dev[dev].h, null_dev ? &s : NULL));
        fz_untouched(f, st, s == (WgcStream *)SENTINEL_PTR, "*out_stream");
        return;
    }
    int i = fz_pick_stream(f, dev);
    if (i < 0) return;
    if (what == 1) { /* released with recorded work still pending */
        fz_remove_stream(f, i);
        return;
    }
    if (what == 2) {
        wgc_stream_retain(f->str[i].h);
        wgc_stream_release(f->str[i].h);
        return;
    }
    int null_s = fz_chance(f, 5);
    fz_call(f, what == 3 ? "wgc_stream_flush" : "wgc_stream_synchronize");
    fz_uses_device(f, f->str[i].dev);
    if (null_s) fz_must_fail(f, "a NULL stream");
    else fz_must_succeed(f);
    WgcStream *h = null_s ? NULL : f->str[i].h;
    fz_result(f, what == 3 ? wgc_stream_flush(h) : wgc_stream_synchronize(h));
}

static void act_event(Fuzz *f) {
    int dev = fz_live_device(f);
    if (dev < 0) return;
    uint32_t what = fz_below(f, 6);
    if (what == 0 || f->nev == 0) {
        int st = fz_pick_stream(f, dev);
        if (st < 0) return;
        int null_s = fz_chance(f, 3), null_out = fz_chance(f, 3);
        WgcEvent *e = (WgcEvent *)SENTINEL_PTR;
        fz_describe(f, "record on stream %d", st);
        fz_call(f, "wgc_stream_record_event");
        fz_uses_device(f, f->str[st].dev);
        if (null_s) fz_must_fail(f, "a NULL stream");
        if (null_out) fz_must_fail(f, "a NULL out_event");
        if (!null_s && !null_out) fz_must_succeed(f);
        WgcStatus s = fz_result(f, wgc_stream_record_event(null_s ? NULL : f->str[st].h, null_out ? NULL : &e));
        fz_untouched(f, s, e == (WgcEvent *)SENTINEL_PTR, "*out_event");
        if (s != WGC_OK || null_out) return;
        if (f->nev == FZ_MAX_EVENTS) fz_remove_event(f, (int)fz_below(f, FZ_MAX_EVENTS));
        f->ev[f->nev].h = e;
        f->ev[f->nev].dev = f->str[st].dev;
        fz_child_added(f, f->str[st].dev);
        f->nev++;
        return;
    }
    int i = fz_pick_event(f);
    int null_e = fz_chance(f, 4);
    WgcEvent *h = null_e ? NULL : f->ev[i].h;
    fz_describe(f, "event %d what %u", i, what);
    if (what == 1) {
        fz_call(f, "wgc_event_wait");
        fz_uses_device(f, f->ev[i].dev);
        if (null_e) fz_must_fail(f, "a NULL event");
        else fz_must_succeed(f);
        fz_result(f, wgc_event_wait(h));
    } else if (what == 2) {
        uint32_t done = 0xdeadbeefu;
        int null_out = fz_chance(f, 4);
        fz_call(f, "wgc_event_query");
        fz_uses_device(f, f->ev[i].dev);
        if (null_e) fz_must_fail(f, "a NULL event");
        if (null_out) fz_must_fail(f, "a NULL out_done");
        if (!null_e && !null_out) fz_must_succeed(f);
        WgcStatus s = fz_result(f, wgc_event_query(h, null_out ? NULL : &done));
        fz_untouched(f, s, done == 0xdeadbeefu, "*out_done");
        if (s == WGC_OK && done > 1) fz_finding(f, "wgc_event_query says %u", done);
    } else if (what == 3) {
        int j = fz_pick_event(f);
        double ms = -12345.0;
        int null_out = fz_chance(f, 4);
        fz_call(f, "wgc_event_elapsed_ms");
        fz_uses_device(f, f->ev[i].dev);
        fz_uses_device(f, f->ev[j].dev);
        if (null_e) fz_must_fail(f, "a NULL event");
        if (null_out) fz_must_fail(f, "a NULL out_ms");
        if (f->ev[i].dev != f->ev[j].dev) fz_must_fail(f, "events of two devices");
        int ts = f->dev[f->ev[i].dev].info.has_timestamps;
        if (!ts) fz_must_fail(f, "an adapter without timestamps");
        if (!null_e && !null_out && ts && f->ev[i].dev == f->ev[j].dev) fz_must_succeed(f);
        WgcStatus s = fz_result(f, wgc_event_elapsed_ms(h, f->ev[j].h, null_out ? NULL : &ms));
        fz_untouched(f, s, ms == -12345.0, "*out_ms");
        if (s == WGC_OK && !null_out && !isfinite(ms)) fz_finding(f, "elapsed time %g is not finite", ms);
    } else if (what == 4) {
        wgc_event_retain(f->ev[i].h);
        wgc_event_release(f->ev[i].h);
    } else {
        fz_remove_event(f, i);
    }
}

const FzActionDef fz_stream_actions[] = {
    {"stream", act_stream, 40},
    {"event", act_event, 50},
    {NULL, NULL, 0},
};
