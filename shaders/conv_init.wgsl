// The first pass of a split-K convolution: set every element of the output
// view to its channel's bias (or zero), for the splits to add into.
// One invocation per output element.

struct Params {
    total: u32,
    channels: u32,
    ohw: u32,
    ow: u32,
    out_off: u32,
    bias_off: u32,
    bias_stride: i32,
    row: u32,
    out_s: vec4<i32>,
};

@group(0) @binding(0) var<storage, read> bias: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;

// Set channel o to bias[o] (else to zero).
override BIAS: bool = false;

@compute @workgroup_size(256)
fn conv_init(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * p.row + gid.x;
    if (i >= p.total) {
        return;
    }
    let pix = i % p.ohw;
    let t = i / p.ohw;
    let o = t % p.channels;
    let n = t / p.channels;
    var v = 0.0;
    if (BIAS) {
        v = bias[i32(p.bias_off) + i32(o) * p.bias_stride];
    }
    y[i32(p.out_off) + i32(n) * p.out_s.x + i32(o) * p.out_s.y + i32(pix / p.ow) * p.out_s.z + i32(pix % p.ow) * p.out_s.w] = v;
}
