/* Random numbers (xorshift64*, the same sequence everywhere) and the
 * hostile values the fuzzer feeds into sizes, counts, enums and floats. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fuzz.h"

uint64_t fz_u64(Fuzz *f) {
    f->rng ^= f->rng >> 12;
    f->rng ^= f->rng << 25;
    f->rng ^= f->rng >> 27;
    return f->rng * 2685821657736338717ull;
}

uint32_t fz_below(Fuzz *f, uint32_t n) {
    return n ? (uint32_t)(fz_u64(f) % n) : 0;
}

int fz_chance(Fuzz *f, int percent) {
    return (int)fz_below(f, 100) < percent;
}

/* Boundaries where arithmetic on sizes goes wrong: word sizes, alignments,
 * 2^31, 2^32, 2^53, 2^63 and their neighbours. */
static const uint64_t EDGES[] = {
    0, 1, 2, 3, 4, 5, 7, 8, 12, 15, 16, 17, 31, 32, 64, 255, 256, 257, 1023, 1024, 4095, 4096,
    65535, 65536, 65537, 1u << 20, (1u << 24) + 1, 0x7fffffffull, 0x80000000ull, 0xfffffffcull, 0xffffffffull,
    0x100000000ull, 0x100000001ull, 0x100000010ull, 1ull << 33, 1ull << 53, 1ull << 62, 0x7fffffffffffffffull,
    0x8000000000000000ull, 0xfffffffffffffffcull, 0xffffffffffffffffull,
};

uint64_t fz_hostile_u64(Fuzz *f) {
    uint32_t n = (uint32_t)(sizeof EDGES / sizeof EDGES[0]);
    switch (fz_below(f, 8)) {
    case 0: return fz_u64(f);
    case 1: return fz_u64(f) >> fz_below(f, 64);
    case 2: return EDGES[fz_below(f, n)] + fz_below(f, 3) - 1; /* a neighbour */
    default: return EDGES[fz_below(f, n)];
    }
}

uint32_t fz_hostile_u32(Fuzz *f) {
    uint64_t v = fz_hostile_u64(f);
    return fz_chance(f, 70) && v > 0xffffffffull ? (uint32_t)(v >> 32) : (uint32_t)v;
}

int64_t fz_hostile_i64(Fuzz *f) {
    uint64_t v = fz_hostile_u64(f);
    return fz_chance(f, 25) ? -(int64_t)(v & 0x7fffffffffffffffull) : (int64_t)v;
}

int32_t fz_hostile_i32(Fuzz *f) {
    return (int32_t)fz_hostile_u32(f);
}

double fz_hostile_double(Fuzz *f) {
    static const double V[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, 1e-3, 65504.0, 65520.0, 16777217.0,
                               2147483647.0, 2147483648.0, 4294967295.0, 4294967296.0, -2147483649.0,
                               1e30, -1e30, 1e300, -1e300, 1e-300, 5e-324, 3.4028234663852886e38,
                               3.5e38};
    switch (fz_below(f, 10)) {
    case 0: return NAN;
    case 1: return fz_chance(f, 50) ? INFINITY : -INFINITY;
    case 2: return (double)(int64_t)fz_u64(f) / (double)(1ull << fz_below(f, 63));
    default: return V[fz_below(f, (uint32_t)(sizeof V / sizeof V[0]))];
    }
}

int fz_listed(const char *list, const char *name) {
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

int fz_enabled(const Fuzz *f, const char *name) {
    return !fz_listed(f->skip, name);
}

uint32_t fz_struct_size(Fuzz *f, uint32_t real) {
    if (fz_chance(f, 75)) return real;
    uint32_t v;
    switch (fz_below(f, 4)) {
    case 0: return fz_below(f, 4);             /* smaller than struct_size itself */
    case 1: v = 4 + fz_below(f, real - 3); break; /* cut anywhere, pointers included */
    case 2: return real + 1 + fz_below(f, 64); /* a newer caller's larger struct */
    default: v = real - 1 - fz_below(f, 8); break; /* the last field cut short */
    }
    return v < real && !fz_enabled(f, "struct_size_cut") ? real : v;
}

uint32_t fz_enum(Fuzz *f, uint32_t count) {
    if (fz_chance(f, 90)) return fz_below(f, count);
    return fz_chance(f, 50) ? count + fz_below(f, 3) : fz_hostile_u32(f) | count;
}
