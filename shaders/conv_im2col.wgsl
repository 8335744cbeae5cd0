// The columns of a convolution as a GEMM operand (im2col), for the f16
// convolution through the GEMM: for images n0.. of a chunk and one group,
// cols[(n, pixel, kk)] = x[n, c0 + c, ih, iw] with kk = (c, r, s) decoded
// as c * KH*KW + r * KW + s, ih = oh * stride_h - pad_h + r * dil_h (iw
// alike), zero outside the input (the padding) and for kk >= k (K padded to
// kp, a multiple of 8, so that the GEMM reads whole 16-byte rows).
// conv_im2col8: one invocation per 8 consecutive elements of cols (n,
//   pixel, kk), kk fastest (kp is a multiple of 8): a 16-byte run of a row.
// conv_pack_weight: the weight (O, C/groups, KH, KW) at any strides into
//   packed (O, kp) rows, zero past k: the GEMM's other operand where the
//   weight's own layout is not rows of whole 8s.
// Elements are copied, never computed with: values (NaN payloads included)
// reach the GEMM as they are. Types: T (f16) for x, wt, cols and packed.

struct Params {
    total: u32,     // invocations: words of 8 (im2col8) or elements (pack)
    row: u32,       // invocations per row of the grid
    kp: u32,        // K padded to a multiple of 8
    k: u32,         // c_per_group * KH * KW
    ohw: u32,
    ow: u32,
    kw: u32,
    taps: u32,      // KH * KW
    h: i32,
    w: i32,
    stride_h: i32,
    stride_w: i32,
    pad_h: i32,
    pad_w: i32,
    dil_h: i32,
    dil_w: i32,
    in_off: u32,    // of x[n0, c0, 0, 0]
    w_off: u32,
    _pad0: vec2<u32>,
    in_s: vec4<i32>,
    w_s: vec4<i32>,
};

@group(0) @binding(0) var<storage, read> x: array<T>;
@group(0) @binding(1) var<storage, read_write> cols: array<T>;
@group(0) @binding(2) var<uniform> p: Params;
@group(0) @binding(3) var<storage, read> wt: array<T>;
@group(0) @binding(4) var<storage, read_write> packed: array<T>;

@compute @workgroup_size(256)
fn conv_im2col8(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * p.row + gid.x;
    if (i >= p.total) {
        return;
    }
    let words = p.kp / 8u;
    let kk0 = (i % words) * 8u;
    let t = i / words;
    let pix = t % p.ohw;
    let n = t / p.ohw;
    let ih0 = i32(pix / p.ow) * p.stride_h - p.pad_h;
    let iw0 = i32(pix % p.ow) * p.stride_w - p.pad_w;
    let image = i32(p.in_off) + i32(n) * p.in_s.x;
    let kh = p.taps / p.kw;
    // (c, r, s) of kk0, stepped along the 8 (s fastest).
    var c = kk0 / p.taps;
    var r = (kk0 % p.taps) / p.kw;
    var s = kk0 % p.kw;
    for (var j = 0u; j < 8u; j++) {
        let ih = ih0 + i32(r) * p.dil_h;
        let iw = iw0 + i32(s) * p.dil_w;
        var v = T(0.0);
        if (kk0 + j < p.k && ih >= 0 && ih < p.h && iw >= 0 && iw < p.w) {
            v = x[image + i32(c) * p.in_s.y + ih * p.in_s.z + iw * p.in_s.w];
        }
        cols[i * 8u + j] = v;
        s += 1u;
        if (s == p.kw) {
            s = 0u;
            r += 1u;
            if (r == kh) {
                r = 0u;
                c += 1u;
            }
        }
    }
}

@compute @workgroup_size(256)
fn conv_pack_weight(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * p.row + gid.x;
    if (i >= p.total) {
        return;
    }
    let kk = i % p.kp;
    let o = i / p.kp;
    var v = T(0.0);
    if (kk < p.k) {
        let c = kk / p.taps;
        let rs = kk % p.taps;
        v = wt[i32(p.w_off) + i32(o) * p.w_s.x + i32(c) * p.w_s.y + i32(rs / p.kw) * p.w_s.z + i32(rs % p.kw) * p.w_s.w];
    }
    packed[i] = v;
}
