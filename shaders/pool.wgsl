// 2-D pooling over NCHW tensors with any strides.
// max_pool2d / avg_pool2d: one invocation per output element.
// global_avg_pool2d: one 64-wide workgroup per (n, c) plane, reduced in
// workgroup memory.
// Substitutions: T (f32|f16; sums and comparisons run in f32), ENABLE.
{{ENABLE}}

struct Params {
    total: u32,        // output elements (windowed) or planes (global)
    channels: u32,
    h: i32,
    w: i32,
    oh: u32,
    ow: u32,
    kh: i32,
    kw: i32,
    stride_h: i32,
    stride_w: i32,
    pad_h: i32,
    pad_w: i32,
    in_off: u32,
    out_off: u32,
    row: u32,          // invocations (workgroups for global) per grid row
    include_pad: u32,
    in_s: vec4<i32>,
    out_s: vec4<i32>,
};

@group(0) @binding(0) var<storage, read> x: array<{{T}}>;
@group(0) @binding(1) var<storage, read_write> y: array<{{T}}>;
@group(0) @binding(2) var<uniform> p: Params;

struct Window {
    base: i32,
    h0: i32,
    w0: i32,
    out_index: i32,
};

// By bits, so that no fast-math assumption folds it away.
fn is_nan(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}

fn window(i: u32) -> Window {
    let ow = i % p.ow;
    let t = i / p.ow;
    let oh = t % p.oh;
    let t2 = t / p.oh;
    let c = t2 % p.channels;
    let n = t2 / p.channels;
    var win: Window;
    win.base = i32(p.in_off) + i32(n) * p.in_s.x + i32(c) * p.in_s.y;
    win.h0 = i32(oh) * p.stride_h - p.pad_h;
    win.w0 = i32(ow) * p.stride_w - p.pad_w;
    win.out_index = i32(p.out_off) + i32(n) * p.out_s.x + i32(c) * p.out_s.y + i32(oh) * p.out_s.z + i32(ow) * p.out_s.w;
    return win;
}

@compute @workgroup_size(256)
fn max_pool2d(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * p.row + gid.x;
    if (i >= p.total) {
        return;
    }
    let win = window(i);
    // Padding never wins: start from -inf. NaN propagates.
    var best = bitcast<f32>(0xff800000u);
    for (var a = max(win.h0, 0); a < min(win.h0 + p.kh, p.h); a++) {
        for (var b = max(win.w0, 0); b < min(win.w0 + p.kw, p.w); b++) {
            let v = f32(x[win.base + a * p.in_s.z + b * p.in_s.w]);
            if (v > best || is_nan(v)) {
                best = v;
            }
        }
    }
    y[win.out_index] = {{T}}(best);
}

@compute @workgroup_size(256)
fn avg_pool2d(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * p.row + gid.x;
    if (i >= p.total) {
        return;
    }
    let win = window(i);
    let h_lo = max(win.h0, 0);
    let h_hi = min(win.h0 + p.kh, p.h);
    let w_lo = max(win.w0, 0);
    let w_hi = min(win.w0 + p.kw, p.w);
    var sum = 0.0;
    for (var a = h_lo; a < h_hi; a++) {
        for (var b = w_lo; b < w_hi; b++) {
            sum += f32(x[win.base + a * p.in_s.z + b * p.in_s.w]);
        }
    }
    // Windows never reach past the padding, so with padding counted the
    // divisor is the full window.
    var count = p.kh * p.kw;
    if (p.include_pad == 0u) {
        count = max(h_hi - h_lo, 0) * max(w_hi - w_lo, 0);
    }
    y[win.out_index] = {{T}}(sum / f32(max(count, 1)));
}

var<workgroup> partial: array<f32, 64>;

@compute @workgroup_size(64)
fn global_avg_pool2d(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let plane = wg.y * p.row + wg.x;
    // Uniform control flow: every invocation of a workgroup has the same plane.
    if (plane >= p.total) {
        return;
    }
    let c = plane % p.channels;
    let n = plane / p.channels;
    let base = i32(p.in_off) + i32(n) * p.in_s.x + i32(c) * p.in_s.y;
    let hw = u32(p.h * p.w);
    let flat = p.include_pad != 0u; // reused: spatial dims are one run of stride in_s.w
    var sum = 0.0;
    for (var e = lid.x; e < hw; e += 64u) {
        var idx: i32;
        if (flat) {
            idx = i32(e) * p.in_s.w;
        } else {
            idx = i32(e / u32(p.w)) * p.in_s.z + i32(e % u32(p.w)) * p.in_s.w;
        }
        sum += f32(x[base + idx]);
    }
    partial[lid.x] = sum;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s >>= 1u) {
        if (lid.x < s) {
            partial[lid.x] += partial[lid.x + s];
        }
        workgroupBarrier();
    }
    if (lid.x == 0u) {
        y[i32(p.out_off) + i32(n) * p.out_s.x + i32(c) * p.out_s.y] = {{T}}(partial[0] / f32(hw));
    }
}
