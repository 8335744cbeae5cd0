// Winograd F(2x2, 3x3) for f32 3x3 stride-1 convolutions (Lavin & Gray):
// each 2x2 tile of output pixels comes from the 4x4 input patch at
// (2*ty - pad_h, 2*tx - pad_w) as Y = A^T [ sum_c (G g G^T) .* (B^T d B) ] A,
// the sum over channels being 16 GEMMs (one per transformed element k) that
// the library's f32 GEMM runs between these passes:
//
//   wino_weight: U_k = (G g[o][c] G^T)[k]; an invocation per (c, o).
//     g is read at any strides.
//   wino_input:  V_k[t][c] = (B^T d[t][c] B)[k] for the chunk's tiles t
//     (image-major, then tile rows, then tiles along a row); the patch
//     reads zeros outside the input (padding and the rows and columns past
//     the output's last whole tile).
//   wino_output: Y = A^T M_k[t][o] A plus the bias and the activation,
//     stored where inside the output (edge tiles keep 1 row or column).
//
// Two layouts (override CF): channels-last images (CF false) take
// U_k (C x O), V_k (tiles x C) and M_k = V_k U_k (tiles x O), channels
// fastest, so that neighbouring invocations read and write neighbouring
// channels; channels-first images (CF true) take the transposes,
// U_k (O x C), V_k (C x tiles) and M_k = U_k V_k (O x tiles), tiles
// fastest (rows of p.ld >= p.ptiles), neighbouring invocations then read
// and write neighbouring tiles along an image row.
//
// The transforms add and subtract only (G halves, exact in binary), so a
// NaN input reaches exactly the outputs whose window covers it, as in the
// direct sum; an infinity reaches the same outputs but may turn into NaN
// where the transforms subtract it from itself. Types: f32 throughout.

struct Params {
    total: u32,       // invocations of the entry
    row: u32,         // invocations per row of the grid
    c: u32,
    o: u32,
    h: i32,
    w: i32,
    oh: u32,
    ow: u32,
    tw: u32,          // tiles along an output row
    tiles: u32,       // tiles per image
    ptiles: u32,      // tiles of the chunk
    pad_h: i32,
    pad_w: i32,
    in_off: u32,      // of x[n0, 0, 0, 0]
    w_off: u32,
    out_off: u32,     // of y[n0, 0, 0, 0]
    bias_off: u32,
    bias_stride: i32,
    act: u32,         // WgcActivation: 0 none, 1 relu, 2 relu6, 3 hardswish
    ld: u32,          // CF: the row stride of V_k and M_k (ptiles, whole 4s)
    in_s: vec4<i32>,
    w_s: vec4<i32>,
    out_s: vec4<i32>,
};

override BIAS: bool = false;
override CF: bool = false;

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> wt: array<f32>;
@group(0) @binding(2) var<storage, read_write> u: array<f32>;
@group(0) @binding(3) var<storage, read> x: array<f32>;
@group(0) @binding(4) var<storage, read_write> v: array<f32>;
@group(0) @binding(5) var<storage, read> m: array<f32>;
@group(0) @binding(6) var<storage, read> bias: array<f32>;
@group(0) @binding(7) var<storage, read_write> y: array<f32>;

// G applied along one row of 3 taps.
fn g_row(q: vec3<f32>) -> vec4<f32> {
    return vec4<f32>(q.x, (q.x + q.y + q.z) * 0.5, (q.x - q.y + q.z) * 0.5, q.z);
}

@compute @workgroup_size(256)
fn wino_weight(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * p.row + gid.x;
    if (i >= p.total) {
        return;
    }
    var o = i % p.o;
    var c = i / p.o;
    if (CF) {
        c = i % p.c;
        o = i / p.c;
    }
    let base = i32(p.w_off) + i32(o) * p.w_s.x + i32(c) * p.w_s.y;
    var g: array<vec3<f32>, 3>;
    for (var r = 0; r < 3; r++) {
        let at = base + r * p.w_s.z;
        g[r] = vec3<f32>(wt[at], wt[at + p.w_s.w], wt[at + 2 * p.w_s.w]);
    }
    // G g (4 rows of 3), then G along each row.
    let q0 = g[0];
    let q1 = (g[0] + g[1] + g[2]) * 0.5;
    let q2 = (g[0] - g[1] + g[2]) * 0.5;
    let q3 = g[2];
    let rows = array<vec4<f32>, 4>(g_row(q0), g_row(q1), g_row(q2), g_row(q3));
    let plane = p.c * p.o;
    let at = select(c * p.o + o, o * p.c + c, CF);
    for (var r = 0u; r < 4u; r++) {
        for (var s = 0u; s < 4u; s++) {
            u[(r * 4u + s) * plane + at] = rows[r][s];
        }
    }
}

fn load(base: i32, ih: i32, iw: i32) -> f32 {
    if (ih < 0 || ih >= p.h || iw < 0 || iw >= p.w) {
        return 0.0;
    }
    return x[base + ih * p.in_s.z + iw * p.in_s.w];
}

// B^T applied along one row of 4 inputs.
fn b_row(d: vec4<f32>) -> vec4<f32> {
    return vec4<f32>(d.x - d.z, d.y + d.z, d.z - d.y, d.y - d.w);
}

@compute @workgroup_size(256)
fn wino_input(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * p.row + gid.x;
    if (i >= p.total) {
        return;
    }
    var c = i % p.c;
    var pt = i / p.c;
    var plane = p.ptiles * p.c;
    var at = i;
    if (CF) {
        pt = i % p.ptiles;
        c = i / p.ptiles;
        plane = p.c * p.ld;
        at = c * p.ld + pt;
    }
    let n = pt / p.tiles;
    let t = pt % p.tiles;
    let ih0 = i32(t / p.tw) * 2 - p.pad_h;
    let iw0 = i32(t % p.tw) * 2 - p.pad_w;
    let base = i32(p.in_off) + i32(n) * p.in_s.x + i32(c) * p.in_s.y;
    var d: array<vec4<f32>, 4>;
    for (var r = 0; r < 4; r++) {
        let ih = ih0 + r;
        d[r] = vec4<f32>(load(base, ih, iw0), load(base, ih, iw0 + 1), load(base, ih, iw0 + 2), load(base, ih, iw0 + 3));
    }
    // B^T d (down the columns), then B along each row.
    let rows = array<vec4<f32>, 4>(
        b_row(d[0] - d[2]),
        b_row(d[1] + d[2]),
        b_row(d[2] - d[1]),
        b_row(d[1] - d[3]),
    );
    for (var r = 0u; r < 4u; r++) {
        for (var s = 0u; s < 4u; s++) {
            v[(r * 4u + s) * plane + at] = rows[r][s];
        }
    }
}

fn is_nan(a: f32) -> bool {
    return (bitcast<u32>(a) & 0x7fffffffu) > 0x7f800000u;
}

// The activation as wgc_op_unary computes it (NaN kept; hardswish is x
// itself from 3 on).
fn activate(a: f32) -> f32 {
    switch p.act {
        case 1u: { return select(max(a, 0.0), a, is_nan(a)); }
        case 2u: { return select(min(max(a, 0.0), 6.0), a, is_nan(a)); }
        case 3u: { return select(a * max(a + 3.0, 0.0) / 6.0, a, a >= 3.0 || is_nan(a)); }
        default: { return a; }
    }
}

// A^T applied along one row of 4 products: the 2 outputs.
fn a_row(q: vec4<f32>) -> vec2<f32> {
    return vec2<f32>(q.x + q.y + q.z, q.y - q.z - q.w);
}

@compute @workgroup_size(256)
fn wino_output(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * p.row + gid.x;
    if (i >= p.total) {
        return;
    }
    var o = i % p.o;
    var pt = i / p.o;
    var plane = p.ptiles * p.o;
    var at = i;
    if (CF) {
        pt = i % p.ptiles;
        o = i / p.ptiles;
        plane = p.o * p.ld;
        at = o * p.ld + pt;
    }
    let n = pt / p.tiles;
    let t = pt % p.tiles;
    var q: array<vec4<f32>, 4>;
    for (var r = 0u; r < 4u; r++) {
        let k = r * 4u * plane + at;
        q[r] = vec4<f32>(m[k], m[k + plane], m[k + 2u * plane], m[k + 3u * plane]);
    }
    // A^T M (down the columns), then A along each row.
    let top = a_row(q[0] + q[1] + q[2]);
    let bottom = a_row(q[1] - q[2] - q[3]);
    var b = 0.0;
    if (BIAS) {
        b = bias[i32(p.bias_off) + i32(o) * p.bias_stride];
    }
    let oh0 = (t / p.tw) * 2u;
    let ow0 = (t % p.tw) * 2u;
    let base = i32(p.out_off) + i32(n) * p.out_s.x + i32(o) * p.out_s.y;
    let vals = array<vec2<f32>, 2>(top, bottom);
    for (var r = 0u; r < 2u; r++) {
        for (var s = 0u; s < 2u; s++) {
            if (oh0 + r < p.oh && ow0 + s < p.ow) {
                y[base + i32(oh0 + r) * p.out_s.z + i32(ow0 + s) * p.out_s.w] = activate(vals[r][s] + b);
            }
        }
    }
}
