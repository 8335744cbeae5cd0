// 2-D convolution computed directly for convolutions with one input channel
// per group (depthwise): each output channel o reads input channel
// o / (channels out per group).
// conv_direct: one invocation per output element.
// Large kernels (a software driver stops each invocation's loops after
// 65,535 iterations, and one invocation per output would be slow anyway):
// conv_direct_taps: one 256-wide workgroup per output element, the taps'
//   products summed in workgroup memory;
// kernels over chunk_len taps: conv_direct_chunks, the same per (chunk of
//   the taps, output element), partial sums to `parts`, then
//   conv_direct_finish, one invocation per output adding its partials.
// Params begin as conv.wgsl's.
// Types: T (f32|f16) for x, wt, bias and y; sums are f32 (parts too), an
// f16 output is rounded once from the f32 sum.

struct Params {
    m: u32,
    o_per_group: u32,
    k: u32,
    c_per_group: u32,
    h: i32,
    w: i32,
    oh: u32,
    ow: u32,
    stride_h: i32,
    stride_w: i32,
    pad_h: i32,
    pad_w: i32,
    dil_h: i32,
    dil_w: i32,
    in_off: u32,
    w_off: u32,
    out_off: u32,
    bias_off: u32,
    bias_stride: i32,
    row: u32,          // invocations per row of the grid
    in_s: vec4<i32>,
    w_s: vec4<i32>,
    out_s: vec4<i32>,
    total: u32,        // batch * channels * oh * ow
    channels: u32,     // output channels
    kh: u32,
    kw: u32,
    chunk_len: u32,    // taps per workgroup (chunked kernels)
    chunks: u32,
};

@group(0) @binding(0) var<storage, read> x: array<T>;
@group(0) @binding(1) var<storage, read> wt: array<T>;
@group(0) @binding(2) var<storage, read> bias: array<T>;
@group(0) @binding(3) var<storage, read_write> y: array<T>;
@group(0) @binding(4) var<uniform> p: Params;
// Partial sum of chunk c of output i's taps at i * chunks + c.
@group(0) @binding(5) var<storage, read_write> parts: array<f32>;

// Add bias[o] to output channel o.
override BIAS: bool = false;
// The window's height and width compiled in for conv_direct (0: read from
// p), so that 3x3 and the other common sizes unroll: loops of uniform
// length with a bounds branch per tap kept each output's loads apart.
override KH: u32 = 0u;
override KW: u32 = 0u;

fn window_h() -> u32 {
    return select(p.kh, KH, KH != 0u);
}
fn window_w() -> u32 {
    return select(p.kw, KW, KW != 0u);
}

@compute @workgroup_size(256)
fn conv_direct(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * p.row + gid.x;
    if (i >= p.total) {
        return;
    }
    let ow = i % p.ow;
    let t = i / p.ow;
    let oh = t % p.oh;
    let t2 = t / p.oh;
    let o = t2 % p.channels;
    let n = t2 / p.channels;
    let c = o / p.o_per_group;
    let base = i32(p.in_off) + i32(n) * p.in_s.x + i32(c) * p.in_s.y;
    let wbase = i32(p.w_off) + i32(o) * p.w_s.x;
    let ih0 = i32(oh) * p.stride_h - p.pad_h;
    let iw0 = i32(ow) * p.stride_w - p.pad_w;
    var acc = 0.0;
    for (var a = 0u; a < window_h(); a++) {
        let ih = ih0 + i32(a) * p.dil_h;
        if (ih < 0 || ih >= p.h) {
            continue;
        }
        for (var b = 0u; b < window_w(); b++) {
            let iw = iw0 + i32(b) * p.dil_w;
            if (iw >= 0 && iw < p.w) {
                acc = fma(f32(x[base + ih * p.in_s.z + iw * p.in_s.w]), f32(wt[wbase + i32(a) * p.w_s.z + i32(b) * p.w_s.w]), acc);
            }
        }
    }
    if (BIAS) {
        acc += f32(bias[i32(p.bias_off) + i32(o) * p.bias_stride]);
    }
    y[i32(p.out_off) + i32(n) * p.out_s.x + i32(o) * p.out_s.y + i32(oh) * p.out_s.z + i32(ow) * p.out_s.w] = T(acc);
}

// Where output element i lives and what it reads.
struct Out {
    index: i32,    // in y
    base: i32,     // of its input channel in x
    wbase: i32,    // of its filter in wt
    ih0: i32,
    iw0: i32,
    o: u32,
};

fn out_of(i: u32) -> Out {
    let ow = i % p.ow;
    let t = i / p.ow;
    let oh = t % p.oh;
    let t2 = t / p.oh;
    let o = t2 % p.channels;
    let n = t2 / p.channels;
    var r: Out;
    r.o = o;
    r.base = i32(p.in_off) + i32(n) * p.in_s.x + i32(o / p.o_per_group) * p.in_s.y;
    r.wbase = i32(p.w_off) + i32(o) * p.w_s.x;
    r.ih0 = i32(oh) * p.stride_h - p.pad_h;
    r.iw0 = i32(ow) * p.stride_w - p.pad_w;
    r.index = i32(p.out_off) + i32(n) * p.out_s.x + i32(o) * p.out_s.y + i32(oh) * p.out_s.z + i32(ow) * p.out_s.w;
    return r;
}

fn with_bias(v: f32, o: u32) -> T {
    if (BIAS) {
        return T(v + f32(bias[i32(p.bias_off) + i32(o) * p.bias_stride]));
    }
    return T(v);
}

var<workgroup> wg_acc: array<f32, 256>;

// The sum over chunk `chunk` of output r's taps, reduced over the workgroup
// (the result is in invocation 0). Blocks of 32 products are summed on
// their own, then added: the rounding error grows with 32 + n / 32, not n.
fn taps_sum(r: Out, chunk: u32, lid: u32) -> f32 {
    let begin = chunk * p.chunk_len;
    let end = min(begin + p.chunk_len, p.kh * p.kw);
    var acc = 0.0;
    var block = 0.0;
    var in_block = 0u;
    for (var t = begin + lid; t < end; t += 256u) {
        let a = t / p.kw;
        let b = t % p.kw;
        let ih = r.ih0 + i32(a) * p.dil_h;
        let iw = r.iw0 + i32(b) * p.dil_w;
        if (ih >= 0 && ih < p.h && iw >= 0 && iw < p.w) {
            block = fma(f32(x[r.base + ih * p.in_s.z + iw * p.in_s.w]), f32(wt[r.wbase + i32(a) * p.w_s.z + i32(b) * p.w_s.w]),
                        block);
        }
        in_block++;
        if (in_block == 32u) {
            acc += block;
            block = 0.0;
            in_block = 0u;
        }
    }
    wg_acc[lid] = acc + block;
    workgroupBarrier();
    for (var s = 128u; s > 0u; s >>= 1u) {
        if (lid < s) {
            wg_acc[lid] += wg_acc[lid + s];
        }
        workgroupBarrier();
    }
    return wg_acc[0];
}

@compute @workgroup_size(256)
fn conv_direct_taps(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = wid.z * p.row + wid.y;
    // Uniform control flow: every invocation of a workgroup has the same output.
    if (i >= p.total) {
        return;
    }
    let r = out_of(i);
    let s = taps_sum(r, 0u, lid);
    if (lid == 0u) {
        y[r.index] = with_bias(s, r.o);
    }
}

@compute @workgroup_size(256)
fn conv_direct_chunks(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = wid.z * p.row + wid.y;
    if (i >= p.total) {
        return;
    }
    let s = taps_sum(out_of(i), wid.x, lid);
    if (lid == 0u) {
        parts[i * p.chunks + wid.x] = s;
    }
}

@compute @workgroup_size(256)
fn conv_direct_finish(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * p.row + gid.x;
    if (i >= p.total) {
        return;
    }
    let r = out_of(i);
    var acc = 0.0;
    for (var c = 0u; c < p.chunks; c++) {
        acc += parts[i * p.chunks + c];
    }
    y[r.index] = with_bias(acc, r.o);
}
