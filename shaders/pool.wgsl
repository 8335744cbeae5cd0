// 2-D pooling over NCHW tensors with any strides.
// max_pool2d / avg_pool2d: one invocation per output element.
// {max,avg}_pool2d_vec4: channels-last views whose channels, strides and
//   offsets come in whole vec4s (pool/plan.rs): one invocation per four
//   neighbouring channels of an output pixel, through x4 and y4, with the
//   uniform's channels, offsets and strides counted in vec4s.
// global_avg_pool2d: one 64-wide workgroup per (n, c) plane, reduced in
// workgroup memory; global_avg_pool2d_cl: channels-last planes, one
// invocation per (n, c).
// Large windows (a software driver stops each invocation's loops after
// 65,535 iterations, and one invocation per window would be slow anyway):
// {max,avg}_pool2d_window: one 256-wide workgroup per output element,
//   reduced in workgroup memory;
// windows over chunk_len elements: {max,avg}_pool2d_chunks, the same per
//   (chunk of the window, output element), partials to `parts`, then
//   {max,avg}_pool2d_finish, one invocation per output folding its partials.
// Kernel spec family "pool" (src/ops/pool.rs). Prelude: T (f32|f16; sums
// and comparisons run in f32). Override: CHANNELS_LAST (below).

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
    chunk_len: u32,    // window elements per workgroup (chunked kernels)
    chunks: u32,
};

@group(0) @binding(0) var<storage, read> x: array<T>;
@group(0) @binding(1) var<storage, read_write> y: array<T>;
@group(0) @binding(2) var<uniform> p: Params;
// Partial max or sum of chunk c of output i's window at i * chunks + c.
@group(0) @binding(3) var<storage, read_write> parts: array<f32>;
// x and y as vec4s of four channels (the vec4 entries).
@group(0) @binding(4) var<storage, read> x4: array<vec4<T>>;
@group(0) @binding(5) var<storage, read_write> y4: array<vec4<T>>;

struct Window {
    base: i32,
    h0: i32,
    w0: i32,
    out_index: i32,
};

// Infinity and NaN bits are read from variables: WGSL refuses constant
// expressions whose value is not finite (browsers' compilers enforce it).
var<private> neg_inf_bits: u32 = 0xff800000u;

// By bits, so that no fast-math assumption folds it away.
fn is_nan(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u;
}

fn is_nan4(v: vec4<f32>) -> vec4<bool> {
    return (bitcast<vec4<u32>>(v) & vec4<u32>(0x7fffffffu)) > vec4<u32>(0x7f800000u);
}

// Output element i in (n, oh, ow, c) order, channel fastest, where input
// and output are channels-last (neighbouring invocations then read
// neighbouring channels); else in (n, c, oh, ow) order.
override CHANNELS_LAST: bool = false;

fn window(i: u32) -> Window {
    var ow: u32;
    var oh: u32;
    var c: u32;
    var n: u32;
    if (CHANNELS_LAST) {
        c = i % p.channels;
        let t = i / p.channels;
        ow = t % p.ow;
        let t2 = t / p.ow;
        oh = t2 % p.oh;
        n = t2 / p.oh;
    } else {
        ow = i % p.ow;
        let t = i / p.ow;
        oh = t % p.oh;
        let t2 = t / p.oh;
        c = t2 % p.channels;
        n = t2 / p.channels;
    }
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
    var best = bitcast<f32>(neg_inf_bits);
    for (var a = max(win.h0, 0); a < min(win.h0 + p.kh, p.h); a++) {
        for (var b = max(win.w0, 0); b < min(win.w0 + p.kw, p.w); b++) {
            let v = f32(x[win.base + a * p.in_s.z + b * p.in_s.w]);
            if (v > best || is_nan(v)) {
                best = v;
            }
        }
    }
    y[win.out_index] = T(best);
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
    // Each window row summed on its own, then added: the rounding error
    // grows with the row length plus the row count, not their product.
    var sum = 0.0;
    for (var a = h_lo; a < h_hi; a++) {
        var row_sum = 0.0;
        for (var b = w_lo; b < w_hi; b++) {
            row_sum += f32(x[win.base + a * p.in_s.z + b * p.in_s.w]);
        }
        sum += row_sum;
    }
    // Windows never reach past the padding, so with padding counted the
    // divisor is the full window.
    var count = p.kh * p.kw;
    if (p.include_pad == 0u) {
        count = max(h_hi - h_lo, 0) * max(w_hi - w_lo, 0);
    }
    y[win.out_index] = T(sum / f32(max(count, 1)));
}

// Channels-last global average pooling: one invocation per (n, c), the
// channels of neighbouring invocations neighbours in memory; the plane in
// rows of p.w pixels (at most MAX_ITERS values in all, from pool.rs).
@compute @workgroup_size(256)
fn global_avg_pool2d_cl(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * p.row + gid.x;
    if (i >= p.total) {
        return;
    }
    let c = i % p.channels;
    let n = i / p.channels;
    let base = i32(p.in_off) + i32(n) * p.in_s.x + i32(c) * p.in_s.y;
    // Blocks of 8 values summed on their own, then added: the rounding
    // error grows with 8 + n / 8, not n.
    var sum = 0.0;
    var block = 0.0;
    var in_block = 0u;
    for (var a = 0; a < p.h; a++) {
        for (var b = 0; b < p.w; b++) {
            block += f32(x[base + a * p.in_s.z + b * p.in_s.w]);
            in_block++;
            if (in_block == 8u) {
                sum += block;
                block = 0.0;
                in_block = 0u;
            }
        }
    }
    y[i32(p.out_off) + i32(n) * p.out_s.x + i32(c) * p.out_s.y] = T((sum + block) / f32(p.h * p.w));
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
    // Blocks of 32 values summed on their own, then added (see window_reduce).
    var sum = 0.0;
    var block = 0.0;
    var in_block = 0u;
    for (var e = lid.x; e < hw; e += 64u) {
        var idx: i32;
        if (flat) {
            idx = i32(e) * p.in_s.w;
        } else {
            idx = i32(e / u32(p.w)) * p.in_s.z + i32(e % u32(p.w)) * p.in_s.w;
        }
        block += f32(x[base + idx]);
        in_block++;
        if (in_block == 32u) {
            sum += block;
            block = 0.0;
            in_block = 0u;
        }
    }
    partial[lid.x] = sum + block;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s >>= 1u) {
        if (lid.x < s) {
            partial[lid.x] += partial[lid.x + s];
        }
        workgroupBarrier();
    }
    if (lid.x == 0u) {
        y[i32(p.out_off) + i32(n) * p.out_s.x + i32(c) * p.out_s.y] = T(partial[0] / f32(hw));
    }
}

// The part of output i's window inside the input: rows [lo.x, hi.x), columns [lo.y, hi.y).
struct Clipped {
    lo: vec2<i32>,
    hi: vec2<i32>,
};

fn clipped(win: Window) -> Clipped {
    var c: Clipped;
    c.lo = vec2<i32>(max(win.h0, 0), max(win.w0, 0));
    c.hi = vec2<i32>(min(win.h0 + p.kh, p.h), min(win.w0 + p.kw, p.w));
    return c;
}

fn clipped_count(c: Clipped) -> u32 {
    return u32(max(c.hi.x - c.lo.x, 0) * max(c.hi.y - c.lo.y, 0));
}

// NaN wins a max; padding never does (the identity is -inf).
fn pool_fold(is_max: bool, acc: f32, v: f32) -> f32 {
    if (is_max) {
        return select(acc, v, v > acc || is_nan(v));
    }
    return acc + v;
}

// The output from a window's max or sum.
fn pool_result(is_max: bool, acc: f32, c: Clipped) -> f32 {
    if (is_max) {
        return acc;
    }
    var count = p.kh * p.kw;
    if (p.include_pad == 0u) {
        count = i32(clipped_count(c));
    }
    return acc / f32(max(count, 1));
}

var<workgroup> wg_acc: array<f32, 256>;

// Chunk `chunk` of output i's window, reduced over the workgroup (the
// result is in invocation 0).
fn window_reduce(is_max: bool, i: u32, chunk: u32, lid: u32) -> f32 {
    let win = window(i);
    let c = clipped(win);
    let ww = u32(max(c.hi.y - c.lo.y, 1));
    let begin = chunk * p.chunk_len;
    let end = min(begin + p.chunk_len, clipped_count(c));
    // Sums add blocks of 32 values, each summed on its own: the rounding
    // error then grows with 32 + n / 32 rather than n.
    var acc = select(0.0, bitcast<f32>(neg_inf_bits), is_max);
    var block = acc;
    var in_block = 0u;
    for (var e = begin + lid; e < end; e += 256u) {
        let a = c.lo.x + i32(e / ww);
        let b = c.lo.y + i32(e % ww);
        block = pool_fold(is_max, block, f32(x[win.base + a * p.in_s.z + b * p.in_s.w]));
        in_block++;
        if (in_block == 32u) {
            acc = pool_fold(is_max, acc, block);
            block = select(0.0, block, is_max);
            in_block = 0u;
        }
    }
    wg_acc[lid] = pool_fold(is_max, acc, block);
    workgroupBarrier();
    for (var s = 128u; s > 0u; s >>= 1u) {
        if (lid < s) {
            wg_acc[lid] = pool_fold(is_max, wg_acc[lid], wg_acc[lid + s]);
        }
        workgroupBarrier();
    }
    return wg_acc[0];
}

// One whole window per workgroup: the output.
fn pool_window(is_max: bool, lid: u32, wid: vec3<u32>) {
    let i = wid.z * p.row + wid.y;
    // Uniform control flow: every invocation of a workgroup has the same output.
    if (i >= p.total) {
        return;
    }
    let r = window_reduce(is_max, i, 0u, lid);
    if (lid == 0u) {
        let win = window(i);
        y[win.out_index] = T(pool_result(is_max, r, clipped(win)));
    }
}

// One chunk of a window per workgroup: its partial.
fn pool_chunk(is_max: bool, lid: u32, wid: vec3<u32>) {
    let i = wid.z * p.row + wid.y;
    if (i >= p.total) {
        return;
    }
    let r = window_reduce(is_max, i, wid.x, lid);
    if (lid == 0u) {
        parts[i * p.chunks + wid.x] = r;
    }
}

fn pool_finish(is_max: bool, gid: vec3<u32>) {
    let i = gid.y * p.row + gid.x;
    if (i >= p.total) {
        return;
    }
    let win = window(i);
    var acc = select(0.0, bitcast<f32>(neg_inf_bits), is_max);
    for (var k = 0u; k < p.chunks; k++) {
        acc = pool_fold(is_max, acc, parts[i * p.chunks + k]);
    }
    y[win.out_index] = T(pool_result(is_max, acc, clipped(win)));
}

@compute @workgroup_size(256)
fn max_pool2d_window(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    pool_window(true, lid, wid);
}

@compute @workgroup_size(256)
fn avg_pool2d_window(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    pool_window(false, lid, wid);
}

@compute @workgroup_size(256)
fn max_pool2d_chunks(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    pool_chunk(true, lid, wid);
}

@compute @workgroup_size(256)
fn avg_pool2d_chunks(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    pool_chunk(false, lid, wid);
}

@compute @workgroup_size(256)
fn max_pool2d_finish(@builtin(global_invocation_id) gid: vec3<u32>) {
    pool_finish(true, gid);
}

@compute @workgroup_size(256)
fn avg_pool2d_finish(@builtin(global_invocation_id) gid: vec3<u32>) {
    pool_finish(false, gid);
}

// The vec4 entries' window (KH x KW where written out, else the uniform's):
// constant loop counts unroll, so a window's loads are in flight together.
override KH: u32 = 0u;
override KW: u32 = 0u;

// A written-out window visits every row (column) of the window, clamped
// into its part inside the input, so that the loop count is constant and
// every load in bounds; otherwise only the rows inside.
struct Span {
    first: i32, // the first row visited, before clamping
    count: i32,
    lo: i32,    // rows inside the input: [lo, hi)
    hi: i32,
};

// Selects rather than a branch: with the override set, the count folds
// to a constant.
fn span(start: i32, lo: i32, hi: i32, written_out: u32) -> Span {
    let fixed = written_out != 0u;
    return Span(select(lo, start, fixed), select(hi - lo, i32(written_out), fixed), lo, hi);
}

fn at(s: Span, k: i32) -> i32 {
    return clamp(s.first + k, s.lo, s.hi - 1);
}

fn inside(s: Span, k: i32) -> bool {
    return s.first + k == at(s, k);
}

@compute @workgroup_size(256)
fn max_pool2d_vec4(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * p.row + gid.x;
    if (i >= p.total) {
        return;
    }
    let win = window(i);
    let c = clipped(win);
    // Padding never wins: start from -inf. NaN propagates per channel.
    var best = vec4<f32>(bitcast<f32>(neg_inf_bits));
    // Windows always hold an input element (plan.rs); checked all the same.
    if (all(c.lo < c.hi)) {
        let rows = span(win.h0, c.lo.x, c.hi.x, KH);
        let cols = span(win.w0, c.lo.y, c.hi.y, KW);
        // A clamped row or column repeats one of the window's own
        // elements, which changes no max.
        for (var a = 0; a < rows.count; a++) {
            let row = win.base + at(rows, a) * p.in_s.z;
            for (var b = 0; b < cols.count; b++) {
                let v = vec4<f32>(x4[row + at(cols, b) * p.in_s.w]);
                best = select(best, v, (v > best) | is_nan4(v));
            }
        }
    }
    y4[win.out_index] = vec4<T>(best);
}

@compute @workgroup_size(256)
fn avg_pool2d_vec4(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.y * p.row + gid.x;
    if (i >= p.total) {
        return;
    }
    let win = window(i);
    let c = clipped(win);
    // Row sums added as avg_pool2d adds them; clamped (repeated) elements
    // count as zeros, which leaves the sums as they were.
    var sum = vec4<f32>(0.0);
    if (all(c.lo < c.hi)) {
        let rows = span(win.h0, c.lo.x, c.hi.x, KH);
        let cols = span(win.w0, c.lo.y, c.hi.y, KW);
        for (var a = 0; a < rows.count; a++) {
            let row = win.base + at(rows, a) * p.in_s.z;
            var row_sum = vec4<f32>(0.0);
            for (var b = 0; b < cols.count; b++) {
                let v = vec4<f32>(x4[row + at(cols, b) * p.in_s.w]);
                row_sum += select(vec4<f32>(0.0), v, inside(cols, b));
            }
            sum += select(vec4<f32>(0.0), row_sum, inside(rows, a));
        }
    }
    var count = p.kh * p.kw;
    if (p.include_pad == 0u) {
        count = i32(clipped_count(c));
    }
    y4[win.out_index] = vec4<T>(sum / f32(max(count, 1)));
}
