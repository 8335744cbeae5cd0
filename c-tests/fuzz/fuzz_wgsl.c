/* WGSL for wgc_kernel_create: valid kernels of many shapes (bindings,
 * element types, workgroup sizes literal and `override`, workgroup and
 * private arrays), and hostile ones: garbage bytes, token soup, mutated
 * valid kernels, deep nesting, huge arrays, very long sources, long flat
 * programs (many statements, many functions), features the library
 * refuses. Every generated kernel indexes only in bounds, so
 * compiling it with skip_bounds_checks is legal; none loops. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

typedef struct Str {
    char *p;
    size_t len, cap;
} Str;

static void put(Str *s, const char *fmt, ...) {
    va_list ap;
    for (;;) {
        size_t room = s->cap - s->len;
        va_start(ap, fmt);
        int n = vsnprintf(s->p ? s->p + s->len : NULL, s->p ? room : 0, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if (s->p && (size_t)n < room) {
            s->len += (size_t)n;
            return;
        }
        size_t cap = s->cap ? s->cap : 256;
        while (cap - s->len <= (size_t)n) cap *= 2;
        char *p = realloc(s->p, cap);
        if (!p) abort();
        s->p = p;
        s->cap = cap;
    }
}

static int utf8_valid(const unsigned char *s) {
    while (*s) {
        int n = *s < 0x80 ? 0 : (*s & 0xe0) == 0xc0 ? 1 : (*s & 0xf0) == 0xe0 ? 2 : (*s & 0xf8) == 0xf0 ? 3 : -1;
        if (n < 0 || (n == 1 && *s < 0xc2)) return 0;
        for (int i = 1; i <= n; i++)
            if ((s[i] & 0xc0) != 0x80) return 0;
        s += n + 1;
    }
    return 1;
}

static const char *TYPES[] = {"f32", "i32", "u32", "f16"};

static void add_binding(FzKernelSig *sig, uint32_t binding, int kind, uint32_t elem, uint64_t min_size) {
    if (sig->count == FZ_MAX_SIG_BINDINGS) return;
    FzBindingSig *b = &sig->b[sig->count++];
    b->binding = binding;
    b->kind = kind;
    b->elem_size = elem;
    b->min_size = min_size;
}

/* Three distinct binding numbers, occasionally beyond what wgpu allows. */
static void binding_numbers(Fuzz *f, uint32_t *n) {
    static const uint32_t NUMS[] = {0, 1, 2, 3, 4, 7, 8, 31, 100, 999, 1000, 65535};
    int hostile = fz_chance(f, 5);
    for (int i = 0; i < 3; i++) {
        n[i] = hostile ? NUMS[fz_below(f, 12)] : (uint32_t)i + (fz_chance(f, 20) ? 4 : 0);
        for (int j = 0; j < i; j++)
            if (n[j] == n[i]) n[i] = n[j] + 1 + (uint32_t)i * 3;
    }
}

static uint32_t wg_dim(Fuzz *f, int first) {
    static const uint32_t HOSTILE[] = {0, 1025, 2048, 4096, 65536, 0xffffffffu};
    static const uint32_t OK[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 1024};
    if (fz_chance(f, 8)) return HOSTILE[fz_below(f, 6)];
    return first ? OK[fz_below(f, 10)] : (fz_chance(f, 70) ? 1 : OK[fz_below(f, 6)]);
}

static int wg_ok(const WgcLimits *l, const uint32_t *wg) {
    uint64_t inv = (uint64_t)wg[0] * wg[1] * wg[2];
    return wg[0] && wg[1] && wg[2] && wg[0] <= l->max_compute_workgroup_size_x &&
           wg[1] <= l->max_compute_workgroup_size_y && wg[2] <= l->max_compute_workgroup_size_z &&
           inv <= l->max_compute_invocations_per_workgroup;
}

/* The valid family: y[i] = y[i] (+ x[..]) (+ p.k) (+ tile[..]) (+ scratch[..]). */
static void gen_valid(Fuzz *f, const WgcAdapterInfo *info, Str *s, FzSource *out, int use_override) {
    const WgcLimits *l = &info->limits;
    uint32_t t = fz_below(f, info->has_f16 ? 4 : 3);
    const char *T = TYPES[t];
    uint32_t es = t == 3 ? 2 : 4, nb[3];
    binding_numbers(f, nb);
    int has_x = fz_chance(f, 60), has_p = fz_chance(f, 50);
    int has_tile = fz_chance(f, 20), has_priv = fz_chance(f, 15);
    static const uint32_t TILE[] = {1, 16, 1024, 8192, 8193, 65536, 1u << 20, 0};
    /* Larger private arrays compile slowly in software drivers: gen_huge has them. */
    static const uint32_t PRIV[] = {1, 16, 64, 256};
    uint32_t tile = TILE[fz_chance(f, 80) ? fz_below(f, 4) : fz_below(f, 8)];
    uint32_t priv = PRIV[fz_below(f, 4)];
    uint32_t wg[3] = {wg_dim(f, 1), wg_dim(f, 0), wg_dim(f, 0)};
    int ok = wg_ok(l, wg) && nb[0] < 1000 && nb[1] < 1000 && nb[2] < 1000;

    if (t == 3) put(s, "enable f16;\n");
    if (has_p) put(s, "struct P { k: f32, n: u32 }\n");
    if (has_x) {
        put(s, "@group(0) @binding(%u) var<storage, read> x: array<%s>;\n", nb[0], T);
        add_binding(&out->sig, nb[0], FZ_BIND_READ, es, es);
    }
    put(s, "@group(0) @binding(%u) var<storage, read_write> y: array<%s>;\n", nb[1], T);
    add_binding(&out->sig, nb[1], FZ_BIND_RW, es, es);
    if (has_p) {
        put(s, "@group(0) @binding(%u) var<uniform> p: P;\n", nb[2]);
        add_binding(&out->sig, nb[2], FZ_BIND_UNIFORM, 4, 8);
    }
    if (has_tile) {
        if (tile == 0 || (uint64_t)tile * 4 > l->max_compute_workgroup_storage_size)
            out->must_fail = "workgroup memory beyond the adapter's limit", ok = 0;
        put(s, "var<workgroup> tile: array<f32, %u>;\n", tile);
    }
    if (has_tile) out->sig.cost += tile / 64;
    if (has_priv) {
        out->sig.cost += priv / 64;
        put(s, "var<private> scratch: array<f32, %u>;\n", priv);
    }
    if (use_override) {
        int typed = fz_chance(f, 50);
        put(s, "%soverride WX%s = %uu;\n", fz_chance(f, 30) ? "@id(7) " : "", typed ? ": u32" : "", wg[0]);
        put(s, "@compute @workgroup_size(WX, %u, %u)\n", wg[1], wg[2]);
    } else {
        put(s, "@compute @workgroup_size(%u, %u, %u)\n", wg[0], wg[1], wg[2]);
    }
    if (!wg_ok(l, wg)) out->must_fail = "a workgroup size beyond the adapter's limits";
    put(s, "fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) li: u32) {\n");
    if (has_tile) put(s, "    tile[li %% %uu] = f32(li);\n    workgroupBarrier();\n", tile ? tile : 1);
    put(s, "    let i = gid.x + gid.y * 4096u + gid.z * 65536u;\n");
    put(s, "    if (i < arrayLength(&y)) {\n        var v = y[i];\n");
    if (has_x) put(s, "        v = v + x[i %% arrayLength(&x)];\n");
    if (has_p) put(s, "        v = v * %s(0.5) + %s(p.k) + %s(p.n %% 3u);\n", T, T, T);
    if (has_tile) put(s, "        v = v + %s(tile[(li + 1u) %% %uu]);\n", T, tile ? tile : 1);
    if (has_priv) put(s, "        scratch[i %% %uu] = f32(i);\n        v = v + %s(scratch[(i + 1u) %% %uu]);\n", priv, T, priv);
    put(s, "        y[i] = v;\n    }\n}\n");
    memcpy(out->sig.wg, wg, sizeof wg);
    out->sig.wg_known = 1;
    out->must_compile = ok && !out->must_fail;
}

/* Nesting that recursive-descent parsers and validators must survive. */
static void gen_deep(Fuzz *f, Str *s, FzSource *out) {
    static const uint32_t DEPTH[] = {8, 64, 512, 4096, 15000, 40000};
    uint32_t n = DEPTH[fz_below(f, 6)], kind = fz_below(f, 7);
    put(s, "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n");
    add_binding(&out->sig, 0, FZ_BIND_RW, 4, 4);
    if (kind == 6) put(s, "fn g(a: f32) -> f32 { return a * 0.5; }\n");
    put(s, "@compute @workgroup_size(1)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n");
    put(s, "    let a = y[0];\n");
    switch (kind) {
    case 0: /* a + a + ... */
    case 1: /* a * a * ... */
        put(s, "    y[0] = a");
        for (uint32_t i = 1; i < n; i++) put(s, kind ? " * a" : " + a");
        put(s, ";\n");
        break;
    case 2: /* ((((a)))) */
        put(s, "    y[0] = ");
        for (uint32_t i = 0; i < n; i++) put(s, "(");
        put(s, "a");
        for (uint32_t i = 0; i < n; i++) put(s, ")");
        put(s, ";\n");
        break;
    case 3: /* - - - a */
        put(s, "    y[0] = ");
        for (uint32_t i = 0; i < n; i++) put(s, "- ");
        put(s, "a;\n");
        break;
    case 4: /* { { { } } } */
        for (uint32_t i = 0; i < n; i++) put(s, "{");
        put(s, " y[0] = a + 1.0; ");
        for (uint32_t i = 0; i < n; i++) put(s, "}");
        put(s, "\n");
        break;
    case 5: /* if (...) { if (...) { ... } } */
        for (uint32_t i = 0; i < n; i++) put(s, "if (gid.x == 0u) { ");
        put(s, "y[0] = a;");
        for (uint32_t i = 0; i < n; i++) put(s, " }");
        put(s, "\n");
        break;
    default: /* g(g(g(a))) */
        put(s, "    y[0] = ");
        for (uint32_t i = 0; i < n; i++) put(s, "g(");
        put(s, "a");
        for (uint32_t i = 0; i < n; i++) put(s, ")");
        put(s, ";\n");
        break;
    }
    put(s, "}\n");
    out->sig.wg[0] = out->sig.wg[1] = out->sig.wg[2] = 1;
    out->sig.wg_known = 1;
    out->must_compile = n <= 64;
}

/* Arrays at and past every size limit, in every address space. */
static void gen_huge(Fuzz *f, const WgcAdapterInfo *info, Str *s, FzSource *out) {
    static const uint64_t N[] = {1, 1024, 1u << 16, 1u << 26, 1u << 28, 1u << 30, 0xffffffffull, 0x100000000ull};
    uint64_t n = N[fz_below(f, 8)];
    uint32_t kind = fz_below(f, 5);
    put(s, "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n");
    add_binding(&out->sig, 0, FZ_BIND_RW, 4, 4);
    switch (kind) {
    case 0:
        put(s, "@group(0) @binding(1) var<storage, read_write> big: array<f32, %llu>;\n", (unsigned long long)n);
        add_binding(&out->sig, 1, FZ_BIND_RW, 4, 4 * n);
        break;
    case 1:
        put(s, "var<workgroup> big: array<f32, %llu>;\n", (unsigned long long)n);
        out->sig.cost += n / 64;
        if (n * 4 > info->limits.max_compute_workgroup_storage_size)
            out->must_fail = "workgroup memory beyond the adapter's limit";
        break;
    case 2:
        put(s, "var<private> big: array<f32, %llu>;\n", (unsigned long long)n);
        out->sig.cost += n / 64;
        break;
    case 3: /* a constant array with many elements */
        n = n > 20000 ? 20000 : n;
        put(s, "const big = array<f32, %llu>(", (unsigned long long)n);
        for (uint64_t i = 0; i < n; i++) put(s, i ? ", %llu.0" : "%llu.0", (unsigned long long)(i % 7));
        put(s, ");\n");
        break;
    default: /* nested arrays whose size overflows */
        out->sig.cost += n > (1u << 20) ? (1ull << 40) : n * n / 64;
        put(s, "var<private> big: array<array<f32, %llu>, %llu>;\n", (unsigned long long)n, (unsigned long long)n);
        break;
    }
    put(s, "@compute @workgroup_size(1)\nfn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n");
    if (kind == 3) put(s, "    y[0] = big[gid.x %% %lluu];\n", (unsigned long long)n);
    else if (kind == 4) put(s, "    big[0][0] = y[0];\n    y[0] = big[0][0] + 1.0;\n");
    else if (kind == 1) put(s, "    big[0] = y[0];\n    workgroupBarrier();\n    y[0] = big[0];\n");
    else put(s, "    big[0] = y[0];\n    y[0] = big[0] + 1.0;\n");
    put(s, "}\n");
    out->sig.wg[0] = out->sig.wg[1] = out->sig.wg[2] = 1;
    out->sig.wg_known = 1;
}

static const char *TOKENS[] = {
    "fn", "main", "@compute", "@workgroup_size(", "64", ")", "(", "{", "}", "[", "]", "let", "var", "<", ">",
    ";", ",", ":", "=", "+", "*", "-", "/", "%", "array", "f32", "u32", "i32", "vec3<u32>", "@builtin(",
    "global_invocation_id", "if", "else", "return", "struct", "@group(0)", "@binding(0)", "storage",
    "read_write", "uniform", "workgroup", "private", "override", "const", "alias", "enable f16;", "loop",
    "break", "continue", "switch", "case", "default", "ptr<function, f32>", "&", "*", "workgroupBarrier()",
    "arrayLength", "bitcast<u32>", "1.0", "0u", "-1", "0x7fffffff", "1e40", "//", "/*", "*/", "\n", "\t",
    "_", "__", "y", "x", "@id(0)", "@must_use", "diagnostic(off, derivative_uniformity);", "requires",
};

static void gen_garbage(Fuzz *f, const WgcAdapterInfo *info, Str *s, FzSource *out) {
    out->bounds_unknown = 1;
    switch (fz_below(f, 5)) {
    case 0: { /* random bytes */
        uint32_t n = fz_below(f, 2048);
        for (uint32_t i = 0; i < n; i++) {
            char c = (char)(fz_chance(f, 80) ? 32 + fz_below(f, 95) : 1 + fz_below(f, 255));
            put(s, "%c", c);
        }
        break;
    }
    case 1: { /* token soup */
        uint32_t n = fz_below(f, 400);
        for (uint32_t i = 0; i < n; i++) put(s, "%s ", TOKENS[fz_below(f, (uint32_t)(sizeof TOKENS / sizeof TOKENS[0]))]);
        break;
    }
    case 2: { /* a valid kernel, then a few byte edits */
        FzSource tmp;
        memset(&tmp, 0, sizeof tmp);
        gen_valid(f, info, s, &tmp, 0);
        out->sig = tmp.sig; /* edits may fix or break anything: no verdict */
        out->sig.wg_known = 0;
        for (uint32_t edits = 1 + fz_below(f, 4); edits > 0 && s->len > 1; edits--) {
            size_t at = fz_below(f, (uint32_t)s->len);
            switch (fz_below(f, 3)) {
            case 0: s->p[at] = (char)(1 + fz_below(f, 255)); break;
            case 1: memmove(s->p + at, s->p + at + 1, s->len - at); s->len--; break;
            default: s->len = at; s->p[at] = 0; break;
            }
        }
        break;
    }
    case 3: /* unterminated or deeply nested comments */
        for (uint32_t i = 0, n = fz_below(f, 20000); i < n; i++) put(s, "/*");
        if (fz_chance(f, 50)) put(s, "@compute @workgroup_size(1) fn main() {}");
        break;
    default: /* almost empty */
        put(s, "%s", fz_chance(f, 50) ? "" : "fn main() {}\n");
        out->must_fail = "no @compute entry point";
        break;
    }
}

/* Long flat programs: many statements in one function, many small
 * functions, or chains of functions each calling the one before (once, or
 * twice: exponential once inlined). None nests, so only the size bounds
 * (WGC_MAX_KERNEL_DECLARATION_TOKENS, WGC_MAX_KERNEL_DECLARATIONS,
 * WGC_MAX_KERNEL_TOKENS, WGC_MAX_KERNEL_SOURCE_BYTES,
 * WGC_MAX_KERNEL_INLINED_EXPRESSIONS) keep the compiler's time in check:
 * sizes well inside them must compile, sizes well past them (the largest
 * took minutes before they existed) must fail, quickly. */
static void gen_flat(Fuzz *f, Str *s, FzSource *out) {
    static const uint32_t LETS[] = {10, 300, 2000, 3000, 6000, 100000};
    static const uint32_t FUNCTIONS[] = {10, 300, 2000, 4000, 5000, 200000};
    static const uint32_t CHAIN[] = {10, 100, 300, 2000, 4000, 40};
    uint32_t pick = fz_chance(f, 85) ? fz_below(f, 3) : fz_below(f, 6), n = 1;
    put(s, "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n");
    add_binding(&out->sig, 0, FZ_BIND_RW, 4, 4);
    switch (fz_below(f, 3)) {
    case 0: /* 9 tokens a statement */
        n = LETS[pick];
        put(s, "@compute @workgroup_size(1) fn main() {\n    let v0 = y[0];\n");
        for (uint32_t i = 1; i < n; i++) put(s, "    let v%u = v%u * 0.5 + 1.0;\n", i, i - 1);
        put(s, "    y[0] = v%u;\n}\n", n - 1);
        if (n > 5000) out->must_fail = "a function past WGC_MAX_KERNEL_DECLARATION_TOKENS";
        break;
    case 1: /* a declaration each; main calls two */
        n = FUNCTIONS[pick];
        for (uint32_t i = 0; i < n; i++) put(s, "fn g%u(x: f32) -> f32 { return x * 0.5 + %u.0; }\n", i, i % 10);
        put(s, "@compute @workgroup_size(1) fn main() { y[0] = g0(y[0]) + g%u(y[0]); }\n", n - 1);
        if (n > WGC_MAX_KERNEL_DECLARATIONS) out->must_fail = "more than WGC_MAX_KERNEL_DECLARATIONS functions";
        break;
    default: { /* each calls the one before: 6 expressions a function, inlined again in every caller */
        n = CHAIN[pick];
        const char *twice = pick == 5 ? " + g%u(x)" : "";
        put(s, "fn g0(x: f32) -> f32 { return x + 1.0; }\n");
        for (uint32_t i = 1; i < n; i++) {
            put(s, "fn g%u(x: f32) -> f32 { return g%u(x) * 0.5 + 1.0", i, i - 1);
            if (*twice) put(s, twice, i - 1);
            put(s, "; }\n");
        }
        put(s, "@compute @workgroup_size(1) fn main() { y[0] = g%u(y[0]); }\n", n - 1);
        if (pick >= 3) out->must_fail = "calls that inline past WGC_MAX_KERNEL_INLINED_EXPRESSIONS";
        break;
    }
    }
    out->sig.cost += n / 64;
    out->sig.wg[0] = out->sig.wg[1] = out->sig.wg[2] = 1;
    out->sig.wg_known = 1;
    out->must_compile = !out->must_fail;
}

/* Long, wide or unusual but otherwise ordinary modules. */
static void gen_long(Fuzz *f, const WgcAdapterInfo *info, Str *s, FzSource *out) {
    switch (fz_below(f, 8)) {
    case 7:
        gen_flat(f, s, out);
        break;
    case 0: /* a megabyte of comments */
        for (int i = 0; i < 16384; i++) put(s, "// %060d\n", i);
        gen_valid(f, info, s, out, 0);
        break;
    case 1: { /* a 100,000-character identifier */
        put(s, "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n");
        put(s, "@compute @workgroup_size(1) fn main() { let ");
        for (int i = 0; i < 100000; i++) put(s, "v");
        put(s, " = y[0]; y[0] = 1.0; }\n");
        add_binding(&out->sig, 0, FZ_BIND_RW, 4, 4);
        break;
    }
    case 2: { /* many functions */
        put(s, "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n");
        put(s, "fn f0(a: f32) -> f32 { return a; }\n");
        for (int i = 1; i < 2000; i++) put(s, "fn f%d(a: f32) -> f32 { return f%d(a) + 1.0; }\n", i, i - 1);
        put(s, "@compute @workgroup_size(1) fn main() { y[0] = f%d(y[0]); }\n", 1999);
        add_binding(&out->sig, 0, FZ_BIND_RW, 4, 4);
        break;
    }
    case 3: { /* more storage buffers than any adapter binds */
        int n = 40 + (int)fz_below(f, 200);
        for (int i = 0; i < n; i++) put(s, "@group(0) @binding(%d) var<storage, read_write> b%d: array<f32>;\n", i, i);
        put(s, "@compute @workgroup_size(1) fn main() {\n");
        for (int i = 1; i < n; i++) put(s, "    b0[0] = b0[0] + b%d[0];\n", i);
        put(s, "}\n");
        if ((uint32_t)n > info->limits.max_storage_buffers_per_shader_stage)
            out->must_fail = "more storage buffers than the adapter allows";
        break;
    }
    case 4: /* two entry points; the second is wanted */
        put(s, "@group(0) @binding(0) var<storage, read_write> y: array<f32>;\n");
        put(s, "@compute @workgroup_size(4) fn first() { y[0] = 1.0; }\n");
        put(s, "@compute @workgroup_size(8, 2) fn main(@builtin(local_invocation_index) li: u32) {\n");
        put(s, "    if (li < arrayLength(&y)) { y[li] = 2.0; }\n}\n");
        add_binding(&out->sig, 0, FZ_BIND_RW, 4, 4);
        out->sig.wg[0] = 8, out->sig.wg[1] = 2, out->sig.wg[2] = 1, out->sig.wg_known = 1;
        out->must_compile = 1;
        break;
    case 5: /* atomics */
        put(s, "@group(0) @binding(0) var<storage, read_write> a: array<atomic<u32>>;\n");
        put(s, "@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) gid: vec3<u32>) {\n");
        put(s, "    atomicAdd(&a[gid.x %% arrayLength(&a)], 1u);\n}\n");
        add_binding(&out->sig, 0, FZ_BIND_RW, 4, 4);
        out->sig.wg[0] = 64, out->sig.wg[1] = 1, out->sig.wg[2] = 1, out->sig.wg_known = 1;
        out->must_compile = 1;
        break;
    default: { /* what the library does not take */
        uint32_t k = fz_below(f, 3);
        if (k == 0) {
            put(s, "@group(0) @binding(0) var t: texture_2d<f32>;\n@group(0) @binding(1) var<storage, read_write> y: array<f32>;\n");
            put(s, "@compute @workgroup_size(1) fn main() { y[0] = textureLoad(t, vec2<i32>(0, 0), 0).x; }\n");
            out->must_fail = "a texture binding";
        } else if (k == 1) {
            put(s, "@group(1) @binding(0) var<storage, read_write> y: array<f32>;\n");
            put(s, "@compute @workgroup_size(1) fn main() { y[0] = 1.0; }\n");
            out->must_fail = "a binding outside group 0";
        } else {
            put(s, "@group(0) @binding(0) var<uniform> a: vec4<f32>;\n@group(0) @binding(1) var<uniform> b: vec4<f32>;\n");
            put(s, "@group(0) @binding(2) var<storage, read_write> y: array<f32>;\n");
            put(s, "@compute @workgroup_size(1) fn main() { y[0] = a.x + b.x; }\n");
            out->must_fail = "two var<uniform> bindings";
        }
        break;
    }
    }
}

void fz_wgsl(Fuzz *f, const WgcAdapterInfo *info, FzSource *out) {
    Str s = {NULL, 0, 0};
    memset(out, 0, sizeof *out);
    put(&s, "%s", "");
    out->entry = "main";
    out->sig.cost = 1;
    uint32_t family = fz_below(f, 100);
    if (family < 45) gen_valid(f, info, &s, out, 0);
    else if (family < 55 && fz_enabled(f, "wgsl_override")) gen_valid(f, info, &s, out, 1);
    else if (family >= 55 && family < 65 && fz_enabled(f, "wgsl_deep")) gen_deep(f, &s, out);
    else if (family >= 65 && family < 73 && fz_enabled(f, "wgsl_huge")) gen_huge(f, info, &s, out);
    else if (family >= 73 && family < 92 && fz_enabled(f, "wgsl_garbage")) gen_garbage(f, info, &s, out);
    else if (family >= 92 && fz_enabled(f, "wgsl_long")) gen_long(f, info, &s, out);
    else gen_valid(f, info, &s, out, 0);

    if (fz_chance(f, 8)) { /* a hostile entry point name */
        static const char *NAMES[] = {NULL, "", "nope", "\xff\xfe", "main ", "MAIN", "first"};
        out->entry = NAMES[fz_below(f, 7)];
        out->must_compile = 0;
        out->sig.wg_known = 0;
    }
    if (!utf8_valid((const unsigned char *)s.p)) out->must_fail = "source that is not UTF-8";
    if (!out->entry) out->must_fail = "a NULL entry point";
    else if (!utf8_valid((const unsigned char *)out->entry)) out->must_fail = "an entry point name that is not UTF-8";
    else if (!out->entry[0]) out->must_fail = "an empty entry point name";
    else if (!strstr(s.p, out->entry)) out->must_fail = "an entry point the source does not contain";
    if (out->must_fail) out->must_compile = 0;
    out->sig.exact = !out->bounds_unknown;
    out->text = s.p;
}
