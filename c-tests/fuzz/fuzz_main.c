/* wgc_fuzz: random sequences of C API calls, checked call by call.
 *
 *   wgc_fuzz [--seed N] [--seconds S] [--steps N] [--keep-going] [--trace]
 *            [--only a,b,...] [--skip a,b,...] [--hang-seconds H] [--sync] [--list]
 *
 * Runs until S seconds (default 60) or N steps have passed, then runs the
 * health check. A finding, crash or hang prints the seed, step, action and
 * call, and how to reproduce it; the exit status is then non-zero.
 * --skip takes action names and the feature names --list prints, to look
 * past a known defect; --sync waits for each step's GPU work, so slow work
 * is reported at the step that recorded it. */
/* sigaltstack and SA_ONSTACK are XSI. */
#define _XOPEN_SOURCE 700
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fuzz.h"

#if defined(__SANITIZE_ADDRESS__)
#define FZ_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FZ_ASAN 1
#endif
#endif
#ifdef FZ_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

static Fuzz g_fuzz;
static volatile double g_step_started;
static double g_hang_seconds = 120; /* a loaded software driver can take seconds per step, never minutes */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Where the run was: printed on a crash, a hang or a sanitizer report. */
static void print_context(const char *what) {
    char msg[768];
    const Fuzz *f = &g_fuzz;
    int n = snprintf(msg, sizeof msg,
                     "\nwgc_fuzz: %s at seed %llu, step %llu, action %s, call %s\n  [%s]\n"
                     "  reproduce: wgc_fuzz --seed %llu --steps %llu\n",
                     what, (unsigned long long)f->seed, (unsigned long long)f->step, f->action ? f->action : "-",
                     f->call ? f->call : "-", f->detail, (unsigned long long)f->seed,
                     (unsigned long long)f->step + 1);
    if (n > 0) {
        ssize_t w = write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
        (void)w;
    }
}

static void on_signal(int sig) {
    char what[64];
    snprintf(what, sizeof what, "CRASH (signal %d)", sig);
    print_context(what);
    raise(sig); /* SA_RESETHAND: the default action now */
}

#ifdef FZ_ASAN
static void on_sanitizer_death(void) {
    print_context("SANITIZER REPORT");
}
#endif

static void install_handlers(void) {
    static char altstack[1 << 16];
    stack_t ss;
    memset(&ss, 0, sizeof ss);
    ss.ss_sp = altstack;
    ss.ss_size = sizeof altstack;
    sigaltstack(&ss, NULL); /* a stack overflow still gets reported */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_ONSTACK | SA_RESETHAND;
    sigaction(SIGABRT, &sa, NULL);
#ifdef FZ_ASAN
    __sanitizer_set_death_callback(on_sanitizer_death); /* ASan reports the faults itself */
#else
    sigaction(SIGSEGV, &sa, NULL);
    sigaction(SIGBUS, &sa, NULL);
    sigaction(SIGILL, &sa, NULL);
    sigaction(SIGFPE, &sa, NULL);
#endif
}

/* A step that takes far longer than any legitimate call is a hang. */
static void *watchdog(void *arg) {
    (void)arg;
    for (;;) {
        sleep(1);
        double started = g_step_started;
        if (started > 0 && now() - started > g_hang_seconds) {
            char what[96];
            snprintf(what, sizeof what, "HANG (one step ran over %.0f s)", g_hang_seconds);
            print_context(what);
            _exit(3);
        }
    }
    return NULL;
}

typedef struct Enabled {
    const FzActionDef *def;
} Enabled;

static const FzActionDef *const TABLES[] = {fz_device_actions, fz_memory_actions,     fz_kernel_actions,
                                            fz_stream_actions, fz_elementwise_actions, fz_tensor_op_actions,
                                            fz_probe_actions, fz_graph_actions,
                                            fz_multi_device_actions};

static void usage(void) {
    fprintf(stderr, "usage: wgc_fuzz [--seed N] [--seconds S] [--steps N] [--keep-going] [--trace]\n"
                    "                [--only a,b] [--skip a,b] [--hang-seconds H] [--sync] [--list]\n");
    exit(2);
}

int main(int argc, char **argv) {
    Fuzz *f = &g_fuzz;
    double seconds = 60;
    unsigned long long max_steps = ~0ull;
    const char *only = NULL, *skip = NULL;
    int list = 0, sync_steps = 0;
    f->seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--seed") && v) f->seed = strtoull(v, NULL, 0), i++;
        else if (!strcmp(a, "--seconds") && v) seconds = atof(v), i++;
        else if (!strcmp(a, "--steps") && v) max_steps = strtoull(v, NULL, 0), i++;
        else if (!strcmp(a, "--hang-seconds") && v) g_hang_seconds = atof(v), i++;
        else if (!strcmp(a, "--only") && v) only = v, i++;
        else if (!strcmp(a, "--skip") && v) skip = v, i++;
        else if (!strcmp(a, "--keep-going")) f->keep_going = 1;
        else if (!strcmp(a, "--trace")) f->trace = 1;
        else if (!strcmp(a, "--sync")) sync_steps = 1;
        else if (!strcmp(a, "--list")) list = 1;
        else usage();
    }
    Enabled en[128];
    int nen = 0, total = 0;
    for (size_t t = 0; t < sizeof TABLES / sizeof TABLES[0]; t++)
        for (const FzActionDef *d = TABLES[t]; d->name; d++) {
            if (list) printf("%s\n", d->name);
            if ((only && !fz_listed(only, d->name)) || fz_listed(skip, d->name)) continue;
            en[nen++].def = d;
            total += d->weight;
        }
    if (list) {
        printf("features (--skip them too): struct_size_cut view_count_overflow indirect_over_limit\n"
               "  indirect_storage_conflict storage_uniform_conflict uniform_binding_size wgsl_deep wgsl_huge wgsl_override\n"
               "  wgsl_garbage wgsl_long cache_path cache_path_fifo big_buffer destroy_twice fill_non_storage\n"
               "  empty_fill_other_device\n");
        return 0;
    }
    f->skip = skip;
    if (nen == 0) usage();

    /* splitmix64 of the seed: nearby seeds give unrelated sequences. */
    uint64_t z = f->seed + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    f->rng = (z ^ (z >> 31)) | 1;

    install_handlers();
    if (!fz_make_cache_dir(f)) return 1;
    pthread_t dog;
    pthread_create(&dog, NULL, watchdog, NULL);
    pthread_detach(dog);

    double start = now();
    printf("wgc_fuzz: seed %llu, %.0f s or %llu steps\n", (unsigned long long)f->seed, seconds, max_steps);
    fflush(stdout);
    for (f->step = 0; f->step < max_steps && now() - start < seconds; f->step++) {
        int pick = (int)fz_below(f, (uint32_t)total), i = 0;
        while (pick >= en[i].def->weight) pick -= en[i++].def->weight;
        f->action = en[i].def->name;
        f->call = NULL;
        f->detail[0] = 0;
        if (f->trace) fprintf(stderr, "step %llu: %s\n", (unsigned long long)f->step, f->action);
        double t0 = now();
        g_step_started = t0;
        en[i].def->run(f);
        if (sync_steps) /* finish the step's GPU work now: slow work shows up at its own step */
            for (int d = 0; d < FZ_MAX_DEVICES; d++)
                if (f->dev[d].used && f->dev[d].h) wgc_device_synchronize(f->dev[d].h);
        double took = now() - t0;
        if (took > 2.0)
            fprintf(stderr, "wgc_fuzz: step %llu (%s) took %.1f s [%s]\n", (unsigned long long)f->step, f->action,
                    took, f->detail);
    }
    unsigned long long steps = f->step;
    g_step_started = now();
    int healthy = fz_health_check(f);
    fz_check_cache_dir(f);
    fz_release_all(f);
    fz_check_cache_dir(f);
    g_step_started = 0;
    fz_remove_cache_dir(f);

    printf("wgc_fuzz: %llu steps, %llu calls (%llu WGC_OK) in %.1f s\n", steps, (unsigned long long)f->calls,
           (unsigned long long)f->ok_calls, now() - start);
    for (int s = 1; s <= WGC_ERROR_INVALID_OPERATION; s++)
        if (f->status_counts[s]) printf("  %-30s %llu\n", wgc_status_string((WgcStatus)s), (unsigned long long)f->status_counts[s]);
    printf("wgc_fuzz: health check %s, %d finding(s)\n", healthy ? "passed" : "FAILED", f->findings);
    return f->findings == 0 ? 0 : 1;
}
