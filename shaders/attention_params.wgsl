// Fragment: Kernel spec families "attention*" (src/ops/attention.rs): the uniform and
// bindings shared by shaders/attention.wgsl (the tiled online-softmax pass)
// and shaders/attention_combine.wgsl (the pass that merges KV chunks).
// Prelude: T (element type of q, k, v, out and an additive mask: f32 or f16).
//
// Problem: for every batch entry b (the leading dims, decoded through
// batch_shape), key/value head h (of hkv) and query row r in [0, rows),
// rows = group * sq with r = g * sq + s: query head h * group + g, query
// position s. Keys 0 .. L with L = min(kv_len, lens[b] when has_lens).

struct Params {
    batch_rank: u32,
    hkv: u32,
    group: u32,
    sq: u32,
    skv: u32,
    d: u32,
    kv_len: u32,
    has_lens: u32,
    rows: u32,
    chunk_keys: u32,
    chunks: u32,
    causal: u32,
    window: u32,
    scale: f32,
    want_lse: u32,
    row_tiles: u32,
    q_off: u32,
    k_off: u32,
    v_off: u32,
    o_off: u32,
    m_off: u32,
    lse_off: u32,
    lens_off: u32,
    bh_total: u32,
    q_h: i32,
    q_s: i32,
    q_d: i32,
    k_h: i32,
    k_s: i32,
    k_d: i32,
    v_h: i32,
    v_s: i32,
    v_d: i32,
    o_h: i32,
    o_s: i32,
    o_d: i32,
    m_h: i32,
    m_q: i32,
    m_k: i32,
    lse_h: i32,
    lse_s: i32,
    grid_row: u32,
    _pad1: u32,
    _pad2: u32,
    batch_shape: array<vec4<u32>, 2>,
    q_b: array<vec4<i32>, 2>,
    k_b: array<vec4<i32>, 2>,
    v_b: array<vec4<i32>, 2>,
    o_b: array<vec4<i32>, 2>,
    m_b: array<vec4<i32>, 2>,
    lse_b: array<vec4<i32>, 2>,
    lens_b: array<vec4<i32>, 2>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<T>;
@group(0) @binding(2) var<storage, read> k: array<T>;
@group(0) @binding(3) var<storage, read> v: array<T>;
@group(0) @binding(4) var<storage, read_write> out: array<T>;
@group(0) @binding(5) var<storage, read_write> lse: array<f32>;
@group(0) @binding(6) var<storage, read> lens: array<u32>;
// Partial results of each KV chunk, per (b * hkv + h, r, chunk): the
// running max m, the sum l, then d unnormalised output sums.
@group(0) @binding(7) var<storage, read_write> part: array<f32>;

fn neg_inf() -> f32 {
    return bitcast<f32>(0xff800000u);
}

// Element offsets of batch entry `b` in each tensor.
struct Bases {
    q: i32,
    k: i32,
    v: i32,
    o: i32,
    m: i32,
    lse: i32,
    lens: i32,
}

fn bases_of(b: u32) -> Bases {
    var rem = b;
    var o = Bases(i32(p.q_off), i32(p.k_off), i32(p.v_off), i32(p.o_off), i32(p.m_off), i32(p.lse_off), i32(p.lens_off));
    for (var i = i32(p.batch_rank) - 1; i >= 0; i--) {
        let n = p.batch_shape[i / 4][i % 4];
        let c = i32(rem % n);
        rem = rem / n;
        o.q += c * p.q_b[i / 4][i % 4];
        o.k += c * p.k_b[i / 4][i % 4];
        o.v += c * p.v_b[i / 4][i % 4];
        o.o += c * p.o_b[i / 4][i % 4];
        o.m += c * p.m_b[i / 4][i % 4];
        o.lse += c * p.lse_b[i / 4][i % 4];
        o.lens += c * p.lens_b[i / 4][i % 4];
    }
    return o;
}

// The output row of (b, h, r): where out and lse put it.
fn out_row(bs: Bases, h: u32, r: u32) -> vec2<i32> {
    let hq = i32(h * p.group + r / p.sq);
    let s = i32(r % p.sq);
    return vec2<i32>(bs.o + hq * p.o_h + s * p.o_s, bs.lse + hq * p.lse_h + s * p.lse_s);
}
