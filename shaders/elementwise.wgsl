// Elementwise map: y = OP(x0, x1, x2) over up to three broadcast operands
// of type A, written as O. The prelude declares A and O and their kinds
// (A_KIND, O_KIND); OP and ITEMS are pipeline constants, so each op
// compiles to straight-line code. Op codes: 0..31 the binary ops (the
// values of WgcBinaryOp), 32..63 the unary ops (32 + WgcUnaryOp), then the
// ops below. Each operand comes from its own binding, from y's element
// (in place: the operand is y's very view), or from a scalar (`p.src`).
// Entry points, by the operands bound:
//  - map1, map2, map3: x0 .. x<n-1>; where: mask, x1, x2 (the mask is
//    operand 0); map0: none (every operand from y or a scalar). `_vec4`:
//    the same in vec4 units (every operand dense along its innermost dim
//    with 4-aligned sizes and offsets; dense tensors are rank 1).
//  - tiled, tiled2_x0, tiled2_x1: one input read dense along another dim
//    than y (transposes, a + b^T), through workgroup memory.
// A slot whose operand comes from y or a scalar is bound to another
// operand's buffer and not read.

const KIND_F32 = 0u;
const KIND_F16 = 1u;
const KIND_I32 = 2u;
const KIND_U32 = 3u;
const A_FLOAT = A_KIND == KIND_F32 || A_KIND == KIND_F16;

const UNARY = 32u;
const LEAKY_RELU = 64u; // x0, slope sf.x (f32 for every dtype, as PyTorch)
const CLAMP = 65u;      // x0 clamped to [scalar 0, scalar 1]
const FMA = 66u;
const WHERE = 67u;      // mask (operand 0) != 0 ? x1 : x2
const COPY = 68u;       // copy and fill (x0 a scalar)
const CAST = 69u;
const ARANGE = 70u;     // scalar 0 + ix * scalar 1

override OP: u32;
// Items each invocation handles, one grid apart.
override ITEMS: u32;
// Dims offsets() decodes: 1 to 4 written out for that rank, 0 any rank (a
// loop over p.rank). Constants, not uniform branches: a branch between the
// items' loads keeps them from being in flight together (measured: 9% on
// an f16 broadcast add on an H200).
override RANK: u32;
// Whether an operand read through get0..get2 may come from y or a scalar
// (p.src); false: each comes from its own binding, read without a branch.
override ROUTED: bool;

struct Params {
    n: u32,      // work items of this launch
    row: u32,    // work items per row of the 2-D grid
    rank: u32,   // dims after coalescing
    base: u32,   // logical index of this launch's first element (a dense tail)
    src: vec4<u32>, // per operand: 0 its binding, 1 y (in place), 2 scalar 0, 3 scalar 1
    su: vec2<u32>,  // scalars as bits, for integer A
    sf: vec2<f32>,  // scalars as f32 values, for float A (f16 ones exactly)
    nan: u32,    // 0x7fc00000: NaN made at run time (constants cannot be NaN)
    inf: u32,    // 0x7f800000
    _pad0: vec2<u32>,
    off: vec4<u32>,                // offsets of x0, x1, x2, y (in binding elements)
    shape: array<vec4<u32>, 2>,    // dim d at [d / 4][d % 4]
    strides: array<vec4<i32>, 8>,  // dim d -> (x0, x1, x2, y)
}

@group(0) @binding(0) var<storage, read> x0: array<A>;
@group(0) @binding(1) var<storage, read> x1: array<A>;
@group(0) @binding(2) var<storage, read> x2: array<A>;
@group(0) @binding(3) var<storage, read> mask: array<u32>;
@group(0) @binding(4) var<storage, read_write> y: array<O>;
@group(0) @binding(5) var<storage, read> x0v: array<vec4<A>>;
@group(0) @binding(6) var<storage, read> x1v: array<vec4<A>>;
@group(0) @binding(7) var<storage, read> x2v: array<vec4<A>>;
@group(0) @binding(8) var<storage, read> maskv: array<vec4<u32>>;
@group(0) @binding(9) var<storage, read_write> yv: array<vec4<O>>;
@group(0) @binding(10) var<uniform> p: Params;

// isnan_c, exp_c, pow_c, div_i32 and the other scalar functions are in
// elementwise_scalar.wgsl, joined before this file.

fn scalar(k: u32) -> A {
    if (A_FLOAT) {
        return A(p.sf[k]);
    }
    return A(p.su[k]);
}

fn flag(c: bool) -> O {
    return O(select(0u, 1u, c));
}

// Float comparisons, maximum and minimum test NaN by bits: drivers may
// fold comparisons as if NaN never occurred. NaN wins maximum and minimum
// (x0 + x1 is then NaN), compares unequal to everything, orders with nothing.
fn binary(op: u32, a: A, b: A) -> O {
    let ordered = ordered_c(f32(a), f32(b)) | !A_FLOAT;
    switch op {
        case 0u: { return O(a + b); }
        case 1u: { return O(a - b); }
        case 2u: { return O(a * b); }
        case 3u: {
            // Floats in f32 whatever the dtype: an f16 quotient computed as
            // x * (1 / y) loses its precision where 1 / y is subnormal in f16.
            if (A_FLOAT) { return O(div_c(f32(a), f32(b))); }
            if (A_KIND == KIND_I32) { return O(div_i32(i32(a), i32(b))); }
            return O(div_u32(u32(a), u32(b)));
        }
        case 4u: { return O(pow_c(f32(a), f32(b))); }
        case 5u: { return O(select(max(a, b), a + b, !ordered)); }
        case 6u: { return O(select(min(a, b), a + b, !ordered)); }
        case 7u: { return flag((a == b) & ordered); }
        case 8u: { return flag(!((a == b) & ordered)); }
        case 9u: { return flag((a < b) & ordered); }
        case 10u: { return flag((a <= b) & ordered); }
        case 11u: { return flag((a > b) & ordered); }
        default: { return flag((a >= b) & ordered); }
    }
}

// f16 is computed in f32 and rounded once. Sigmoid and SiLU into f16 use
// the adapter's exp as it is: its error (about |x| f32 ulp) is far below an
// f16 ulp wherever the result is not already 0 or saturated, and the exact
// argument reduction and the subnormal tail of the f32 forms cost a third
// of the f16 kernel's time.
const F16_OUT = O_KIND == KIND_F16;
fn unary(op: u32, a: A) -> O {
    let x = f32(a);
    switch op {
        case 0u: {
            if (A_FLOAT) { return O(-x); }
            return O(0 - i32(a)); // wraps
        }
        case 1u: {
            if (A_FLOAT) { return O(abs(x)); }
            return O(abs(i32(a)));
        }
        case 2u: { return O(exp_c(x)); }
        case 3u: { return O(log_c(x)); }
        case 4u: { return O(sqrt(x)); }
        case 5u: { return O(inverseSqrt(x)); }
        case 6u: { return O(sin_c(x)); }
        case 7u: { return O(cos_c(x)); }
        case 8u: { return O(tanh_c(x)); }
        case 9u: {
            if (F16_OUT) { return O(select(1.0 / (1.0 + exp(-x)), x, isnan_c(x))); }
            return O(sigmoid_c(x));
        }
        case 10u: {
            if (A_FLOAT) { return O(select(max(x, 0.0), x, isnan_c(x))); }
            return O(max(i32(a), 0));
        }
        case 11u: { return O(0.5 * x * (1.0 + erf_c(x * 0.7071067811865476))); }
        case 12u: { return O(0.5 * x * (1.0 + tanh_c(0.7978845608028654 * (x + 0.044715 * x * x * x)))); }
        case 13u: {
            // -inf / inf = NaN, as x * sigmoid(x) at -inf.
            if (F16_OUT) { return O(select(x / (1.0 + exp(-x)), x, isnan_c(x))); }
            return O(silu_c(x));
        }
        // min and max of NaN are unspecified in WGSL: NaN is kept by bits.
        case 14u: { return O(select(min(max(x, 0.0), 6.0), x, isnan_c(x))); }
        default: {
            // hardswish: x itself from 3 on (x * 6 / 6 would overflow near
            // the f32 limit); -inf * 0 gives NaN, as in PyTorch.
            return O(select(x * max(x + 3.0, 0.0) / 6.0, x, x >= 3.0 || isnan_c(x)));
        }
    }
}

// Float to integer: truncation toward zero, saturating, NaN -> 0. Integer
// to f16 through f32 (exact within the f16 range), so rounded once.
fn convert(a: A) -> O {
    let x = f32(a);
    if (A_FLOAT && O_KIND == KIND_I32) {
        return select(O(clamp(x, -2147483648.0, 2147483520.0)), O(0), isnan_c(x));
    }
    if (A_FLOAT && O_KIND == KIND_U32) {
        return select(O(clamp(x, 0.0, 4294967040.0)), O(0), isnan_c(x));
    }
    if (!A_FLOAT && O_KIND == KIND_F16) {
        return O(x);
    }
    return O(a);
}

fn compute(a: A, b: A, c: A, ix: u32) -> O {
    if (OP < UNARY) {
        return binary(OP, a, b);
    }
    if (OP < LEAKY_RELU) {
        return unary(OP - UNARY, a);
    }
    switch OP {
        case 64u: {
            let x = f32(a);
            return O(select(x * p.sf.x, x, a >= A(0)));
        }
        case 65u: {
            let r = min(max(a, scalar(0u)), scalar(1u));
            if (A_FLOAT) { return O(select(r, a, isnan_c(f32(a)))); } // NaN stays NaN
            return O(r);
        }
        case 66u: {
            if (A_FLOAT) { return O(fma(f32(a), f32(b), f32(c))); }
            return O(a * b + c);
        }
        case 67u: { return O(select(c, b, a != A(0))); }
        case 68u: { return O(a); }
        case 69u: { return convert(a); }
        default: {
            if (A_FLOAT) { return O(p.sf.x + f32(ix) * p.sf.y); }
            return O(scalar(0u) + A(ix) * scalar(1u)); // wraps
        }
    }
}

fn compute4(a: vec4<A>, b: vec4<A>, c: vec4<A>, ix: u32) -> vec4<O> {
    return vec4<O>(compute(a.x, b.x, c.x, ix), compute(a.y, b.y, c.y, ix + 1u),
                   compute(a.z, b.z, c.z, ix + 2u), compute(a.w, b.w, c.w, ix + 3u));
}

// Operand offsets of logical element i.
fn offsets(i: u32) -> vec4<i32> {
    var o = vec4<i32>(p.off);
    if (RANK == 1u) {
        return o + i32(i) * p.strides[0]; // i < n: no division needed
    }
    if (RANK >= 2u && RANK <= 4u) {
        // Written out: a loop over the rank indexes the shape dynamically,
        // which cost permutes and broadcasts 50% on an H200.
        let s = p.shape[0];
        var rem = i;
        if (RANK == 4u) {
            o += i32(rem % s.w) * p.strides[3];
            rem = rem / s.w;
        }
        if (RANK >= 3u) {
            o += i32(rem % s.z) * p.strides[2];
            rem = rem / s.z;
        }
        o += i32(rem % s.y) * p.strides[1];
        return o + i32(rem / s.y) * p.strides[0];
    }
    var rem = i;
    for (var d = i32(p.rank) - 1; d >= 0; d--) {
        let n = p.shape[d >> 2u][d & 3];
        o += i32(rem % n) * p.strides[d];
        rem = rem / n;
    }
    return o;
}

// Operand k when it does not come from its own binding.
fn routed(k: u32, o: vec4<i32>) -> A {
    switch p.src[k] {
        case 1u: { return A(y[u32(o.w)]); }
        case 2u: { return scalar(0u); }
        default: { return scalar(1u); }
    }
}
fn routed4(k: u32, o: vec4<i32>) -> vec4<A> {
    switch p.src[k] {
        case 1u: { return vec4<A>(yv[u32(o.w)]); }
        case 2u: { return vec4<A>(scalar(0u)); }
        default: { return vec4<A>(scalar(1u)); }
    }
}
fn own(k: u32) -> bool {
    return p.src[k] == 0u;
}

fn get0(o: vec4<i32>) -> A { if (ROUTED && !own(0u)) { return routed(0u, o); } return x0[u32(o.x)]; }
fn get1(o: vec4<i32>) -> A { if (ROUTED && !own(1u)) { return routed(1u, o); } return x1[u32(o.y)]; }
fn get2(o: vec4<i32>) -> A { if (ROUTED && !own(2u)) { return routed(2u, o); } return x2[u32(o.z)]; }
fn get_mask(o: vec4<i32>) -> A { return A(mask[u32(o.x)]); }
fn get0v(o: vec4<i32>) -> vec4<A> { if (ROUTED && !own(0u)) { return routed4(0u, o); } return x0v[u32(o.x)]; }
fn get1v(o: vec4<i32>) -> vec4<A> { if (ROUTED && !own(1u)) { return routed4(1u, o); } return x1v[u32(o.y)]; }
fn get2v(o: vec4<i32>) -> vec4<A> { if (ROUTED && !own(2u)) { return routed4(2u, o); } return x2v[u32(o.z)]; }
fn get_maskv(o: vec4<i32>) -> vec4<A> { return vec4<A>(maskv[u32(o.x)]); }

// Entry points share this frame: ITEMS items per invocation, one grid
// apart (coalesced), all loads before any store so they are in flight
// together. Items past the end compute on the last element and store nothing.
struct Item {
    i: u32,
    o: vec4<i32>,
}
fn item(gid: vec3<u32>, groups: vec3<u32>, k: u32) -> Item {
    let t = gid.y * p.row + gid.x;
    let i = t + k * p.row * groups.y;
    return Item(i, offsets(min(i, p.n - 1u)));
}

// Each entry computes its items into separate variables (no arrays: a
// function-scope array indexed in an override-bounded loop was kept in
// memory by NVIDIA's compiler, at a third of the bandwidth), all loads
// before any store.
struct Done {
    i: u32,
    at: u32,
    v: O,
}
struct Done4 {
    i: u32,
    at: u32,
    v: vec4<O>,
}
fn put(d: Done) {
    if (d.i < p.n) { y[d.at] = d.v; }
}
fn put4(d: Done4) {
    if (d.i < p.n) { yv[d.at] = d.v; }
}

fn map0_item(gid: vec3<u32>, groups: vec3<u32>, k: u32) -> Done {
    let it = item(gid, groups, k);
    let o = it.o;
    return Done(it.i, u32(o.w), compute(routed(0u, o), routed(1u, o), routed(2u, o), p.base + it.i));
}
@compute @workgroup_size(256)
fn map0(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let d0 = map0_item(gid, groups, 0u);
    if (ITEMS == 1u) {
        put(d0);
        return;
    }
    let d1 = map0_item(gid, groups, 1u);
    let d2 = map0_item(gid, groups, 2u);
    let d3 = map0_item(gid, groups, 3u);
    put(d0);
    put(d1);
    put(d2);
    put(d3);
}

fn map1_item(gid: vec3<u32>, groups: vec3<u32>, k: u32) -> Done {
    let it = item(gid, groups, k);
    let o = it.o;
    return Done(it.i, u32(o.w), compute(get0(o), routed(1u, o), routed(2u, o), p.base + it.i));
}
@compute @workgroup_size(256)
fn map1(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let d0 = map1_item(gid, groups, 0u);
    if (ITEMS == 1u) {
        put(d0);
        return;
    }
    let d1 = map1_item(gid, groups, 1u);
    let d2 = map1_item(gid, groups, 2u);
    let d3 = map1_item(gid, groups, 3u);
    put(d0);
    put(d1);
    put(d2);
    put(d3);
}

fn map2_item(gid: vec3<u32>, groups: vec3<u32>, k: u32) -> Done {
    let it = item(gid, groups, k);
    let o = it.o;
    return Done(it.i, u32(o.w), compute(get0(o), get1(o), routed(2u, o), p.base + it.i));
}
@compute @workgroup_size(256)
fn map2(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let d0 = map2_item(gid, groups, 0u);
    if (ITEMS == 1u) {
        put(d0);
        return;
    }
    let d1 = map2_item(gid, groups, 1u);
    let d2 = map2_item(gid, groups, 2u);
    let d3 = map2_item(gid, groups, 3u);
    put(d0);
    put(d1);
    put(d2);
    put(d3);
}

fn map3_item(gid: vec3<u32>, groups: vec3<u32>, k: u32) -> Done {
    let it = item(gid, groups, k);
    let o = it.o;
    return Done(it.i, u32(o.w), compute(get0(o), get1(o), get2(o), p.base + it.i));
}
@compute @workgroup_size(256)
fn map3(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let d0 = map3_item(gid, groups, 0u);
    if (ITEMS == 1u) {
        put(d0);
        return;
    }
    let d1 = map3_item(gid, groups, 1u);
    let d2 = map3_item(gid, groups, 2u);
    let d3 = map3_item(gid, groups, 3u);
    put(d0);
    put(d1);
    put(d2);
    put(d3);
}

fn where3_item(gid: vec3<u32>, groups: vec3<u32>, k: u32) -> Done {
    let it = item(gid, groups, k);
    let o = it.o;
    return Done(it.i, u32(o.w), compute(get_mask(o), get1(o), get2(o), p.base + it.i));
}
@compute @workgroup_size(256)
fn where3(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let d0 = where3_item(gid, groups, 0u);
    if (ITEMS == 1u) {
        put(d0);
        return;
    }
    let d1 = where3_item(gid, groups, 1u);
    let d2 = where3_item(gid, groups, 2u);
    let d3 = where3_item(gid, groups, 3u);
    put(d0);
    put(d1);
    put(d2);
    put(d3);
}

fn map0_vec4_item(gid: vec3<u32>, groups: vec3<u32>, k: u32) -> Done4 {
    let it = item(gid, groups, k);
    let o = it.o;
    return Done4(it.i, u32(o.w), compute4(routed4(0u, o), routed4(1u, o), routed4(2u, o), p.base + 4u * it.i));
}
@compute @workgroup_size(256)
fn map0_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let d0 = map0_vec4_item(gid, groups, 0u);
    if (ITEMS == 1u) {
        put4(d0);
        return;
    }
    let d1 = map0_vec4_item(gid, groups, 1u);
    let d2 = map0_vec4_item(gid, groups, 2u);
    let d3 = map0_vec4_item(gid, groups, 3u);
    put4(d0);
    put4(d1);
    put4(d2);
    put4(d3);
}

fn map1_vec4_item(gid: vec3<u32>, groups: vec3<u32>, k: u32) -> Done4 {
    let it = item(gid, groups, k);
    let o = it.o;
    return Done4(it.i, u32(o.w), compute4(get0v(o), routed4(1u, o), routed4(2u, o), p.base + 4u * it.i));
}
@compute @workgroup_size(256)
fn map1_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let d0 = map1_vec4_item(gid, groups, 0u);
    if (ITEMS == 1u) {
        put4(d0);
        return;
    }
    let d1 = map1_vec4_item(gid, groups, 1u);
    let d2 = map1_vec4_item(gid, groups, 2u);
    let d3 = map1_vec4_item(gid, groups, 3u);
    put4(d0);
    put4(d1);
    put4(d2);
    put4(d3);
}

fn map2_vec4_item(gid: vec3<u32>, groups: vec3<u32>, k: u32) -> Done4 {
    let it = item(gid, groups, k);
    let o = it.o;
    return Done4(it.i, u32(o.w), compute4(get0v(o), get1v(o), routed4(2u, o), p.base + 4u * it.i));
}
@compute @workgroup_size(256)
fn map2_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let d0 = map2_vec4_item(gid, groups, 0u);
    if (ITEMS == 1u) {
        put4(d0);
        return;
    }
    let d1 = map2_vec4_item(gid, groups, 1u);
    let d2 = map2_vec4_item(gid, groups, 2u);
    let d3 = map2_vec4_item(gid, groups, 3u);
    put4(d0);
    put4(d1);
    put4(d2);
    put4(d3);
}

fn map3_vec4_item(gid: vec3<u32>, groups: vec3<u32>, k: u32) -> Done4 {
    let it = item(gid, groups, k);
    let o = it.o;
    return Done4(it.i, u32(o.w), compute4(get0v(o), get1v(o), get2v(o), p.base + 4u * it.i));
}
@compute @workgroup_size(256)
fn map3_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let d0 = map3_vec4_item(gid, groups, 0u);
    if (ITEMS == 1u) {
        put4(d0);
        return;
    }
    let d1 = map3_vec4_item(gid, groups, 1u);
    let d2 = map3_vec4_item(gid, groups, 2u);
    let d3 = map3_vec4_item(gid, groups, 3u);
    put4(d0);
    put4(d1);
    put4(d2);
    put4(d3);
}

fn where3_vec4_item(gid: vec3<u32>, groups: vec3<u32>, k: u32) -> Done4 {
    let it = item(gid, groups, k);
    let o = it.o;
    return Done4(it.i, u32(o.w), compute4(get_maskv(o), get1v(o), get2v(o), p.base + 4u * it.i));
}
@compute @workgroup_size(256)
fn where3_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let d0 = where3_vec4_item(gid, groups, 0u);
    if (ITEMS == 1u) {
        put4(d0);
        return;
    }
    let d1 = where3_vec4_item(gid, groups, 1u);
    let d2 = where3_vec4_item(gid, groups, 2u);
    let d3 = where3_vec4_item(gid, groups, 3u);
    put4(d0);
    put4(d1);
    put4(d2);
    put4(d3);
}

// One input whose dim R (the second-to-last of three: batch, R, C) is the
// dense one while y is dense along C, e.g. a transpose: a 32 x 32 tile of it
// is read along R, staged in workgroup memory and used along C, so both
// sides stay coalesced. shape[0] = (batch, R, C); strides[0], [1], [2] are
// the (x0, x1, -, y) strides of batch, R and C.
//  - tiled: x0 staged (one operand);
//  - tiled2_x0, tiled2_x1: two operands, the named one staged, the other
//    read along C with y (e.g. a + b^T).
var<workgroup> tile: array<array<A, 33>, 32>;

// Element j / 8 of this invocation's share of the tile: along R while
// staging (`along_r`), along C when y is written. (r, c, in range) and the
// operands' offsets. Each entry names only the bindings it reads.
struct TilePos {
    r: u32,
    c: u32,
    live: bool,
    o: vec4<i32>,
}
fn tile_pos(wg: vec3<u32>, l: vec3<u32>, j: u32, along_r: bool) -> TilePos {
    let r = wg.y * 32u + select(l.y + j, l.x, along_r);
    let c = wg.x * 32u + select(l.x, l.y + j, along_r);
    let o = vec4<i32>(p.off) + i32(wg.z) * p.strides[0] + i32(r) * p.strides[1] + i32(c) * p.strides[2];
    return TilePos(r, c, r < p.shape[0].y && c < p.shape[0].z, o);
}
fn tile_ix(wg: vec3<u32>, t: TilePos) -> u32 {
    return (wg.z * p.shape[0].y + t.r) * p.shape[0].z + t.c;
}

@compute @workgroup_size(32, 8)
fn tiled(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {
    for (var j = 0u; j < 32u; j += 8u) {
        let t = tile_pos(wg, l, j, true);
        if (t.live) { tile[l.y + j][l.x] = x0[u32(t.o.x)]; }
    }
    workgroupBarrier();
    for (var j = 0u; j < 32u; j += 8u) {
        let t = tile_pos(wg, l, j, false);
        if (t.live) { y[u32(t.o.w)] = compute(tile[l.x][l.y + j], A(0), A(0), tile_ix(wg, t)); }
    }
}

@compute @workgroup_size(32, 8)
fn tiled2_x0(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {
    for (var j = 0u; j < 32u; j += 8u) {
        let t = tile_pos(wg, l, j, true);
        if (t.live) { tile[l.y + j][l.x] = x0[u32(t.o.x)]; }
    }
    workgroupBarrier();
    for (var j = 0u; j < 32u; j += 8u) {
        let t = tile_pos(wg, l, j, false);
        if (t.live) { y[u32(t.o.w)] = compute(tile[l.x][l.y + j], x1[u32(t.o.y)], A(0), tile_ix(wg, t)); }
    }
}

@compute @workgroup_size(32, 8)
fn tiled2_x1(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>) {
    for (var j = 0u; j < 32u; j += 8u) {
        let t = tile_pos(wg, l, j, true);
        if (t.live) { tile[l.y + j][l.x] = x1[u32(t.o.y)]; }
    }
    workgroupBarrier();
    for (var j = 0u; j < 32u; j += 8u) {
        let t = tile_pos(wg, l, j, false);
        if (t.live) { y[u32(t.o.w)] = compute(x0[u32(t.o.x)], tile[l.x][l.y + j], A(0), tile_ix(wg, t)); }
    }
}
