/* Differential test: every wgc_op_* operator through the C ABI against
 * double-precision references (c-tests/diff/), on random shapes (ranks 0-8,
 * odd, size-0 and size-1 dims), random views (transposed, sliced, reversed,
 * zero strides, offsets), every dtype an operator takes, and inputs with NaN,
 * +-inf, huge and tiny magnitudes. Every buffer element outside the output
 * views must keep its value (inputs and a sentinel pattern).
 *
 * Case k draws everything from (seed, k), and cases cycle through the
 * operators, so a run is reproducible and a failing case reruns alone:
 *   test_diff [--seed N] [--seconds S] [--cases N] [--case K] [--op NAME]
 * runs cases 0, 1, ... until S seconds have passed (default 100) and every
 * operator has run at least once, or N cases; --case K runs case K only,
 * --op NAME only that operator's cases; --dump prints the values of a
 * failing case's tensors. Exit status 1 if any case failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "diff/diff_ops.h"
#include "test_util.h"

/* The operators in the order cases take them; the ones with many variants
 * (ops, dtypes) appear more than once. */
const DiffOp DIFF_OPS[] = {
    {"binary", run_binary},
    {"binary_scalar", run_binary_scalar},
    {"unary", run_unary},
    {"leaky_relu", run_leaky_relu},
    {"clamp", run_clamp},
    {"fma", run_fma},
    {"where", run_where},
    {"copy", run_copy},
    {"permute", run_permute},
    {"transpose", run_transpose},
    {"cast", run_cast},
    {"fill", run_fill},
    {"arange", run_arange},
    {"random_uniform", run_random_uniform},
    {"random_normal", run_random_normal},
    {"reduce", run_reduce},
    {"var", run_var},
    {"std", run_std},
    {"softmax", run_softmax},
    {"log_softmax", run_log_softmax},
    {"layer_norm", run_layer_norm},
    {"rms_norm", run_rms_norm},
    {"batch_norm", run_batch_norm},
    {"gemm", run_gemm},
    {"matmul", run_matmul},
    {"gemm_epilogue", run_gemm_epilogue},
    {"conv2d", run_conv2d},
    {"max_pool2d", run_max_pool2d},
    {"avg_pool2d", run_avg_pool2d},
    {"global_avg_pool2d", run_global_avg_pool2d},
    {"attention", run_attention},
    {"binary", run_binary},
    {"unary", run_unary},
    {"reduce", run_reduce},
    {"binary_scalar", run_binary_scalar},
    {"expr", run_expr},
    {"expr_reduce", run_expr_reduce},
};
const int DIFF_OP_COUNT = (int)(sizeof DIFF_OPS / sizeof DIFF_OPS[0]);

/* Index of the first table entry with op's name (statistics per operator). */
static int op_slot(int k) {
    for (int j = 0; j < DIFF_OP_COUNT; j++)
        if (strcmp(DIFF_OPS[j].name, DIFF_OPS[k].name) == 0) return j;
    return k;
}

/* The operators WGC_DISABLE_SUBGROUPS switches to other kernels. */
static int has_subgroup_kernels(const char *op) {
    static const char *const family[] = {"reduce", "var", "std", "softmax", "log_softmax", "layer_norm", "rms_norm"};
    for (size_t k = 0; k < sizeof family / sizeof family[0]; k++)
        if (strcmp(op, family[k]) == 0) return 1;
    return 0;
}

static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void usage(void) {
    fprintf(stderr, "usage: test_diff [--seed N] [--seconds S] [--cases N] [--case K] [--op NAME] [--dump]\n");
    exit(2);
}

int main(int argc, char **argv) {
    uint64_t seed = 1;
    double seconds = 100;
    long max_cases = -1, only_case = -1;
    const char *only_op = NULL;
    int dump = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dump") == 0) {
            dump = 1;
            continue;
        }
        if (i + 1 >= argc) usage();
        if (strcmp(argv[i], "--seed") == 0) seed = strtoull(argv[++i], NULL, 0);
        else if (strcmp(argv[i], "--seconds") == 0) seconds = atof(argv[++i]);
        else if (strcmp(argv[i], "--cases") == 0) max_cases = atol(argv[++i]);
        else if (strcmp(argv[i], "--case") == 0) only_case = atol(argv[++i]);
        else if (strcmp(argv[i], "--op") == 0) only_op = argv[++i];
        else usage();
    }
    int op_known = only_op == NULL;
    for (int k = 0; k < DIFF_OP_COUNT; k++) op_known |= only_op && strcmp(DIFF_OPS[k].name, only_op) == 0;
    if (!op_known) {
        fprintf(stderr, "test_diff: unknown operator %s\n", only_op);
        return 2;
    }

    int subgroups_preset = getenv("WGC_DISABLE_SUBGROUPS") != NULL;
    TestEnv env = test_env();
    /* A device without the subgroup kernels (devices read their settings
     * when created), unless the caller chose already. */
    TestEnv shared_env = subgroups_preset ? env : test_env_setting("WGC_DISABLE_SUBGROUPS", "1");
    long cases[64] = {0}, failed[64] = {0}, total = 0, total_failed = 0;
    double start = now_seconds();
    for (long k = only_case >= 0 ? only_case : 0;; k++) {
        int slot = op_slot((int)(k % DIFF_OP_COUNT));
        if (!only_op || strcmp(DIFF_OPS[slot].name, only_op) == 0) {
            Case c;
            /* Every third round of operators runs the reduction family's
             * workgroup-memory kernels (unless the caller chose already). */
            int off = !subgroups_preset && (k / DIFF_OP_COUNT) % 3 == 2;
            const TestEnv *e = off ? &shared_env : &env;
            case_begin(&c, e->device, e->stream, (int)e->info.has_f16, seed, k, DIFF_OPS[slot].name);
            if (off && has_subgroup_kernels(DIFF_OPS[slot].name)) case_param(&c, "WGC_DISABLE_SUBGROUPS=1");
            c.verbose_failures = failed[slot] < 3; /* full reports for the first few per operator */
            c.dump = dump;
            DIFF_OPS[slot].run(&c);
            case_end(&c);
            cases[slot]++;
            total++;
            if (c.failed) failed[slot]++, total_failed++;
        }
        if (only_case >= 0) break;
        if (max_cases >= 0) {
            if (total >= max_cases) break;
            continue;
        }
        int all_ran = 1;
        for (int j = 0; j < DIFF_OP_COUNT; j++)
            if (op_slot(j) == j && (!only_op || strcmp(DIFF_OPS[j].name, only_op) == 0)) all_ran &= cases[j] > 0;
        if (all_ran && now_seconds() - start >= seconds) break;
    }
    printf("test_diff: seed %llu, %ld cases in %.1f s\n", (unsigned long long)seed, total, now_seconds() - start);
    for (int j = 0; j < DIFF_OP_COUNT; j++)
        if (op_slot(j) == j && cases[j]) printf("  %-18s %5ld cases, %ld failed\n", DIFF_OPS[j].name, cases[j], failed[j]);
    printf("test_diff: %ld of %ld cases failed\n", total_failed, total);
    if (!subgroups_preset) test_env_release(&shared_env);
    test_env_release(&env);
    return total_failed ? 1 : 0;
}
