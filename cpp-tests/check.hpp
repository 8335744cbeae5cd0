// Minimal checks for the C++ tests: report the line and go on, exit 1 at the end.
#pragma once
#include <cmath>
#include <cstdio>

static int g_failures = 0;

#define CHECK(cond)                                                               \
    do {                                                                          \
        if (!(cond)) {                                                            \
            std::fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
            g_failures++;                                                         \
        }                                                                         \
    } while (0)

#define CHECK_NEAR(a, b, tol) CHECK(std::fabs(static_cast<double>(a) - static_cast<double>(b)) <= (tol))

static int finish(const char *name) {
    if (g_failures) {
        std::fprintf(stderr, "%s: %d check(s) failed\n", name, g_failures);
        return 1;
    }
    std::printf("%s: all checks passed\n", name);
    return 0;
}
