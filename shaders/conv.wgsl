// 2-D convolution as an implicit GEMM, one group per grid z:
//   M = batch * OH * OW output pixels, N = output channels of the group,
//   K = input channels of the group * KH * KW.
// The tiling is gemm_tile.wgsl's (appended to this file: 16x16 threads,
// BM = 64*RM, BN = 64*RN, BK staged in workgroup memory); A's elements are
// gathered from the input (zero outside it, which is the padding), B's from
// the weight.
// When the output has too few tiles to fill the GPU (or K is longer than
// one run may be), K is split into runs over several workgroups, each
// storing its partial sums into its own f32 slab of scratch bound as `y`
// (SPLIT true, BIAS false): (M, O) row-major, the output channels of every
// group along a row. gemm_split_sum.wgsl then adds the slabs with the bias
// and activation into the output.

struct Params {
    m: u32,          // batch * oh * ow
    o_per_group: u32,
    k: u32,          // c_per_group * KH * KW
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
    splits: u32,       // K runs this launch covers (grid z = group * splits + run - split_base)
    in_s: vec4<i32>,   // strides of the input (n, c, h, w)
    w_s: vec4<i32>,    // of the weight (o, c, kh, kw)
    out_s: vec4<i32>,  // of the output (n, o, oh, ow)
    k_chunk: u32,      // K range of one split, a multiple of BK
    kw: u32,           // kernel width and taps (KH * KW), read where KW or KH is 0
    taps: u32,
    split_base: u32,   // the first K run of this launch
    slab_len: u32,     // elements of one slab (M * output channels)
    channels: u32,     // output channels of all groups (a slab's row)
};

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read> wt: array<f32>;
@group(0) @binding(2) var<storage, read> bias: array<f32>;
// The output, or under SPLIT the slabs.
@group(0) @binding(3) var<storage, read_write> y: array<f32>;
@group(0) @binding(4) var<uniform> p: Params;

// The kernel's height and width where the library compiles them in (so the
// k decode divides by constants), 0 for any other size (read from p).
override KH: u32 = 0u;
override KW: u32 = 0u;
// Add bias[o] to output channel o.
override BIAS: bool = false;
// Store partial sums into the slab of the run rather than the output.
override SPLIT: bool = false;

fn kw() -> u32 { return select(p.kw, KW, KW != 0u); }
fn taps() -> u32 { return select(p.taps, KH * KW, KH != 0u && KW != 0u); }

// A loads walk m fastest (adjacent output pixels read adjacent input);
// B loads walk k fastest (a contiguous weight is (o, k) row-major).
fn load_tiles(k0: u32, k_end: u32, tid: u32, a_valid: bool, a_base: i32, ih0: i32, iw0: i32, n0: u32, o_base: u32,
              a_regs: ptr<function, Loads>, b_regs: ptr<function, Loads>) {
    for (var l = 0u; l < A_LOADS; l++) {
        let gk = k0 + l * (256u / BM) + tid / BM;
        var v = 0.0;
        if (a_valid && gk < k_end) {
            let c = gk / taps();
            let rem = gk % taps();
            let ih = ih0 + i32(rem / kw()) * p.dil_h;
            let iw = iw0 + i32(rem % kw()) * p.dil_w;
            if (ih >= 0 && ih < p.h && iw >= 0 && iw < p.w) {
                v = x[a_base + i32(c) * p.in_s.y + ih * p.in_s.z + iw * p.in_s.w];
            }
        }
        (*a_regs)[l] = v;
    }
    for (var l = 0u; l < B_LOADS; l++) {
        let idx = l * 256u + tid;
        let gn = n0 + idx / BK;
        let gk = k0 + idx % BK;
        var v = 0.0;
        if (gn < p.o_per_group && gk < k_end) {
            let c = gk / taps();
            let rem = gk % taps();
            v = wt[i32(p.w_off) + i32(o_base + gn) * p.w_s.x + i32(c) * p.w_s.y + i32(rem / kw()) * p.w_s.z
                   + i32(rem % kw()) * p.w_s.w];
        }
        (*b_regs)[l] = v;
    }
}

@compute @workgroup_size(16, 16, 1)
fn conv_gemm(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let tx = lid.x;
    let ty = lid.y;
    let tid = ty * 16u + tx;
    let g = wg.z / p.splits;
    let split = wg.z % p.splits;
    let k_begin = (p.split_base + split) * p.k_chunk;
    let k_end = min(k_begin + p.k_chunk, p.k);
    let m0 = wg.y * BM;
    let n0 = wg.x * BN;
    let ohw = p.oh * p.ow;

    // A loads walk m fastest, so each thread's m is the same for every
    // load: decode it once.
    let a_mm = tid % BM;
    let a_k_step = 256u / BM;
    let am = m0 + a_mm;
    let a_valid = am < p.m;
    let an = am / ohw;
    let ap = am % ohw;
    let ih0 = i32(ap / p.ow) * p.stride_h - p.pad_h;
    let iw0 = i32(ap % p.ow) * p.stride_w - p.pad_w;
    let a_base = i32(p.in_off) + i32(an) * p.in_s.x + i32(g * p.c_per_group) * p.in_s.y;
    let o_base = g * p.o_per_group;

    var acc: Acc; // zero-initialized

    // The next K step's loads are in flight while a step is computed.
    var a_next: Loads;
    var b_next: Loads;
    load_tiles(k_begin, k_end, tid, a_valid, a_base, ih0, iw0, n0, o_base, &a_next, &b_next);
    for (var k0 = k_begin; k0 < k_end; k0 += BK) {
        for (var l = 0u; l < A_LOADS; l++) {
            As[(l * a_k_step + tid / BM) * A_ROW + a_mm / 4u][a_mm % 4u] = a_next[l];
        }
        for (var l = 0u; l < B_LOADS; l++) {
            let idx = l * 256u + tid;
            let nn = idx / BK;
            Bs[(idx % BK) * B_ROW + nn / 4u][nn % 4u] = b_next[l];
        }
        workgroupBarrier();
        if (k0 + BK < k_end) {
            load_tiles(k0 + BK, k_end, tid, a_valid, a_base, ih0, iw0, n0, o_base, &a_next, &b_next);
        }

        multiply_staged(tx, ty, &acc);
        workgroupBarrier();
    }

    for (var i = 0u; i < RM; i++) {
        for (var r = 0u; r < 4u; r++) {
            let gm = m0 + i * 64u + ty * 4u + r;
            if (gm >= p.m) {
                continue;
            }
            let n = gm / ohw;
            let pix = gm % ohw;
            var row = i32(p.out_off) + i32(n) * p.out_s.x + i32(pix / p.ow) * p.out_s.z + i32(pix % p.ow) * p.out_s.w;
            if (SPLIT) {
                row = i32(split * p.slab_len + gm * p.channels);
            }
            for (var j = 0u; j < RN; j++) {
                for (var q = 0u; q < 4u; q++) {
                    let gn = n0 + j * 64u + tx * 4u + q;
                    if (gn < p.o_per_group) {
                        let o = o_base + gn;
                        var v = acc[i * 4u + r][j][q];
                        if (BIAS) {
                            v += bias[i32(p.bias_off) + i32(o) * p.bias_stride];
                        }
                        if (SPLIT) {
                            y[row + i32(o)] = v;
                        } else {
                            y[row + i32(o) * p.out_s.y] = v;
                        }
                    }
                }
            }
        }
    }
}
