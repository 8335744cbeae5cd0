/* SplitMix64: the same numbers on every platform, and a stream per case so
 * that case k can be rerun alone. */
#include "diff.h"

Rng rng_seeded(uint64_t seed, uint64_t stream) {
    Rng r;
    r.s = seed * 0x9E3779B97F4A7C15ull ^ (stream + 0x632BE59BD9B4E019ull) * 0xD1B54A32D192ED03ull;
    rng_u64(&r);
    return r;
}

uint64_t rng_u64(Rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double rng_unit(Rng *r) { return (double)(rng_u64(r) >> 11) * (1.0 / 9007199254740992.0); }

double rng_range(Rng *r, double lo, double hi) { return lo + (hi - lo) * rng_unit(r); }

int rng_int(Rng *r, int lo, int hi) { return lo + (int)(rng_u64(r) % (uint64_t)(hi - lo + 1)); }

int rng_chance(Rng *r, double p) { return rng_unit(r) < p; }
