// Kernel spec family "gather" (src/ops/gather.rs): index_select, gather and
// embedding. Prelude: T (element type), I (index type, i32 or u32).
// Overrides: WG (workgroup size).
//
// out[o] = x[x_base(o) + k * axis_stride] with k = index[index_base(o)],
// where each base adds o's coordinates times that operand's strides (x's
// stride along the gathered axis is 0: the index supplies that term).
// An index outside [0, axis_len) gives 0 and x is not read: no index,
// however wrong, reads outside the bound view.
//
// gather: one element per invocation.
// gather_vec4: four consecutive elements of the last dim, along which the
//   index does not vary; x's and y's offsets and strides, and the last
//   dim's length, are in vec4 units (the index's stay in elements). The
//   host runs f16 data through T = u32 (eight f16 per vec4: the bits are
//   only copied).
// Invocations are spread over a 2-D grid: linear = gid.y * row + gid.x.

override WG: u32 = 256u;

struct Params {
    n: u32,
    row: u32,
    rank: u32,
    axis_len: u32,
    x_offset: u32,
    y_offset: u32,
    index_offset: u32,
    axis_stride: i32,
    shape: array<vec4<u32>, 2>,
    x_strides: array<vec4<i32>, 2>,
    y_strides: array<vec4<i32>, 2>,
    index_strides: array<vec4<i32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<T>;
@group(0) @binding(2) var<storage, read> index: array<I>;
@group(0) @binding(3) var<storage, read_write> y: array<T>;
@group(0) @binding(4) var<storage, read> x4: array<vec4<T>>;
@group(0) @binding(5) var<storage, read_write> y4: array<vec4<T>>;

// Element offsets of output element `o` in x (without the gathered term),
// y and index.
fn bases(o: u32) -> vec3<i32> {
    var rem = o;
    var off = vec3<i32>(i32(p.x_offset), i32(p.y_offset), i32(p.index_offset));
    for (var d = i32(p.rank) - 1; d >= 0; d--) {
        let n = p.shape[d / 4][d % 4];
        let c = i32(rem % n);
        rem = rem / n;
        off += c * vec3<i32>(p.x_strides[d / 4][d % 4], p.y_strides[d / 4][d % 4], p.index_strides[d / 4][d % 4]);
    }
    return off;
}

// The gathered row, or -1 for an index outside [0, axis_len).
fn gathered(index_at: i32) -> i32 {
    // i32(u32) keeps the bits: u32 indices of 2^31 and more become negative.
    let k = i32(index[index_at]);
    if (k < 0 || u32(k) >= p.axis_len) {
        return -1;
    }
    return k;
}

@compute @workgroup_size(WG)
fn gather(@builtin(global_invocation_id) gid: vec3<u32>) {
    let o = gid.y * p.row + gid.x;
    if (o >= p.n) {
        return;
    }
    let b = bases(o);
    let k = gathered(b.z);
    var v = T(0);
    if (k >= 0) {
        v = x[b.x + k * p.axis_stride];
    }
    y[b.y] = v;
}

@compute @workgroup_size(WG)
fn gather_vec4(@builtin(global_invocation_id) gid: vec3<u32>) {
    let o = gid.y * p.row + gid.x;
    if (o >= p.n) {
        return;
    }
    let b = bases(o);
    let k = gathered(b.z);
    var v = vec4<T>(T(0));
    if (k >= 0) {
        v = x4[b.x + k * p.axis_stride];
    }
    y4[b.y] = v;
}
