// Counter-based random numbers: Philox4x32-10 (Salmon et al., "Parallel
// random numbers: as easy as 1, 2, 3", SC'11), integer-only so every adapter
// produces the same bits. Invocation t uses counter (offset + t, 0, 0) as a
// 128-bit little-endian number and key = seed (lo, hi); its four 32-bit
// outputs become logical elements 4t .. 4t+3 of the output. Prelude: TE,
// the output dtype. Philox's 32x32 -> 64-bit products (`mulhilo`) come
// from a fragment appended to this file: random_mulhi_u16.wgsl (16-bit
// halves, every adapter) or random_mulhi_u64.wgsl (one 64-bit multiply,
// adapters with 64-bit integers); both give the same bits. The `*4` entries store whole vec4s (dense outputs, `off`
// in vec4 units, through `outv`); the others one element at a time.

struct Params {
    n: u32,            // elements
    row: u32,          // invocations per grid row
    rank: u32,         // output dims after coalescing (0 or 1 with contiguous = 1: dense)
    contiguous: u32,
    key: vec2<u32>,    // seed (lo, hi)
    ctr: vec2<u32>,    // offset (lo, hi)
    a: f32,            // uniform: lo; normal: mean
    b: f32,            // uniform: hi - lo; normal: std
    off: u32,          // output offset in elements (vec4s for the `*4` entries)
    pad: u32,
    shape: array<vec4<u32>, 2>,
    strides: array<vec4<i32>, 2>,
}

@group(0) @binding(0) var<storage, read_write> out: array<TE>;
@group(0) @binding(1) var<storage, read_write> outv: array<vec4<TE>>;
@group(0) @binding(2) var<uniform> p: Params;

fn philox(counter: vec4<u32>, seed: vec2<u32>) -> vec4<u32> {
    var c = counter;
    var k = seed;
    for (var r = 0u; r < 10u; r++) {
        let p0 = mulhilo(0xD2511F53u, c.x);
        let p1 = mulhilo(0xCD9E8D57u, c.z);
        c = vec4<u32>(p1.x ^ c.y ^ k.x, p1.y, p0.x ^ c.w ^ k.y, p0.y);
        k += vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
    }
    return c;
}

fn bits_for(t: u32) -> vec4<u32> {
    let lo = p.ctr.x + t;
    let carry = select(0u, 1u, lo < t);
    return philox(vec4<u32>(lo, p.ctr.y + carry, 0u, 0u), p.key);
}

// The top 24 bits as a float in [0, 1): exact, so identical everywhere.
fn unit(x: vec4<u32>) -> vec4<f32> {
    return vec4<f32>(x >> vec4<u32>(8u)) * (1.0 / 16777216.0);
}

fn address(e: u32) -> u32 {
    if (p.contiguous != 0u) {
        return p.off + e;
    }
    var rem = e;
    var o = i32(p.off);
    for (var d = i32(p.rank) - 1; d >= 0; d--) {
        let n = p.shape[d >> 2u][d & 3];
        o += i32(rem % n) * p.strides[d >> 2u][d & 3];
        rem = rem / n;
    }
    return u32(o);
}

fn store_scalar(first: u32, v: vec4<f32>) {
    for (var l = 0u; l < 4u; l++) {
        let e = first + l;
        if (e < p.n) {
            out[address(e)] = TE(v[l]);
        }
    }
}

// Block t's values (logical elements 4t .. 4t+3).
fn uniform_block(t: u32) -> vec4<f32> {
    return p.a + p.b * unit(bits_for(t));
}

@compute @workgroup_size(256)
fn random_uniform(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.y * p.row + gid.x;
    if (t < (p.n + 3u) / 4u) {
        store_scalar(4u * t, uniform_block(t));
    }
}

@compute @workgroup_size(256)
fn random_uniform4(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.y * p.row + gid.x;
    if (t < (p.n + 3u) / 4u) {
        outv[p.off + t] = vec4<TE>(uniform_block(t));
    }
}

// -log(u) for u in (0, 1], relatively accurate near 1 too, where the
// built-in log's absolute error would swamp the small result: there
// -log(u) = 2 atanh(t / (2 - t)) with t = 1 - u exact (u is a multiple of
// 2^-24), summed as a series (|t / (2 - t)| <= 1/7: error below 1e-9).
fn neg_log(u: vec2<f32>) -> vec2<f32> {
    let t = 1.0 - u;
    let s = t / (2.0 - t);
    let s2 = s * s;
    let series = 2.0 * s * (1.0 + s2 * (1.0 / 3.0 + s2 * (1.0 / 5.0 + s2 * (1.0 / 7.0 + s2 * (1.0 / 9.0)))));
    return select(-log(u), series, t < vec2<f32>(0.25));
}

// Box-Muller: words (0, 1) give elements 0 and 1, words (2, 3) elements 2 and 3.
fn normal_block(t: u32) -> vec4<f32> {
    let u = unit(bits_for(t));
    let u1 = vec2<f32>(u.x, u.z) + (1.0 / 16777216.0); // (0, 1]: log stays finite
    let radius = sqrt(2.0 * neg_log(u1));
    let theta = 6.283185307179586 * vec2<f32>(u.y, u.w);
    let z = vec4<f32>(radius.x * cos(theta.x), radius.x * sin(theta.x), radius.y * cos(theta.y), radius.y * sin(theta.y));
    return p.a + p.b * z;
}

@compute @workgroup_size(256)
fn random_normal(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.y * p.row + gid.x;
    if (t < (p.n + 3u) / 4u) {
        store_scalar(4u * t, normal_block(t));
    }
}

@compute @workgroup_size(256)
fn random_normal4(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = gid.y * p.row + gid.x;
    if (t < (p.n + 3u) / 4u) {
        outv[p.off + t] = vec4<TE>(normal_block(t));
    }
}
