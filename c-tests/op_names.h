/* Names of the header's operator enums, for the tests' messages. Each table
 * is checked against the header's count constant (WGC_NUM_*_OPS), so an
 * operator added to the header without a name here fails to build. */
#ifndef WGC_TEST_OP_NAMES_H
#define WGC_TEST_OP_NAMES_H

#include <stdio.h>
#include <stdlib.h>

#include "wgcompute.h"

/* A compile-time check in C99: a negative array size is an error. */
#define OP_NAMES_COVER(names, count) ((void)sizeof(char[sizeof(names) / sizeof((names)[0]) == (count) ? 1 : -1]))

static inline const char *binary_op_name(int op) {
    static const char *const names[] = {"add", "sub", "mul", "div", "pow", "maximum", "minimum",
                                        "eq",  "ne",  "lt",  "le",  "gt",  "ge"};
    OP_NAMES_COVER(names, WGC_NUM_BINARY_OPS);
    return op >= 0 && op < WGC_NUM_BINARY_OPS ? names[op] : "(unknown binary op)";
}

static inline const char *unary_op_name(int op) {
    static const char *const names[] = {"neg", "abs",     "exp",  "log",      "sqrt",      "rsqrt", "sin",
                                        "cos", "tanh",    "sigmoid", "relu", "gelu_erf", "gelu_tanh", "silu",
                                        "relu6", "hardswish"};
    OP_NAMES_COVER(names, WGC_NUM_UNARY_OPS);
    return op >= 0 && op < WGC_NUM_UNARY_OPS ? names[op] : "(unknown unary op)";
}

static inline const char *reduce_op_name(int op) {
    static const char *const names[] = {"sum", "mean", "max", "min", "prod", "argmax", "argmin"};
    OP_NAMES_COVER(names, WGC_NUM_REDUCE_OPS);
    return op >= 0 && op < WGC_NUM_REDUCE_OPS ? names[op] : "(unknown reduce op)";
}

/* A test's reference that meets an operator it has no case for (one the
 * header gained): stop loudly rather than check it against another op's. */
#define NO_REFERENCE_FOR(family, name)                                                                   \
    do {                                                                                                 \
        fprintf(stderr, "no reference for %s op %s: add one to this test\n", (family), (name));         \
        abort();                                                                                         \
    } while (0)

#endif
