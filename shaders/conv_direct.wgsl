// 2-D convolution computed directly, one invocation per output element, for
// convolutions with one input channel per group (depthwise): each output
// channel o reads input channel o / (channels out per group).
// Same Params as conv.wgsl. Substitutions: BIAS.

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
};

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> wt: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

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
    for (var a = 0u; a < p.kh; a++) {
        let ih = ih0 + i32(a) * p.dil_h;
        if (ih < 0 || ih >= p.h) {
            continue;
        }
        for (var b = 0u; b < p.kw; b++) {
            let iw = iw0 + i32(b) * p.dil_w;
            if (iw >= 0 && iw < p.w) {
                acc = fma(x[base + ih * p.in_s.z + iw * p.in_s.w], wt[wbase + i32(a) * p.w_s.z + i32(b) * p.w_s.w], acc);
            }
        }
    }
    if ({{BIAS}}) {
        acc += bias[i32(p.bias_off) + i32(o) * p.bias_stride];
    }
    y[i32(p.out_off) + i32(n) * p.out_s.x + i32(o) * p.out_s.y + i32(oh) * p.out_s.z + i32(ow) * p.out_s.w] = acc;
}
