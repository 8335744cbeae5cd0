// Kernel spec family "concat" (src/ops/concat.rs): copy one view into
// another of the same shape; concat copies each input into its slice of
// the output. Prelude: T (element type). Overrides: WG (workgroup size).
//
// y[y_base(o)] = x[x_base(o)] for every logical index o, where each base
// adds o's coordinates times that view's strides.
// copy: one element per invocation.
// copy_vec4: four consecutive elements of the last dim (stride 1 in both
//   views); offsets, strides and the last dim's length in vec4 units.
// Invocations are spread over a 2-D grid: linear = gid.y * row + gid.x.

override WG: u32 = 256u;

struct Params {
    n: u32,
    row: u32,
    rank: u32,
    x_offset: u32,
    y_offset: u32,
    _pad0: u32,
    _pad1: u32,
    _pad2: u32,
    shape: array<vec4<u32>, 2>,
    x_strides: array<vec4<i32>, 2>,
    y_strides: array<vec4<i32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<T>;
@group(0) @binding(2) var<storage, read_write> y: array<T>;
@group(0) @binding(3) var<storage, read> x4: array<vec4<T>>;
@group(0) @binding(4) var<storage, read_write> y4: array<vec4<T>>;

// Offsets of logical element `o` in x and y.
fn bases(o: u32) -> vec2<i32> {
    var rem = o;
    var off = vec2<i32>(i32(p.x_offset), i32(p.y_offset));
    for (var d = i32(p.rank) - 1; d >= 0; d--) {
        let n = p.shape[d / 4][d % 4];
        let c = i32(rem % n);
        rem = rem / n;
        off += c * vec2<i32>(p.x_strides[d / 4][d % 4], p.y_strides[d / 4][d % 4]);
    }
    return off;
}

@compute @workgroup_size(WG)
fn copy(@builtin(global_invocation_id) gid: vec3<u32>) {
    let o = gid.y * p.row + gid.x;
    if (o >= p.n) {
        return;
    }
    let b = bases(o);
    y[b.y] = x[b.x];
}

@compute @workgroup_size(WG)
fn copy_vec4(@builtin(global_invocation_id) gid: vec3<u32>) {
    let o = gid.y * p.row + gid.x;
    if (o >= p.n) {
        return;
    }
    let b = bases(o);
    y4[b.y] = x4[b.x];
}
