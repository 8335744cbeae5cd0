/* Host values as doubles moved to and from f32 or f16 buffers, for tests
 * that compute their references in double precision. Include after
 * test_util.h. */
#ifndef WGC_TEST_VALS_H
#define WGC_TEST_VALS_H

/* r rounded to dt (f16 or f32), as a double. */
static double rounded(WgcDtype dt, double r) {
    return dt == WGC_DTYPE_F16 ? f16_to_f32(f32_to_f16((float)r)) : (float)r;
}

/* A buffer of dev holding v[0 .. n) in dt (at least 4 bytes). */
static WgcBuffer *upload_vals(WgcDevice *dev, WgcDtype dt, const double *v, size_t n) {
    void *host = calloc(n + 2, 4);
    for (size_t i = 0; i < n; i++) {
        if (dt == WGC_DTYPE_F16) ((uint16_t *)host)[i] = f32_to_f16((float)v[i]);
        else ((float *)host)[i] = (float)v[i];
    }
    WgcBuffer *b = upload(dev, host, (n ? n : 1) * 4);
    free(host);
    return b;
}

/* The first n values of b (dt) as doubles; the caller frees them. */
static double *read_vals(WgcBuffer *b, WgcDtype dt, size_t n) {
    void *host = calloc(n + 2, 4);
    double *v = calloc(n + 1, sizeof(double));
    CHECK(wgc_buffer_read(b, 0, host, n * (dt == WGC_DTYPE_F16 ? 2 : 4)));
    for (size_t i = 0; i < n; i++)
        v[i] = dt == WGC_DTYPE_F16 ? f16_to_f32(((uint16_t *)host)[i]) : ((float *)host)[i];
    free(host);
    return v;
}

/* n values uniform in [lo, hi), each exactly representable in dt. */
static double *random_vals(WgcDtype dt, size_t n, double lo, double hi) {
    double *v = malloc((n + 1) * sizeof(double));
    for (size_t i = 0; i < n; i++) v[i] = rounded(dt, rng_uniform(lo, hi));
    return v;
}

#endif
