// A few f16 channels padded with zeros to 8, channels-last, in one pass:
// the (N, C, H, W) view x (C < 8, any strides) into contiguous
// (N, H, WQ, 8) y4, one invocation per 16-byte word. Two forms (override
// PAIRS): each pixel's 8 channels (the C real ones, then zeros; WQ = W),
// or, for C <= 4, two adjacent pixels of 4 channels each (word q holds
// pixels 2q - LPAD and 2q - LPAD + 1, zero outside the row). The padded
// first layer's image and weight for the KHR gather
// (src/ops/conv/pad_channels.rs).
//
// Values move as bits: x is read as the halves of u32 words and never
// converted, so NaN payloads, infinities and -0.0 come through unchanged
// (and the module needs no f16 support).
//
// Kernel spec family "conv_pad_channels.wgsl". No type slots. Overrides:
// C (1..7), the real channels, so that the padding folds at compile time;
// PAIRS (0, 1), the form. Grid: one invocation per word over a 2-D grid
// (grid::grid_1d).

struct Params {
    in_s: vec4<i32>,   // x's strides (n, c, h, w), elements
    in_off: u32,       // x's first element, counted from the binding's start
    h: u32,
    w: u32,
    words: u32,        // n * h * wq
    row: u32,          // invocations per grid row
    wq: u32,           // words per output row
    lpad: u32,         // PAIRS: zero pixels before each row
    _pad0: u32,
};

override C: u32 = 3u;
override PAIRS: u32 = 0u;
const WG: u32 = 256u;

@group(0) @binding(0) var<storage, read> xw: array<u32>;
@group(0) @binding(1) var<storage, read_write> y4: array<vec4<u32>>;
@group(0) @binding(2) var<uniform> p: Params;

// The bits of channel k at pixel element `base` (0 for k >= C).
fn half_bits(base: i32, k: u32) -> u32 {
    if (k >= C) {
        return 0u;
    }
    let e = u32(base + i32(k) * p.in_s.y);
    return (xw[e >> 1u] >> ((e & 1u) * 16u)) & 0xffffu;
}

// Channels 2j and 2j + 1 of the pixel as one word (the lower first).
fn pair(base: i32, j: u32) -> u32 {
    return half_bits(base, 2u * j) | (half_bits(base, 2u * j + 1u) << 16u);
}

// PAIRS: channels 2j and 2j + 1 of pixel x of the row at `row_base`, zero
// for a pixel outside the row.
fn pair_at(row_base: i32, x: i32, j: u32) -> u32 {
    if (x < 0 || x >= i32(p.w)) {
        return 0u;
    }
    return pair(row_base + x * p.in_s.w, j);
}

@compute @workgroup_size(WG)
fn pad_channels(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * p.row + gid.x;
    if (i >= p.words) {
        return;
    }
    let t = i / p.wq;
    let q = i - t * p.wq;
    let n = t / p.h;
    let h = t - n * p.h;
    let row_base = i32(p.in_off) + i32(n) * p.in_s.x + i32(h) * p.in_s.z;
    if (PAIRS == 0u) {
        let base = row_base + i32(q) * p.in_s.w;
        y4[i] = vec4<u32>(pair(base, 0u), pair(base, 1u), pair(base, 2u), pair(base, 3u));
    } else {
        let x = 2 * i32(q) - i32(p.lpad);
        y4[i] = vec4<u32>(pair_at(row_base, x, 0u), pair_at(row_base, x, 1u), pair_at(row_base, x + 1, 0u),
                          pair_at(row_base, x + 1, 1u));
    }
}
