// bf16 conversions. WGSL has no bf16: bf16 tensors are raw bits, two per
// u32 word (element e is the low half of word e / 2 when e is even, the high
// half when odd). The prelude declares T, the other side's dtype (f32, f16,
// i32 or u32), and T_KIND. Entry points, on a 1-D grid of 256-invocation
// groups (index gid.y * p.row + gid.x):
//  - to_bf16: element i of x (any strides) rounded into y's element. An
//    element shares its word with a neighbour that another invocation may
//    write, so each invocation clears and sets its own half with atomics:
//    it changes only its 16 bits, which is exact in any interleaving.
//  - from_bf16: element i of x converted into y (any strides).
//  - copy_bf16: bf16 to bf16, bits unchanged (NaN payloads included).
//  - to_bf16_vec4, from_bf16_vec4: dense, 4 elements an invocation: T read
//    or written as vec4, bf16 as two whole words (offsets in units of 4
//    elements; the host keeps both 4-aligned).
//  - to_bf16_pairs, copy_bf16_pairs: elements 2i and 2i + 1 (x any strides)
//    into one whole word of y, plain stores: y's last dim is contiguous and
//    even, and its rows start at even elements (the host checks), so the
//    pair is one word no other invocation touches.
// Offsets count elements from where each view is bound.

const KIND_I32 = 2u;
const KIND_U32 = 3u;

struct Params {
    n: u32,      // elements (vec4 units for the _vec4 entries)
    row: u32,    // invocations per row of the 2-D grid
    rank: u32,   // dims of shape (to_bf16, from_bf16, copy_bf16)
    _pad0: u32,
    x_off: u32,
    y_off: u32,
    _pad1: vec2<u32>,
    shape: array<vec4<u32>, 2>,     // dim d at [d / 4][d % 4]
    x_strides: array<vec4<i32>, 2>,
    y_strides: array<vec4<i32>, 2>,
}

@group(0) @binding(0) var<storage, read> x: array<T>;
@group(0) @binding(1) var<storage, read> xw: array<u32>;
@group(0) @binding(2) var<storage, read> x4: array<vec4<T>>;
@group(0) @binding(3) var<storage, read> x2: array<vec2<u32>>;
@group(0) @binding(4) var<storage, read_write> y: array<T>;
@group(0) @binding(5) var<storage, read_write> yw: array<atomic<u32>>;
@group(0) @binding(6) var<storage, read_write> y4: array<vec4<T>>;
@group(0) @binding(7) var<storage, read_write> y2: array<vec2<u32>>;
@group(0) @binding(9) var<storage, read_write> yp: array<u32>;
@group(0) @binding(8) var<uniform> p: Params;

// f32 bits to bf16 bits, to nearest even as c10::BFloat16's
// round_to_nearest_even: NaN becomes the quiet NaN 0x7fc0, magnitudes past
// the largest bf16's rounding range become inf. Integer arithmetic on the
// bits: exact for subnormals too, and out of reach of drivers' float
// reassociation and flushing.
fn round_bits(u: u32) -> u32 {
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return 0x7fc0u;
    }
    return (u + 0x7fffu + ((u >> 16u) & 1u)) >> 16u;
}

// The magnitude m rounded once to bf16 (8 significant bits, ties to even),
// negative if `neg`. Through f32 it would round twice past 2^24 (and WGSL
// leaves the rounding of u32 to f32 to the adapter).
fn round_int(m: u32, neg: bool) -> u32 {
    var b = bitcast<u32>(f32(m)) >> 16u; // exact below 256
    if (m >= 256u) {
        let drop = 24u - countLeadingZeros(m); // bits below the 8 kept
        let kept = m >> drop;
        let low = m & ((1u << drop) - 1u);
        let mid = 1u << (drop - 1u);
        let r = kept + select(0u, 1u, (low > mid) || ((low == mid) && ((kept & 1u) == 1u)));
        // r in [128, 256]; 256 carries into the next binade (fraction 0).
        let e = drop + 7u + (r >> 8u);
        b = ((e + 127u) << 7u) | (r & 0x7fu);
    }
    return b | select(0u, 0x8000u, neg);
}

fn to_bits(v: T) -> u32 {
    if (T_KIND == KIND_I32) {
        let i = i32(v);
        return round_int(select(u32(i), 0u - u32(i), i < 0), i < 0);
    }
    if (T_KIND == KIND_U32) {
        return round_int(u32(v), false);
    }
    return round_bits(bitcast<u32>(f32(v))); // f16 is exact in f32
}

fn isnan_c(x: f32) -> bool {
    return (bitcast<u32>(x) & 0x7fffffffu) > 0x7f800000u;
}

// bf16 bits to T: exact into f32; f16 rounds to nearest even (inf past its
// range); integers truncate toward zero, saturating, NaN giving 0.
fn from_bits(b: u32) -> T {
    let v = bitcast<f32>(b << 16u);
    if (T_KIND == KIND_I32) {
        return select(T(clamp(v, -2147483648.0, 2147483520.0)), T(0), isnan_c(v));
    }
    if (T_KIND == KIND_U32) {
        return select(T(clamp(v, 0.0, 4294967040.0)), T(0), isnan_c(v));
    }
    return T(v);
}

// The (x, y) offsets of element i.
fn offsets(i: u32) -> vec2<i32> {
    var o = vec2<i32>(i32(p.x_off), i32(p.y_off));
    var rem = i;
    for (var d = i32(p.rank) - 1; d >= 0; d--) {
        let n = p.shape[d >> 2u][d & 3];
        let c = i32(rem % n);
        o += c * vec2<i32>(p.x_strides[d >> 2u][d & 3], p.y_strides[d >> 2u][d & 3]);
        rem = rem / n;
    }
    return o;
}

fn get_half(e: u32) -> u32 {
    return (xw[e >> 1u] >> ((e & 1u) * 16u)) & 0xffffu;
}

fn put_half(e: u32, b: u32) {
    let s = (e & 1u) * 16u;
    atomicAnd(&yw[e >> 1u], ~(0xffffu << s));
    atomicOr(&yw[e >> 1u], b << s);
}

fn linear_index(gid: vec3<u32>) -> u32 {
    return gid.y * p.row + gid.x;
}

@compute @workgroup_size(256)
fn to_bf16(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = linear_index(gid);
    if (i >= p.n) {
        return;
    }
    let o = offsets(i);
    put_half(u32(o.y), to_bits(x[u32(o.x)]));
}

@compute @workgroup_size(256)
fn from_bf16(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = linear_index(gid);
    if (i >= p.n) {
        return;
    }
    let o = offsets(i);
    y[u32(o.y)] = from_bits(get_half(u32(o.x)));
}

@compute @workgroup_size(256)
fn copy_bf16(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = linear_index(gid);
    if (i >= p.n) {
        return;
    }
    let o = offsets(i);
    put_half(u32(o.y), get_half(u32(o.x)));
}

@compute @workgroup_size(256)
fn to_bf16_vec4(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = linear_index(gid);
    if (i >= p.n) {
        return;
    }
    let v = x4[p.x_off + i];
    y2[p.y_off + i] = vec2<u32>(to_bits(v.x) | (to_bits(v.y) << 16u), to_bits(v.z) | (to_bits(v.w) << 16u));
}

@compute @workgroup_size(256)
fn from_bf16_vec4(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = linear_index(gid);
    if (i >= p.n) {
        return;
    }
    let w = x2[p.x_off + i];
    y4[p.y_off + i] = vec4<T>(from_bits(w.x & 0xffffu), from_bits(w.x >> 16u), from_bits(w.y & 0xffffu), from_bits(w.y >> 16u));
}

// The pair's (x offset of 2i, x offset of 2i + 1, y word).
fn pair(i: u32) -> vec3<u32> {
    let o0 = offsets(2u * i);
    let o1 = offsets(2u * i + 1u);
    return vec3<u32>(u32(o0.x), u32(o1.x), u32(o0.y) >> 1u);
}

@compute @workgroup_size(256)
fn to_bf16_pairs(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = linear_index(gid);
    if (i >= p.n) {
        return;
    }
    let q = pair(i);
    yp[q.z] = to_bits(x[q.x]) | (to_bits(x[q.y]) << 16u);
}

@compute @workgroup_size(256)
fn copy_bf16_pairs(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = linear_index(gid);
    if (i >= p.n) {
        return;
    }
    let q = pair(i);
    yp[q.z] = get_half(q.x) | (get_half(q.y) << 16u);
}
