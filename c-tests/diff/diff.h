/* The differential test's shared vocabulary: a case (one randomly drawn call
 * of one operator), the tensors and buffers it uploads, its expected values
 * and the checks. Every case is reproducible from (seed, case number). */
#ifndef WGC_DIFF_H
#define WGC_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "wgcompute.h"

#define DIFF_MAX_TENSORS 8
#define DIFF_MAX_BUFFERS 8

/* ---- random numbers (diff_rng.c) ---- */

typedef struct Rng {
    uint64_t s;
} Rng;

Rng rng_seeded(uint64_t seed, uint64_t stream);
uint64_t rng_u64(Rng *r);
double rng_unit(Rng *r);                /* [0, 1) */
double rng_range(Rng *r, double lo, double hi);
int rng_int(Rng *r, int lo, int hi);    /* inclusive */
int rng_chance(Rng *r, double p);

/* ---- numbers as the dtypes store them (diff_numeric.c) ---- */

int dtype_is_float(WgcDtype d);
const char *dtype_name(WgcDtype d);
size_t dtype_size(WgcDtype d);
/* Round a double to the dtype: floats to nearest even (overflow to inf, f16
 * rounded once from the double); integers must already be in range. */
double dtype_round(WgcDtype d, double v);
uint16_t f16_bits_of(double v);
double f16_value(uint16_t h);
/* Largest finite value and smallest normal magnitude of a float dtype. */
double dtype_max(WgcDtype d);
double dtype_min_normal(WgcDtype d);
/* A scalar argument converted as wgc_op_binary_scalar documents: floats
 * rounded to nearest, integers truncated toward zero and saturated, NaN -> 0. */
double scalar_to_dtype(WgcDtype d, double v);
/* Wrap an integer value (held exactly in a double or int64) to i32 / u32. */
double wrap_i32(int64_t v);
double wrap_u32(int64_t v);

/* ---- buffers and tensor views (diff_tensor.c) ---- */

/* Host mirror of one GPU buffer: its bytes before the call (inputs' values
 * and a sentinel pattern everywhere else), after the call, and which
 * elements an output view may write. */
typedef struct DBuf {
    WgcBuffer *buf;
    size_t esize;
    size_t elems;
    size_t cap;
    uint8_t *init;
    uint8_t *after;
    uint8_t *writable;
    uint8_t *assigned; /* elements already given an input value */
    int id;
} DBuf;

typedef struct DTensor {
    const char *name;
    DBuf *b;
    WgcTensor t;   /* t.buffer is set when the case uploads its buffers */
    double *val;   /* logical values, row-major; outputs: read back after the call */
    size_t n;
    int is_output;
} DTensor;

/* How a view may be laid out in its buffer. */
enum {
    VIEW_ANY = 0,          /* row-major, transposed, padded, reversed, offset, inner gaps */
    VIEW_ZERO_STRIDES = 1, /* may also repeat elements (inputs only) */
};

/* ---- value generators (diff_values.c) ---- */

enum {
    VAL_NORMAL,    /* uniform in [lo, hi] */
    VAL_INTEGERS,  /* small integers: ties and exact equalities */
    VAL_WIDE,      /* log-uniform magnitudes from tiny to huge, both signs */
    VAL_SPECIAL,   /* NORMAL with NaN, +-inf, +-0, huge and tiny sprinkled in */
    VAL_OFFSET,    /* a large common offset plus a small spread */
    VAL_COUNT
};

typedef struct ValueSpec {
    WgcDtype dtype;
    int kind;
    double lo, hi;     /* NORMAL range */
    double huge;       /* largest magnitude drawn (WIDE, SPECIAL) */
    double tiny;       /* smallest non-zero magnitude drawn (WIDE, SPECIAL) */
    int no_nan;        /* SPECIAL without NaN */
    int no_inf;        /* SPECIAL without infinities */
    double offset;     /* OFFSET: centre */
    double p_special;  /* SPECIAL: share of special values */
    double min_abs;    /* NORMAL, SPECIAL, OFFSET: smaller magnitudes move up to this */
} ValueSpec;

/* Flags for value_spec_pick: which kinds an operator's documentation covers. */
enum {
    ALLOW_WIDE = 1,
    ALLOW_SPECIAL = 2,
    ALLOW_OFFSET = 4,
    ALLOW_INF = 8,  /* with ALLOW_SPECIAL */
    ALLOW_NAN = 16, /* with ALLOW_SPECIAL */
    ALLOW_ALL = ALLOW_WIDE | ALLOW_SPECIAL | ALLOW_INF | ALLOW_NAN,
};

double value_draw(Rng *r, const ValueSpec *s);
const char *value_kind_name(int kind);

/* ---- expected values and checks (diff_check.c) ---- */

enum {
    EXPECT_CLOSE = 0,       /* |got - ref| <= tol after rounding to the dtype; NaN matches NaN */
    EXPECT_SAME = 1,        /* the same value, sign of zero included; NaN matches NaN */
    EXPECT_NAN_OR_CLOSE = 2,/* the header leaves it open between NaN and the value */
};

typedef struct Expect {
    double ref;
    double tol;
    int kind;
    int has_alt; /* also accept exactly `alt` (NaN: any NaN) */
    double alt;
} Expect;

/* ---- one case (diff_check.c: its life and checks; diff_tensor.c: its tensors) ---- */

typedef struct Case Case;
/* Prints what a case's inputs were at output element i (for failure reports). */
typedef void (*ExplainFn)(Case *c, size_t i, char *buf, size_t len);

struct Case {
    WgcDevice *device;
    WgcStream *stream;
    int has_f16;
    uint64_t seed;
    long index;
    const char *op;
    Rng rng;
    DBuf bufs[DIFF_MAX_BUFFERS];
    int nbufs;
    DTensor tensors[DIFF_MAX_TENSORS];
    int ntensors;
    char params[512];
    int failed;
    int verbose_failures; /* full reports left to print */
    int dump;             /* on failure, print every input's values */
    void *user;            /* a runner's data for its ExplainFn */
};

void case_begin(Case *c, WgcDevice *dev, WgcStream *stream, int has_f16, uint64_t seed, long index, const char *op);
void case_end(Case *c);
/* Append "key=value" text to the case's parameter line. */
void case_param(Case *c, const char *fmt, ...);

/* A new tensor: an input filled from `spec` (values drawn per memory
 * location, so zero strides repeat them), or an output (spec NULL) whose
 * buffer holds the sentinel pattern. share: put it in the same buffer as
 * that tensor (same element size), after its region; NULL: a buffer of its own. */
DTensor *case_tensor(Case *c, const char *name, WgcDtype d, int rank, const int64_t *shape, int view,
                     const ValueSpec *spec, const DTensor *share);
/* An output that is the very view of `input` (in place). */
DTensor *case_in_place(Case *c, const char *name, const DTensor *input);
/* Set logical element i of an input before upload (keeps the layout). */
void case_set(Case *c, DTensor *t, size_t i, double v);

void case_upload(Case *c);
/* Read every buffer back and the outputs' logical values. */
void case_download(Case *c);
/* A call that must succeed; otherwise the case fails. Returns 1 on success. */
int case_expect_ok(Case *c, WgcStatus s, const char *call);
/* A call that must fail with `want`, leaving every buffer as it was. */
void case_expect_status(Case *c, WgcStatus s, WgcStatus want, const char *call);
/* Compare an output with its expectation; nonzero if any element is wrong. */
int case_check(Case *c, const DTensor *out, const Expect *e, ExplainFn explain);
/* Every element outside the outputs' views unchanged (inputs, padding, sentinel). */
int case_check_untouched(Case *c);
void case_fail(Case *c, const char *fmt, ...);

Expect *expect_alloc(size_t n);

/* Logical row-major index -> coordinates, and the element index in the buffer. */
void unravel(size_t i, int rank, const int64_t *shape, int64_t *coord);
int64_t view_element(const WgcTensor *t, size_t i);
size_t numel_of(int rank, const int64_t *shape);
/* Logical index into `in` of logical output element i (NumPy broadcasting). */
size_t broadcast_index(size_t i, const DTensor *out, const DTensor *in);
/* ExplainFn for elementwise operators: every input's value at output element
 * i; c->user must point to the output DTensor. */
void explain_inputs(Case *c, size_t i, char *buf, size_t len);

/* ---- random shapes and dtypes (diff_values.c) ---- */

/* A shape of rank in [rmin, rmax] with at most max_numel elements: odd sizes,
 * size-1 dims and (with p_zero) a size-0 dim. */
int draw_shape(Rng *r, int rmin, int rmax, size_t max_numel, double p_zero, int64_t *shape);
/* A shape that broadcasts to `out` (rank <= out's). */
int draw_broadcast_shape(Rng *r, int rank, const int64_t *out, int64_t *shape);
/* Make n input shapes (each from draw_broadcast_shape) broadcast to exactly
 * `so`: dims no input supplies are given to a random input. */
void complete_broadcast(Rng *r, int n, int *ranks, int64_t (*shapes)[WGC_MAX_RANK], int ro, const int64_t *so);
/* Pick a dtype from `allowed` (f16 dropped without adapter support). */
WgcDtype draw_dtype(Case *c, const WgcDtype *allowed, int count);
/* A value spec for dtype d: one of NORMAL, INTEGERS and the kinds `flags` allow. */
ValueSpec draw_values(Case *c, WgcDtype d, double lo, double hi, int flags);

/* ---- the operators ---- */

typedef struct DiffOp {
    const char *name;
    void (*run)(Case *c);
} DiffOp;

#endif
