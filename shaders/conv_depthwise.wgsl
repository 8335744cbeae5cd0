// Depthwise 2-D convolution (one input and one output channel per group)
// at the memory bandwidth, with the bias and an activation applied before
// the store. Five entries:
//
// dw_words: channels-last input and output, channels at unit stride in
//   whole 16-byte words (4 f32 or 8 f16 channels): an invocation computes
//   one word of channels of one output pixel. A workgroup covers `cvw`
//   words of channels (x of the grid) for 256 / cvw output pixels; it first
//   stages its channels' filters in workgroup memory, tap-major, as f32.
// dw_rows: dw_words with OUT_W outputs along a row per invocation, for
//   square K x K windows of stride S (both compiled in) and dilation 1:
//   each input word of a row is loaded and converted once and feeds every
//   output it reaches.
// dw_strips: any strides (channels-first at its best), square K x K
//   windows of stride S and dilation 1: an invocation computes OUT_W
//   outputs along a row of one (image, channel) plane, each input value of
//   the rows they read loaded and converted once; neighbouring invocations
//   take neighbouring strips of a row.
// dw_rows8: dw_rows for f16 in 8-byte words of 4 channels (x2, y2).
// dw_tiles: any strides and window: a workgroup covers a
//   th x tw tile of output pixels in each of `planes` consecutive (image,
//   channel) planes, stages the input rows and columns the tile reads in
//   workgroup memory (zeros where padding), then each invocation computes
//   one output from there.
//
// Types: T (f32|f16) for x, wt, bias and y; the words entry reads x4 and
// writes y4 as vec4<u32> (4 f32, or 8 f16 unpacked to f32). Sums are f32;
// an f16 output is rounded once from the activated f32 value.

struct Params {
    in_s: vec4<i32>,     // input strides (n, c, h, w): elements; dw_words: words
    w_s: vec4<i32>,      // weight strides (o, 1, kh, kw), elements
    out_s: vec4<i32>,    // output strides, as in_s
    n: u32,
    c: u32,
    h: i32,
    w: i32,
    oh: u32,
    ow: u32,
    kh: u32,
    kw: u32,
    sh: i32,
    sw: i32,
    ph: i32,
    pw: i32,
    dh: i32,
    dw: i32,
    in_off: u32,         // dw_words: in words
    w_off: u32,
    out_off: u32,        // dw_words: in words
    bias_off: u32,
    bias_stride: i32,
    act: u32,            // WgcActivation: 0 none, 1 relu, 2 relu6, 3 hardswish
    // dw_tiles
    tw: u32,
    th: u32,
    planes: u32,
    tiles_w: u32,
    rh: u32,             // input rows a tile reads
    rw: u32,             // input columns a tile reads (at most 256)
    row: u32,            // workgroups per grid row (y) before z steps
    // dw_words
    cvw: u32,            // channel words per workgroup (a power of 2, at most 16)
    words: u32,          // channel words per pixel (C / lanes)
    pixels: u32,         // n * oh * ow (dw_rows: n * oh * blocks; dw_strips: n * c * oh * blocks)
    blocks: u32,         // dw_rows, dw_strips: blocks of OUT_W outputs per row
    reps: u32,           // dw_words, dw_rows: pixel groups per workgroup, one after another
};

@group(0) @binding(0) var<storage, read> x: array<T>;
@group(0) @binding(1) var<storage, read> wt: array<T>;
@group(0) @binding(2) var<storage, read> bias: array<T>;
@group(0) @binding(3) var<storage, read_write> y: array<T>;
@group(0) @binding(4) var<uniform> p: Params;
@group(0) @binding(5) var<storage, read> x4: array<vec4<u32>>;
@group(0) @binding(6) var<storage, read_write> y4: array<vec4<u32>>;
@group(0) @binding(7) var<storage, read> x2: array<vec2<u32>>;
@group(0) @binding(8) var<storage, read_write> y2: array<vec2<u32>>;

// Add bias[c] to channel c.
override BIAS: bool = false;
// A square window compiled in (0: p.kh x p.kw), so that 3x3 and 5x5 unroll.
override K: u32 = 0u;
// The stride of dw_rows.
override S: u32 = 1u;
// Input columns one dw_rows invocation reads per row.
override COLS: u32 = (OUT_W - 1u) * S + K;

const F16 = T_KIND == 1u;
// Channels per 16-byte word, and vec4s of f32 per word.
const LANES = select(4u, 8u, F16);
const HALVES = LANES / 4u;
// Staged filters (dw_words): taps * cvw * HALVES vec4s at most.
const W_CAP = 1024u;
// Staged input (dw_tiles): planes * rh * rw values at most.
const TILE_CAP = 4096u;
// Outputs along a row per dw_rows invocation.
const OUT_W = 4u;
// Most taps in a row of dw_rows' window (its K).
const MAX_K = 5u;

var<workgroup> w_stage: array<vec4<f32>, W_CAP>;
var<workgroup> tile: array<f32, TILE_CAP>;

fn window_h() -> u32 {
    return select(p.kh, K, K != 0u);
}
fn window_w() -> u32 {
    return select(p.kw, K, K != 0u);
}

fn is_nan(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}

// The activation as wgc_op_unary computes it (NaN kept; hardswish is x
// itself from 3 on).
fn activate(v: f32) -> f32 {
    switch p.act {
        case 1u: { return select(max(v, 0.0), v, is_nan(v)); }
        case 2u: { return select(min(max(v, 0.0), 6.0), v, is_nan(v)); }
        case 3u: { return select(v * max(v + 3.0, 0.0) / 6.0, v, v >= 3.0 || is_nan(v)); }
        default: { return v; }
    }
}

fn finish(v: f32, c: u32) -> f32 {
    var s = v;
    if (BIAS) {
        s += f32(bias[i32(p.bias_off) + i32(c) * p.bias_stride]);
    }
    return activate(s);
}

fn finish4(v: vec4<f32>, c0: u32) -> vec4<f32> {
    return vec4<f32>(finish(v.x, c0), finish(v.y, c0 + 1u), finish(v.z, c0 + 2u), finish(v.w, c0 + 3u));
}

fn filter_tap(c: u32, a: u32, b: u32) -> f32 {
    return f32(wt[i32(p.w_off) + i32(c) * p.w_s.x + i32(a) * p.w_s.z + i32(b) * p.w_s.w]);
}

// Stage the filters of the channel words (of `lanes` channels, `halves`
// vec4s) from first_word on (p.cvw of them): [tap][word][half], as f32.
fn stage_filters(lid: u32, first_word: u32, kh: u32, kw: u32, lanes: u32, halves: u32) {
    let cvw = p.cvw;
    let staged = kh * kw * cvw * halves;
    for (var e = lid; e < staged; e += 256u) {
        let half = e % halves;
        let rest = e / halves;
        let t = rest / cvw;
        let c0 = (first_word + rest % cvw) * lanes + half * 4u;
        var v = vec4<f32>(0.0);
        for (var l = 0u; l < 4u; l++) {
            if (c0 + l < p.c) {
                v[l] = filter_tap(c0 + l, t / kw, t % kw);
            }
        }
        w_stage[e] = v;
    }
}

// A 16-byte word as 4 (f32) or 8 (f16: lo, hi) channels.
struct Word {
    lo: vec4<f32>,
    hi: vec4<f32>,
};

fn unpack_word(v: vec4<u32>) -> Word {
    var r: Word;
    if (F16) {
        r.lo = vec4<f32>(unpack2x16float(v.x), unpack2x16float(v.y));
        r.hi = vec4<f32>(unpack2x16float(v.z), unpack2x16float(v.w));
    } else {
        r.lo = bitcast<vec4<f32>>(v);
        r.hi = vec4<f32>(0.0);
    }
    return r;
}

// Bias, activation and the store of one output word.
fn store_word(at: i32, lo: vec4<f32>, hi: vec4<f32>, c0: u32) {
    let r0 = finish4(lo, c0);
    if (F16) {
        let r1 = finish4(hi, c0 + 4u);
        y4[at] = vec4<u32>(pack2x16float(r0.xy), pack2x16float(r0.zw), pack2x16float(r1.xy), pack2x16float(r1.zw));
    } else {
        y4[at] = bitcast<vec4<u32>>(r0);
    }
}

// The workgroup's filters staged, each invocation computes channel word
// `word` (its cw-th) of the p.reps pixel groups (of 256 / cvw pixels or
// blocks) of the workgroup, one after another.
@compute @workgroup_size(256)
fn dw_rows(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let cvw = p.cvw;
    let first_word = wid.x * cvw;
    stage_filters(lid, first_word, K, K, LANES, HALVES);
    workgroupBarrier();
    let cw = lid % cvw;
    let word = first_word + cw;
    let group = wid.z * p.row + wid.y;
    for (var rep = 0u; rep < p.reps; rep++) {
        let blk = (group * p.reps + rep) * (256u / cvw) + lid / cvw;
        if (word < p.words && blk < p.pixels) {
            row_block(blk, word, cw);
        }
    }
}

// dw_rows' OUT_W outputs of block blk, channel word `word`.
fn row_block(blk: u32, word: u32, cw: u32) {
    let cvw = p.cvw;
    let bx = blk % p.blocks;
    let t = blk / p.blocks;
    let oh = t % p.oh;
    let n = t / p.oh;
    let ow0 = bx * OUT_W;
    let ih0 = i32(oh * S) - p.ph;
    let iw0 = i32(ow0 * S) - p.pw;
    let base = i32(p.in_off) + i32(n) * p.in_s.x + i32(word);
    var lo: array<vec4<f32>, OUT_W>;
    var hi: array<vec4<f32>, OUT_W>;
    for (var a = 0u; a < K; a++) {
        let ih = ih0 + i32(a);
        if (ih < 0 || ih >= p.h) {
            continue;
        }
        var wl: array<vec4<f32>, MAX_K>;
        var wh: array<vec4<f32>, MAX_K>;
        for (var b = 0u; b < K; b++) {
            let s = ((a * K + b) * cvw + cw) * HALVES;
            wl[b] = w_stage[s];
            if (F16) {
                wh[b] = w_stage[s + 1u];
            }
        }
        let row = base + ih * p.in_s.z;
        for (var col = 0u; col < COLS; col++) {
            let iw = iw0 + i32(col);
            if (iw < 0 || iw >= p.w) {
                continue;
            }
            let v = unpack_word(x4[row + iw * p.in_s.w]);
            for (var j = 0u; j < OUT_W; j++) {
                let b = i32(col) - i32(j * S);
                if (b >= 0 && b < i32(K)) {
                    lo[j] = fma(v.lo, wl[b], lo[j]);
                    if (F16) {
                        hi[j] = fma(v.hi, wh[b], hi[j]);
                    }
                }
            }
        }
    }
    let out_base = i32(p.out_off) + i32(n) * p.out_s.x + i32(oh) * p.out_s.z + i32(word);
    for (var j = 0u; j < OUT_W; j++) {
        if (ow0 + j < p.ow) {
            store_word(out_base + i32(ow0 + j) * p.out_s.w, lo[j], hi[j], word * LANES);
        }
    }
}

// dw_rows for f16 in 8-byte words of 4 channels (x2, y2): half the
// registers of 16-byte words, so twice the invocations stay resident.
@compute @workgroup_size(256)
fn dw_rows8(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let cvw = p.cvw;
    let first_word = wid.x * cvw;
    stage_filters(lid, first_word, K, K, 4u, 1u);
    workgroupBarrier();
    let cw = lid % cvw;
    let word = first_word + cw;
    let group = wid.z * p.row + wid.y;
    for (var rep = 0u; rep < p.reps; rep++) {
        let blk = (group * p.reps + rep) * (256u / cvw) + lid / cvw;
        if (word < p.words && blk < p.pixels) {
            row_block8(blk, word, cw);
        }
    }
}

fn row_block8(blk: u32, word: u32, cw: u32) {
    let cvw = p.cvw;
    let bx = blk % p.blocks;
    let t = blk / p.blocks;
    let oh = t % p.oh;
    let n = t / p.oh;
    let ow0 = bx * OUT_W;
    let ih0 = i32(oh * S) - p.ph;
    let iw0 = i32(ow0 * S) - p.pw;
    let base = i32(p.in_off) + i32(n) * p.in_s.x + i32(word);
    var acc: array<vec4<f32>, OUT_W>;
    for (var a = 0u; a < K; a++) {
        let ih = ih0 + i32(a);
        if (ih < 0 || ih >= p.h) {
            continue;
        }
        var wr: array<vec4<f32>, MAX_K>;
        for (var b = 0u; b < K; b++) {
            wr[b] = w_stage[(a * K + b) * cvw + cw];
        }
        let row = base + ih * p.in_s.z;
        for (var col = 0u; col < COLS; col++) {
            let iw = iw0 + i32(col);
            if (iw < 0 || iw >= p.w) {
                continue;
            }
            let u = x2[row + iw * p.in_s.w];
            let v = vec4<f32>(unpack2x16float(u.x), unpack2x16float(u.y));
            for (var j = 0u; j < OUT_W; j++) {
                let b = i32(col) - i32(j * S);
                if (b >= 0 && b < i32(K)) {
                    acc[j] = fma(v, wr[b], acc[j]);
                }
            }
        }
    }
    let out_base = i32(p.out_off) + i32(n) * p.out_s.x + i32(oh) * p.out_s.z + i32(word);
    for (var j = 0u; j < OUT_W; j++) {
        if (ow0 + j < p.ow) {
            let r = finish4(acc[j], word * 4u);
            y2[out_base + i32(ow0 + j) * p.out_s.w] = vec2<u32>(pack2x16float(r.xy), pack2x16float(r.zw));
        }
    }
}

@compute @workgroup_size(256)
fn dw_words(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let kh = window_h();
    let kw = window_w();
    let cvw = p.cvw;
    let first_word = wid.x * cvw;
    stage_filters(lid, first_word, kh, kw, LANES, HALVES);
    workgroupBarrier();
    let cw = lid % cvw;
    let word = first_word + cw;
    let group = wid.z * p.row + wid.y;
    for (var rep = 0u; rep < p.reps; rep++) {
        let pix = (group * p.reps + rep) * (256u / cvw) + lid / cvw;
        if (word < p.words && pix < p.pixels) {
            word_pixel(pix, word, cw, kh, kw);
        }
    }
}

// dw_words' output pixel pix, channel word `word`.
fn word_pixel(pix: u32, word: u32, cw: u32, kh: u32, kw: u32) {
    let cvw = p.cvw;
    let ow = pix % p.ow;
    let t = pix / p.ow;
    let oh = t % p.oh;
    let n = t / p.oh;
    let ih0 = i32(oh) * p.sh - p.ph;
    let iw0 = i32(ow) * p.sw - p.pw;
    let base = i32(p.in_off) + i32(n) * p.in_s.x + i32(word);
    var lo = vec4<f32>(0.0);
    var hi = vec4<f32>(0.0);
    for (var a = 0u; a < kh; a++) {
        let ih = ih0 + i32(a) * p.dh;
        if (ih < 0 || ih >= p.h) {
            continue;
        }
        for (var b = 0u; b < kw; b++) {
            let iw = iw0 + i32(b) * p.dw;
            if (iw >= 0 && iw < p.w) {
                let v = unpack_word(x4[base + ih * p.in_s.z + iw * p.in_s.w]);
                let s = ((a * kw + b) * cvw + cw) * HALVES;
                lo = fma(v.lo, w_stage[s], lo);
                if (F16) {
                    hi = fma(v.hi, w_stage[s + 1u], hi);
                }
            }
        }
    }
    let at = i32(p.out_off) + i32(n) * p.out_s.x + i32(oh) * p.out_s.z + i32(ow) * p.out_s.w + i32(word);
    store_word(at, lo, hi, word * LANES);
}

@compute @workgroup_size(256)
fn dw_strips(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * p.row + gid.x;
    if (i >= p.pixels) {
        return;
    }
    let bx = i % p.blocks;
    let t = i / p.blocks;
    let oh = t % p.oh;
    let t2 = t / p.oh;
    let c = t2 % p.c;
    let n = t2 / p.c;
    let ow0 = bx * OUT_W;
    let ih0 = i32(oh * S) - p.ph;
    let iw0 = i32(ow0 * S) - p.pw;
    let base = i32(p.in_off) + i32(n) * p.in_s.x + i32(c) * p.in_s.y;
    let wbase = i32(p.w_off) + i32(c) * p.w_s.x;
    var acc: array<f32, OUT_W>;
    for (var a = 0u; a < K; a++) {
        let ih = ih0 + i32(a);
        if (ih < 0 || ih >= p.h) {
            continue;
        }
        var wr: array<f32, MAX_K>;
        for (var b = 0u; b < K; b++) {
            wr[b] = f32(wt[wbase + i32(a) * p.w_s.z + i32(b) * p.w_s.w]);
        }
        let row = base + ih * p.in_s.z;
        for (var col = 0u; col < COLS; col++) {
            let iw = iw0 + i32(col);
            if (iw < 0 || iw >= p.w) {
                continue;
            }
            let v = f32(x[row + iw * p.in_s.w]);
            for (var j = 0u; j < OUT_W; j++) {
                let b = i32(col) - i32(j * S);
                if (b >= 0 && b < i32(K)) {
                    acc[j] = fma(v, wr[b], acc[j]);
                }
            }
        }
    }
    let out_base = i32(p.out_off) + i32(n) * p.out_s.x + i32(c) * p.out_s.y + i32(oh) * p.out_s.z;
    for (var j = 0u; j < OUT_W; j++) {
        if (ow0 + j < p.ow) {
            y[out_base + i32(ow0 + j) * p.out_s.w] = T(finish(acc[j], c));
        }
    }
}

@compute @workgroup_size(256)
fn dw_tiles(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let kh = window_h();
    let kw = window_w();
    let plane0 = (wid.z * p.row + wid.y) * p.planes;
    let planes_total = p.n * p.c;
    let oh0 = (wid.x / p.tiles_w) * p.th;
    let ow0 = (wid.x % p.tiles_w) * p.tw;
    let ih0 = i32(oh0) * p.sh - p.ph;
    let iw0 = i32(ow0) * p.sw - p.pw;
    let region = p.rh * p.rw;
    // Stage the input: each invocation keeps one column and steps over the
    // rows of all the planes (tile row r is row r % rh of plane r / rh).
    let rows_per_pass = 256u / p.rw;
    let col = lid % p.rw;
    let iw = iw0 + i32(col);
    let col_in = iw >= 0 && iw < p.w;
    if (lid < rows_per_pass * p.rw) {
        for (var r = lid / p.rw; r < p.planes * p.rh; r += rows_per_pass) {
            let pl = r / p.rh;
            let plane = plane0 + pl;
            let ih = ih0 + i32(r - pl * p.rh);
            var v = 0.0;
            if (col_in && plane < planes_total && ih >= 0 && ih < p.h) {
                let base = i32(p.in_off) + i32(plane / p.c) * p.in_s.x + i32(plane % p.c) * p.in_s.y;
                v = f32(x[base + ih * p.in_s.z + iw * p.in_s.w]);
            }
            tile[r * p.rw + col] = v;
        }
    }
    workgroupBarrier();
    let per_plane = p.th * p.tw;
    let pl = lid / per_plane;
    let q = lid % per_plane;
    let oy = q / p.tw;
    let ox = q % p.tw;
    let plane = plane0 + pl;
    let oh = oh0 + oy;
    let ow = ow0 + ox;
    if (pl >= p.planes || plane >= planes_total || oh >= p.oh || ow >= p.ow) {
        return;
    }
    let n = plane / p.c;
    let c = plane % p.c;
    let t0 = pl * region + oy * u32(p.sh) * p.rw + ox * u32(p.sw);
    var acc = 0.0;
    for (var a = 0u; a < kh; a++) {
        let ta = t0 + a * u32(p.dh) * p.rw;
        for (var b = 0u; b < kw; b++) {
            acc = fma(tile[ta + b * u32(p.dw)], filter_tap(c, a, b), acc);
        }
    }
    let at = i32(p.out_off) + i32(n) * p.out_s.x + i32(c) * p.out_s.y + i32(oh) * p.out_s.z + i32(ow) * p.out_s.w;
    y[at] = T(finish(acc, c));
}
