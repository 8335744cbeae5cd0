/* The C API fuzzer: shared state and the helpers every part uses.
 *
 * One process, one thread, deterministic from a seed: step k does the same
 * thing in every run with the same seed, so a finding at step k reproduces
 * with `wgc_fuzz --seed S --steps k+1`. Each step picks an action (create,
 * use or release a handle, call an operator, record a known computation and
 * check it later), builds plausible arguments and then, often, makes some of
 * them hostile. Every call is checked (fuzz_check.c); see README's testing
 * section for how to run it. */
#ifndef WGC_FUZZ_H
#define WGC_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#include "wgcompute.h"

enum {
    FZ_MAX_INSTANCES = 3,
    FZ_MAX_DEVICES = 4, /* device records, including released ones children still use */
    FZ_MAX_BUFFERS = 40,
    FZ_MAX_INDIRECT = 6,
    FZ_MAX_KERNELS = 24,
    FZ_MAX_STREAMS = 8,
    FZ_MAX_EVENTS = 24,
    FZ_MAX_PROBES = 6,
    FZ_MAX_SIG_BINDINGS = 8,
};

/* Binding kinds a generated kernel declares. */
enum { FZ_BIND_READ = 0, FZ_BIND_RW = 1, FZ_BIND_UNIFORM = 2 };

typedef struct FzDevice {
    int used;
    WgcDevice *h;     /* the fuzzer's own reference; NULL once released */
    int destroyed;    /* wgc_device_destroy succeeded on it */
    int children;     /* pool objects of this device (they keep it alive) */
    WgcAdapterInfo info;
} FzDevice;

typedef struct FzBuffer {
    WgcBuffer *h;
    int dev;
    uint64_t size;
    uint32_t usage;
    uint64_t stamp; /* the step that last used it: not evicted during that step */
} FzBuffer;

typedef struct FzBindingSig {
    uint32_t binding;
    int kind;
    uint32_t elem_size;
    uint64_t min_size;
} FzBindingSig;

/* What a generated kernel declares, for launching it and checking reflection. */
typedef struct FzKernelSig {
    uint32_t count;
    FzBindingSig b[FZ_MAX_SIG_BINDINGS];
    uint32_t wg[3];
    int wg_known; /* wg is the workgroup size the kernel must report */
    int exact;    /* the bindings above are exactly what the kernel uses */
    uint64_t cost; /* rough work per invocation (private arrays are zeroed per invocation) */
} FzKernelSig;

typedef struct FzKernel {
    WgcKernel *h;
    int dev;
    FzKernelSig sig;
} FzKernel;

typedef struct FzStream {
    WgcStream *h;
    int dev;
} FzStream;

typedef struct FzEvent {
    WgcEvent *h;
    int dev;
} FzEvent;

/* A known computation recorded amid the random work and checked later. */
typedef struct FzProbe {
    int dev;
    WgcBuffer *bufs[4];
    WgcBuffer *result;
    uint64_t count;     /* f32 elements to read from result */
    double expected;    /* every element should be this ... */
    double tolerance;   /* ... within this (absolute) */
    uint64_t step;      /* when it was recorded */
    char what[96];
} FzProbe;

typedef struct Fuzz {
    uint64_t seed, rng, step;
    const char *action;
    char detail[256];

    /* The call being checked (fuzz_check.c). */
    const char *call;
    uint64_t call_serial;
    int call_devs[4], call_ndevs;
    const char *must_fail;
    int must_succeed;

    int keep_going, trace, findings;
    const char *skip; /* actions and features switched off (--skip) */
    uint64_t calls, ok_calls, status_counts[32];

    WgcInstance *inst[FZ_MAX_INSTANCES];
    int ninst;
    FzDevice dev[FZ_MAX_DEVICES];
    FzBuffer buf[FZ_MAX_BUFFERS];
    int nbuf;
    FzBuffer ind[FZ_MAX_INDIRECT]; /* indirect-argument buffers: only controlled counts */
    int nind;
    FzKernel ker[FZ_MAX_KERNELS];
    int nker;
    FzStream str[FZ_MAX_STREAMS];
    int nstr;
    FzEvent ev[FZ_MAX_EVENTS];
    int nev;
    FzProbe probe[FZ_MAX_PROBES];
    int nprobe;

    char tmpdir[200]; /* private directory for pipeline-cache paths */
} Fuzz;

/* ---- random numbers and hostile values (fuzz_values.c) ---- */
/* Hostile inputs that reach a known, still open defect can be switched off
 * by name (--skip NAME) to look past it; the run then takes another course
 * from the first choice skipped. CI runs everything. */
int fz_enabled(const Fuzz *f, const char *name);
int fz_listed(const char *list, const char *name);
uint64_t fz_u64(Fuzz *f);
uint32_t fz_below(Fuzz *f, uint32_t n); /* uniform in [0, n); 0 if n == 0 */
int fz_chance(Fuzz *f, int percent);
uint64_t fz_hostile_u64(Fuzz *f);
uint32_t fz_hostile_u32(Fuzz *f);
int64_t fz_hostile_i64(Fuzz *f);
int32_t fz_hostile_i32(Fuzz *f);
double fz_hostile_double(Fuzz *f);
/* A struct_size: usually `real`, else a value that cuts the struct anywhere
 * (inside a pointer too) or claims a newer, larger struct (at most real+64). */
uint32_t fz_struct_size(Fuzz *f, uint32_t real);
/* An enum value: mostly in [0, count), else unknown. */
uint32_t fz_enum(Fuzz *f, uint32_t count);

/* ---- checking (fuzz_check.c) ---- */
void fz_call(Fuzz *f, const char *name);
void fz_uses_device(Fuzz *f, int dev);
void fz_must_fail(Fuzz *f, const char *why);
void fz_must_succeed(Fuzz *f);
WgcStatus fz_result(Fuzz *f, WgcStatus s);
void fz_finding(Fuzz *f, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* On failure an out-parameter or output must be as it was. */
void fz_untouched(Fuzz *f, WgcStatus s, int untouched, const char *what);
void fz_describe(Fuzz *f, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Checksums of a buffer's contents (a blocking read), to show that a failed
 * call changed nothing. valid == 0 when the buffer could not be read. */
typedef struct FzSum {
    int valid;
    uint64_t sum;
} FzSum;
FzSum fz_checksum(Fuzz *f, int buf);
void fz_check_unchanged(Fuzz *f, WgcStatus s, int buf, FzSum before, const char *what);
int fz_device_dead(const Fuzz *f, int dev);

/* ---- handle pools (fuzz_pool.c) ---- */
WgcInstance *fz_instance(Fuzz *f); /* a live instance, created if needed */
int fz_live_device(Fuzz *f);       /* a device record with a handle, created if needed; -1 if none */
int fz_any_device(Fuzz *f);        /* any device record in use, or -1 */
WgcDevice *fz_device_handle(Fuzz *f, int dev);
void fz_child_added(Fuzz *f, int dev);
void fz_child_removed(Fuzz *f, int dev);
int fz_add_buffer(Fuzz *f, int dev, uint64_t size, uint32_t usage); /* -1 on failure */
void fz_remove_buffer(Fuzz *f, int i);
void fz_remove_indirect(Fuzz *f, int i);
void fz_remove_kernel(Fuzz *f, int i);
void fz_remove_stream(Fuzz *f, int i);
void fz_remove_event(Fuzz *f, int i);
int fz_find_buffer(const Fuzz *f, const WgcBuffer *h);
int fz_pick_buffer(Fuzz *f, int dev); /* a buffer of dev (often), any, or -1 */
int fz_pick_stream(Fuzz *f, int dev); /* a stream, created on dev if needed */
int fz_pick_kernel(Fuzz *f);
int fz_pick_event(Fuzz *f);
/* A buffer of `dev` with storage usage and at least `bytes` bytes, not in
 * `avoid` (a handle or NULL), created if none fits; -1 on failure. */
int fz_storage_buffer(Fuzz *f, int dev, uint64_t bytes, const WgcBuffer *avoid);
void fz_release_all(Fuzz *f);

/* ---- tensor views (fuzz_tensor.c) ---- */
enum { FZ_IN = 0, FZ_OUT = 1 };
uint32_t fz_dtype_size(uint32_t dtype);
/* A valid view of `shape` in a buffer of dev (inputs may broadcast with
 * zero strides; outputs never alias themselves). Returns 0 if no buffer. */
int fz_view(Fuzz *f, int dev, uint32_t dtype, uint32_t rank, const int64_t *shape, int role,
            const WgcBuffer *avoid, WgcTensor *t);
/* Make one field of the view hostile. */
void fz_mutate_view(Fuzz *f, WgcTensor *t);
/* Why the view is invalid by the header's rules, or NULL if it is valid. */
const char *fz_view_invalid(const Fuzz *f, const WgcTensor *t, int role);
int fz_tensor_dev(const Fuzz *f, const WgcTensor *t);
void fz_random_shape(Fuzz *f, uint32_t rank, int64_t *shape, uint64_t max_elems);

/* ---- one operator call (fuzz_op.c) ---- */
typedef struct FzArg {
    WgcTensor t;
    const WgcTensor *p; /* &t, or NULL when the fuzzer passes NULL */
    int role;           /* FZ_IN or FZ_OUT */
    int optional;       /* NULL is allowed */
} FzArg;

typedef struct FzOp {
    int dev, st;
    WgcStream *stream;
    int mutated; /* something hostile was done: no verdict that it must succeed */
    FzArg *args[8];
    int nargs;
    const WgcBuffer *out_buffer;
    int watched;
    FzSum before;
    char note[128]; /* the operator's own parameters, for reports */
} FzOp;

/* Pick a device and a stream; 0 if there is none. */
int fz_op_begin(Fuzz *f, FzOp *op);
/* A valid view for an argument. Build the output first: inputs then stay
 * out of its buffer. Returns 0 if no buffer could be had. */
int fz_op_arg(Fuzz *f, FzOp *op, FzArg *a, int role, uint32_t dtype, uint32_t rank, const int64_t *shape);
/* An optional argument passed as NULL. */
void fz_op_null_arg(FzOp *op, FzArg *a);
/* Often, make one or two arguments (or the stream) hostile. */
void fz_op_mutate(Fuzz *f, FzOp *op);
/* Start the checked call: the shared rules for views, devices and NULLs;
 * an unmutated call must succeed. */
void fz_op_call(Fuzz *f, FzOp *op, const char *name);
WgcStatus fz_op_end(Fuzz *f, FzOp *op, WgcStatus s);
/* True if two views share a buffer. */
int fz_same_buffer(const FzArg *a, const FzArg *b);

/* ---- WGSL (fuzz_wgsl.c) ---- */
typedef struct FzSource {
    char *text;          /* malloc'd, NUL-terminated */
    const char *entry;   /* may point into static storage */
    FzKernelSig sig;
    const char *must_fail; /* why no correct library may compile it */
    int must_compile;      /* valid WGSL within every limit */
    int bounds_unknown;    /* may index out of bounds: never compile it with skip_bounds_checks */
} FzSource;
void fz_wgsl(Fuzz *f, const WgcAdapterInfo *info, FzSource *out);

/* ---- actions: each file has a table ending with {NULL, NULL, 0} ---- */
typedef void (*FzAction)(Fuzz *f);
typedef struct FzActionDef {
    const char *name;
    FzAction run;
    int weight;
} FzActionDef;
extern const FzActionDef fz_device_actions[];
extern const FzActionDef fz_memory_actions[];
extern const FzActionDef fz_kernel_actions[];
extern const FzActionDef fz_stream_actions[];
extern const FzActionDef fz_elementwise_actions[];
extern const FzActionDef fz_tensor_op_actions[];
extern const FzActionDef fz_probe_actions[];
extern const FzActionDef fz_graph_actions[];
extern const FzActionDef fz_multi_device_actions[];

/* Pipeline-cache paths inside the private directory (fuzz_act_device.c). */
int fz_make_cache_dir(Fuzz *f);
void fz_check_cache_dir(Fuzz *f);
void fz_remove_cache_dir(Fuzz *f);
const char *fz_cache_path(Fuzz *f, char *buf, size_t n);

/* Known computations (fuzz_probe.c). */
void fz_check_probes(Fuzz *f, int all);
void fz_check_probes_of(Fuzz *f, int dev); /* check and drop the probes of one device */
int fz_health_check(Fuzz *f);

#endif
