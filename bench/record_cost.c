/* Host cost of recording small operators, without the GPU's time: the wall
 * clock of a loop that records N operators (no waits inside it), per
 * operator, in three forms:
 *
 *   record N     y = x * 2, x = y * 0.5 into existing buffers (2N operators)
 *   alloc N      each operator writes a new buffer, the previous one is
 *                released (what a Python loop does), uninitialised where
 *                the library has wgc_buffer_create_uninit
 *   alloc0 N     the same with zero-initialised buffers (wgc_buffer_create)
 *   trip N       N round trips: write 4 KiB, x * 2, read 4 KiB
 *   replay N     the 2N operators of `record` captured once into a graph,
 *                then replayed 10 times (each replay flushed): host time
 *                per replayed dispatch, with the flush that encodes it
 *
 * Each run checks its result against a host reference before printing.
 * Under callgrind, count only the calls that record (instructions per
 * operator: the difference of two N divided by their difference):
 *   valgrind --tool=callgrind --toggle-collect='wgc_op_*' \
 *            --toggle-collect='wgc_buffer_create*' --toggle-collect=wgc_buffer_release \
 *            ./record_cost record 1000
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "wgcompute.h"

#if defined(__GNUC__) && !defined(_WIN32)
#pragma weak wgc_buffer_create_uninit
#pragma weak wgc_stream_begin_capture
#pragma weak wgc_stream_end_capture
#pragma weak wgc_graph_replay
#endif

#define N_ELEMS 4096

static void check(WgcStatus s, const char *what) {
    if (s != WGC_OK) {
        fprintf(stderr, "%s: %s (%s)\n", what, wgc_status_string(s), wgc_last_error_message());
        exit(1);
    }
}

static double now_us(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static WgcDevice *dev;
static WgcStream *stream;

static WgcBuffer *new_buffer(int zeroed) {
    WgcBuffer *b = NULL;
    if (!zeroed && &wgc_buffer_create_uninit)
        check(wgc_buffer_create_uninit(dev, 4 * N_ELEMS, WGC_BUFFER_USAGE_STORAGE, &b), "create_uninit");
    else
        check(wgc_buffer_create(dev, 4 * N_ELEMS, WGC_BUFFER_USAGE_STORAGE, &b), "create");
    return b;
}

static WgcTensor view(const WgcBuffer *b) {
    WgcTensor t;
    memset(&t, 0, sizeof t);
    t.buffer = b;
    t.dtype = WGC_DTYPE_F32;
    t.rank = 1;
    t.shape[0] = N_ELEMS;
    t.strides[0] = 1;
    return t;
}

/* n operators, each writing a new buffer from the previous one (x + 1,
 * then - 1, ...), the last result copied back into x: x keeps its values. */
static void alloc_chain(WgcBuffer *x, long n, int zeroed) {
    WgcBuffer *cur = x;
    wgc_buffer_retain(cur);
    for (long i = 0; i < n; i++) {
        WgcBuffer *next = new_buffer(zeroed);
        WgcTensor a = view(cur), b = view(next);
        check(wgc_op_binary_scalar(stream, WGC_BINARY_OP_ADD, &a, i % 2 ? -1.0 : 1.0, &b), "add");
        wgc_buffer_release(cur);
        cur = next;
    }
    WgcTensor a = view(cur), b = view(x);
    if (n % 2) /* an odd count leaves +1 */
        check(wgc_op_binary_scalar(stream, WGC_BINARY_OP_ADD, &a, -1.0, &b), "add");
    else
        check(wgc_op_copy(stream, &a, &b), "copy");
    wgc_buffer_release(cur);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "record";
    long n = argc > 2 ? atol(argv[2]) : 2000;
    WgcInstance *inst;
    check(wgc_instance_create(WGC_ABI_VERSION, &inst), "instance");
    check(wgc_device_create(inst, NULL, &dev), "device");
    check(wgc_stream_create(dev, &stream), "stream");

    float host[N_ELEMS], got[N_ELEMS];
    for (int i = 0; i < N_ELEMS; i++) host[i] = (float)(i % 97) * 0.25f - 3.0f;
    WgcBuffer *x = new_buffer(1), *y = new_buffer(1);
    check(wgc_buffer_write(x, 0, host, sizeof host), "write");
    WgcTensor tx = view(x), ty = view(y);
    /* Warm caches (kernels, bind groups, the pool) outside the timed loop. */
    check(wgc_op_binary_scalar(stream, WGC_BINARY_OP_MUL, &tx, 1.0, &ty), "warm");
    check(wgc_stream_synchronize(stream), "sync");

    int zeroed = !strcmp(mode, "alloc0");
    if (!strcmp(mode, "alloc") || zeroed) {
        /* The pool fills up during a first round (every output a driver
         * allocation): warm it, then time a second round. */
        alloc_chain(x, n, zeroed);
        check(wgc_stream_synchronize(stream), "sync");
    }
    double t0 = now_us();
    if (!strcmp(mode, "record")) {
        /* x * 2, then * 0.5: exact, so x keeps its values */
        for (long i = 0; i < n; i++) {
            check(wgc_op_binary_scalar(stream, WGC_BINARY_OP_MUL, &tx, 2.0, &ty), "mul");
            check(wgc_op_binary_scalar(stream, WGC_BINARY_OP_MUL, &ty, 0.5, &tx), "mul");
        }
        n *= 2;
    } else if (!strcmp(mode, "alloc") || zeroed) {
        alloc_chain(x, n, zeroed);
    } else if (!strcmp(mode, "replay")) {
        if (!&wgc_graph_replay) {
            fprintf(stderr, "replay: this library has no graphs\n");
            return 2;
        }
        WgcGraph *g = NULL;
        check(wgc_stream_begin_capture(stream), "begin_capture");
        for (long i = 0; i < n; i++) {
            check(wgc_op_binary_scalar(stream, WGC_BINARY_OP_MUL, &tx, 2.0, &ty), "mul");
            check(wgc_op_binary_scalar(stream, WGC_BINARY_OP_MUL, &ty, 0.5, &tx), "mul");
        }
        check(wgc_stream_end_capture(stream, &g), "end_capture");
        check(wgc_graph_replay(g, stream, NULL), "warm replay");
        check(wgc_stream_synchronize(stream), "sync");
        t0 = now_us();
        for (int r = 0; r < 10; r++) {
            check(wgc_graph_replay(g, stream, NULL), "replay");
            check(wgc_stream_flush(stream), "flush");
        }
        wgc_graph_release(g);
        n *= 20;
    } else if (!strcmp(mode, "trip")) {
        for (long i = 0; i < n; i++) {
            check(wgc_buffer_write(x, 0, host, sizeof host), "write");
            check(wgc_op_binary_scalar(stream, WGC_BINARY_OP_MUL, &tx, 2.0, &ty), "mul");
            check(wgc_buffer_read(y, 0, got, sizeof got), "read");
        }
        for (int i = 0; i < N_ELEMS; i++)
            if (got[i] != 2.0f * host[i]) {
                fprintf(stderr, "trip: element %d is %g, expected %g\n", i, got[i], 2.0 * host[i]);
                return 1;
            }
    } else {
        fprintf(stderr, "usage: %s record|alloc|alloc0|trip|replay [N]\n", argv[0]);
        return 2;
    }
    double t1 = now_us();
    check(wgc_stream_synchronize(stream), "sync");
    double t2 = now_us();
    if (strcmp(mode, "trip")) {
        check(wgc_buffer_read(x, 0, got, sizeof got), "read");
        for (int i = 0; i < N_ELEMS; i++) {
            double want = host[i];
            if (fabs(got[i] - want) > 1e-5 * fabs(want) + 1e-6) {
                fprintf(stderr, "%s: element %d is %g, expected %g\n", mode, i, got[i], want);
                return 1;
            }
        }
    }
    printf("%s: %ld operators, host %.2f us each while recording, %.2f us each with the final wait\n", mode, n,
           (t1 - t0) / n, (t2 - t0) / n);
    wgc_buffer_release(x);
    wgc_buffer_release(y);
    wgc_stream_release(stream);
    wgc_device_release(dev);
    wgc_instance_release(inst);
    return 0;
}
