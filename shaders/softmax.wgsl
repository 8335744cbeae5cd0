{{ENABLES}}
// Softmax and log-softmax along one axis, one workgroup per row.
// Row `row` starts at in_offset + outer offset (outer dims decoded from the
// row number) and its element j lies j * in_stride further; likewise out.
//
// softmax_cached: rows contiguous and 4-aligned, at most WG * CACHE vec4s:
//   the row is read once into registers; max, sum of exp, then write.
// softmax_vec4: contiguous, 4-aligned, longer rows: an online max+sum pass
//   (rescaling the sum when the max grows), then a pass that writes.
// softmax_strided: any layout, the same two passes with scalar loads.
//
// Substitutions: T (f32 or f16), WG (power of two), CACHE (vec4 slots per
// invocation), LOG (true for log-softmax), ENABLES. wg_max / wg_sum come
// from reduce_wg_allreduce.wgsl, appended with the subgroup primitives.

const WG: u32 = {{WG}};
const CACHE: u32 = {{CACHE}};
const LOG: bool = {{LOG}};

struct Params {
    len: u32,
    rows: u32,
    rows_per_y: u32,
    outer_rank: u32,
    in_offset: u32,
    out_offset: u32,
    in_stride: i32,
    out_stride: i32,
    outer_shape: array<vec4<u32>, 2>,
    outer_in: array<vec4<i32>, 2>,
    outer_out: array<vec4<i32>, 2>,
}

@group(0) @binding(0) var<storage, read> x: array<{{T}}>;
@group(0) @binding(1) var<storage, read> xv: array<vec4<{{T}}>>;
@group(0) @binding(2) var<storage, read_write> y: array<{{T}}>;
@group(0) @binding(3) var<uniform> p: Params;
@group(0) @binding(4) var<storage, read_write> yv: array<vec4<{{T}}>>;

fn neg_inf() -> f32 {
    return bitcast<f32>(0xff800000u);
}

// Element offsets of the row's first element in x and y.
fn row_bases(row: u32) -> vec2<i32> {
    var rem = row;
    var off = vec2<i32>(i32(p.in_offset), i32(p.out_offset));
    for (var d = i32(p.outer_rank) - 1; d >= 0; d--) {
        let n = p.outer_shape[d / 4][d % 4];
        let i = i32(rem % n);
        rem = rem / n;
        off += i * vec2<i32>(p.outer_in[d / 4][d % 4], p.outer_out[d / 4][d % 4]);
    }
    return off;
}

fn max4(v: vec4<f32>) -> f32 {
    return max(max(v.x, v.y), max(v.z, v.w));
}

// Fold a running (max, sum of exp(x - max)) pair over the workgroup: every
// invocation gets the row's max and sum.
fn wg_max_sum(m: f32, s: f32, lid: u32) -> vec2<f32> {
    let row_max = wg_max(m, lid);
    var scaled = 0.0;
    if (m > neg_inf()) {
        scaled = s * exp(m - row_max);
    }
    return vec2<f32>(row_max, wg_sum(scaled, lid));
}

fn row_of(wid: vec3<u32>) -> u32 {
    return wid.z * p.rows_per_y + wid.y;
}

@compute @workgroup_size(WG)
fn softmax_cached(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = row_of(wid);
    if (row >= p.rows) {
        return;
    }
    let bases = row_bases(row);
    let in4 = u32(bases.x) / 4u;
    let out4 = u32(bases.y) / 4u;
    let len4 = p.len / 4u;
    var cache: array<vec4<f32>, CACHE>;
    var m = neg_inf();
    for (var c = 0u; c < CACHE; c++) {
        let i = c * WG + lid;
        if (i < len4) {
            cache[c] = vec4<f32>(xv[in4 + i]);
            m = max(m, max4(cache[c]));
        }
    }
    m = wg_max(m, lid);
    // The exponentials are computed again when writing rather than stored
    // back into `cache`, which stays read-only once loaded.
    var s = 0.0;
    for (var c = 0u; c < CACHE; c++) {
        let i = c * WG + lid;
        if (i < len4) {
            let e = exp(cache[c] - m);
            s += (e.x + e.y) + (e.z + e.w);
        }
    }
    s = wg_sum(s, lid);
    let shift = m + log(s);
    let inv = 1.0 / s;
    for (var c = 0u; c < CACHE; c++) {
        let i = c * WG + lid;
        if (i < len4) {
            if (LOG) {
                yv[out4 + i] = vec4<{{T}}>(cache[c] - shift);
            } else {
                yv[out4 + i] = vec4<{{T}}>(exp(cache[c] - m) * inv);
            }
        }
    }
}

@compute @workgroup_size(WG)
fn softmax_vec4(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = row_of(wid);
    if (row >= p.rows) {
        return;
    }
    let bases = row_bases(row);
    let in4 = u32(bases.x) / 4u;
    let out4 = u32(bases.y) / 4u;
    let len4 = p.len / 4u;
    var m = neg_inf();
    var s = 0.0;
    for (var i = lid; i < len4; i += WG) {
        let v = vec4<f32>(xv[in4 + i]);
        let mv = max4(v);
        if (mv > m) {
            s *= exp(m - mv);
            m = mv;
        }
        if (m > neg_inf()) {
            let e = exp(v - m);
            s += (e.x + e.y) + (e.z + e.w);
        }
    }
    let ms = wg_max_sum(m, s, lid);
    let shift = ms.x + log(ms.y);
    let inv = 1.0 / ms.y;
    for (var i = lid; i < len4; i += WG) {
        let v = vec4<f32>(xv[in4 + i]);
        if (LOG) {
            yv[out4 + i] = vec4<{{T}}>(v - shift);
        } else {
            yv[out4 + i] = vec4<{{T}}>(exp(v - ms.x) * inv);
        }
    }
}

@compute @workgroup_size(WG)
fn softmax_strided(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = row_of(wid);
    if (row >= p.rows) {
        return;
    }
    let bases = row_bases(row);
    var m = neg_inf();
    var s = 0.0;
    for (var j = lid; j < p.len; j += WG) {
        let v = f32(x[u32(bases.x + i32(j) * p.in_stride)]);
        if (v > m) {
            s *= exp(m - v);
            m = v;
        }
        if (m > neg_inf()) {
            s += exp(v - m);
        }
    }
    let ms = wg_max_sum(m, s, lid);
    let shift = ms.x + log(ms.y);
    let inv = 1.0 / ms.y;
    for (var j = lid; j < p.len; j += WG) {
        let v = f32(x[u32(bases.x + i32(j) * p.in_stride)]);
        var r = exp(v - ms.x) * inv;
        if (LOG) {
            r = v - shift;
        }
        y[u32(bases.y + i32(j) * p.out_stride)] = {{T}}(r);
    }
}
