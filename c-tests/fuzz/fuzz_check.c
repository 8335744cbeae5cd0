/* What every call must satisfy, whatever its arguments:
 *  - the status is a WgcStatus, and never INTERNAL (a caught panic or a bug),
 *    VALIDATION (wgpu rejected work the library had accepted: conflicts must
 *    be caught, with a precise status, by the call that causes them) or
 *    TIMEOUT (a wait that did not end);
 *  - DEVICE_LOST only where a device the call touches was destroyed;
 *  - a failure leaves a non-empty message;
 *  - arguments the header forbids are refused, calls it allows succeed
 *    (where the action knows which);
 *  - out-parameters and buffers are untouched on failure. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

void fz_describe(Fuzz *f, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->detail, sizeof f->detail, fmt, ap);
    va_end(ap);
}

void fz_finding(Fuzz *f, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    f->findings++;
    fprintf(stderr, "FINDING %d (seed %llu, step %llu, action %s, call %s): %s\n  [%s]\n", f->findings,
            (unsigned long long)f->seed, (unsigned long long)f->step, f->action ? f->action : "-",
            f->call ? f->call : "-", msg, f->detail);
    fprintf(stderr, "  reproduce: wgc_fuzz --seed %llu --steps %llu\n", (unsigned long long)f->seed,
            (unsigned long long)f->step + 1);
    if (!f->keep_going) {
        fprintf(stderr, "wgc_fuzz: stopped at the first finding (--keep-going to continue)\n");
        exit(1);
    }
}

void fz_call(Fuzz *f, const char *name) {
    f->call = name;
    f->call_serial++;
    f->call_ndevs = 0;
    f->must_fail = NULL;
    f->must_succeed = 0;
    if (f->trace) fprintf(stderr, "  step %llu: %s [%s]\n", (unsigned long long)f->step, name, f->detail);
}

void fz_uses_device(Fuzz *f, int dev) {
    if (dev >= 0 && f->call_ndevs < 4) f->call_devs[f->call_ndevs++] = dev;
}

void fz_must_fail(Fuzz *f, const char *why) {
    if (!f->must_fail) f->must_fail = why;
}

void fz_must_succeed(Fuzz *f) {
    f->must_succeed = 1;
}

int fz_device_dead(const Fuzz *f, int dev) {
    return dev >= 0 && f->dev[dev].destroyed;
}

static int touches_dead_device(const Fuzz *f) {
    for (int i = 0; i < f->call_ndevs; i++)
        if (fz_device_dead(f, f->call_devs[i])) return 1;
    return 0;
}

WgcStatus fz_result(Fuzz *f, WgcStatus s) {
    f->calls++;
    if (f->trace) fprintf(stderr, "    -> %s\n", wgc_status_string(s));
    if (s > WGC_ERROR_INVALID_OPERATION) {
        fz_finding(f, "returned %u, which is not a WgcStatus", (unsigned)s);
        return s;
    }
    f->status_counts[s]++;
    const char *msg = wgc_last_error_message();
    if (s == WGC_OK) {
        f->ok_calls++;
        if (f->must_fail) fz_finding(f, "returned WGC_OK for a call it must refuse: %s", f->must_fail);
        return s;
    }
    if (!msg || !msg[0]) fz_finding(f, "failed with %s and an empty message", wgc_status_string(s));
    int dead = touches_dead_device(f);
    switch (s) {
    case WGC_ERROR_INTERNAL:
    case WGC_ERROR_TIMEOUT:
        fz_finding(f, "%s: %s", wgc_status_string(s), msg);
        break;
    case WGC_ERROR_VALIDATION:
        /* Compiling a kernel is where wgpu validates a module: its verdict is
         * the caller's diagnostic. Anywhere else the library let something
         * through that the GPU layer then refused. */
        if (strcmp(f->call, "wgc_kernel_create") != 0 && !dead)
            fz_finding(f, "WGC_ERROR_VALIDATION from the GPU layer: %s", msg);
        break;
    case WGC_ERROR_SHADER_COMPILATION:
        /* Only the caller's own WGSL may fail to compile, never an operator's. */
        if (strcmp(f->call, "wgc_kernel_create") != 0) fz_finding(f, "WGC_ERROR_SHADER_COMPILATION: %s", msg);
        break;
    case WGC_ERROR_DEVICE_LOST:
        if (!dead) fz_finding(f, "WGC_ERROR_DEVICE_LOST but no device it uses was destroyed: %s", msg);
        break;
    default:
        break;
    }
    if (f->must_succeed && !dead && s != WGC_ERROR_OUT_OF_MEMORY)
        fz_finding(f, "refused a valid call with %s: %s", wgc_status_string(s), msg);
    return s;
}

void fz_untouched(Fuzz *f, WgcStatus s, int untouched, const char *what) {
    if (s != WGC_OK && !untouched) fz_finding(f, "%s was written although the call failed", what);
}

/* Reading small buffers is cheap; the rare big one is not read back. */
#define FZ_CHECKSUM_LIMIT (4u << 20)

FzSum fz_checksum(Fuzz *f, int buf) {
    FzSum r = {0, 0};
    if (buf < 0 || f->buf[buf].size > FZ_CHECKSUM_LIMIT || fz_device_dead(f, f->buf[buf].dev)) return r;
    uint64_t n = f->buf[buf].size;
    unsigned char *data = malloc((size_t)n);
    if (!data) return r;
    const char *saved = f->call;
    fz_call(f, "wgc_buffer_read");
    fz_uses_device(f, f->buf[buf].dev);
    fz_must_succeed(f);
    WgcStatus s = fz_result(f, wgc_buffer_read(f->buf[buf].h, 0, data, n));
    if (s == WGC_OK) {
        uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
        for (uint64_t i = 0; i < n; i++) h = (h ^ data[i]) * 0x100000001b3ull;
        r.valid = 1;
        r.sum = h;
    }
    free(data);
    f->call = saved;
    return r;
}

void fz_check_unchanged(Fuzz *f, WgcStatus s, int buf, FzSum before, const char *what) {
    if (s == WGC_OK || !before.valid) return;
    const char *saved = f->call;
    FzSum after = fz_checksum(f, buf);
    f->call = saved;
    if (after.valid && after.sum != before.sum)
        fz_finding(f, "%s changed although %s failed", what, saved);
}
