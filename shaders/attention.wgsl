
// The attention pass (after attention_params.wgsl and one mask fragment).
// Overrides: none. Entry points: `attention` (one KV chunk: writes out and
// lse), `attention_partial` (several chunks: writes each chunk's m, l and
// sums to `part`, merged by attention_combine.wgsl).
//
// Grid: x = tile of BQ query rows, y = b * hkv + h, z = KV chunk of
// chunk_keys keys. Workgroup of BK invocations; per tile of BK keys:
//  1. invocation t scores key kt + t against every row of the tile (q
//     scaled and held in workgroup memory, k read from its row);
//  2. every invocation finds each row's new running max (broadcast reads);
//  3. the output columns of the tile's rows are cut into `items` of 4
//     columns, each owned by one invocation, which rescales its sums and
//     adds p * v over the tile's keys (FlashAttention-2's online softmax).
// Scores never leave workgroup memory. A key counts when it is below the
// valid length, the causal bound and the window, and the mask allows it.
// Trip counts: the host sizes chunks so that an invocation's loops stay
// far below a software driver's limit (src/ops/attention.rs).

const BQ: u32 = 8u;
const BK: u32 = 64u;
const DMAX: u32 = 256u;
// Items of 4 columns per invocation: BQ * DMAX / 4 / BK.
const ITEMS: u32 = 8u;

var<workgroup> qs: array<f32, 2048>;
var<workgroup> ps: array<f32, 512>;

var<private> acc: array<vec4<f32>, ITEMS>;
var<private> lsum: array<f32, ITEMS>;
var<private> mrow: array<f32, BQ>;

// What one workgroup computed for its rows over its chunk of keys.
struct Tile {
    bs: Bases,
    h: u32,
    r0: u32,
    nq: u32,
    n_items: u32,
    cols4: u32,
}

fn key_allowed(key: i32, qpos: i32) -> bool {
    if (p.causal != 0u && key > qpos) {
        return false;
    }
    return p.window == 0u || key > qpos - i32(p.window);
}

// Columns c .. c + 3 of a v row (0 past d); written out, no loop.
fn load4(base: i32, c: u32) -> vec4<f32> {
    let at = base + i32(c) * p.v_d;
    if (c + 4u <= p.d) {
        return vec4<f32>(f32(v[at]), f32(v[at + p.v_d]), f32(v[at + 2 * p.v_d]), f32(v[at + 3 * p.v_d]));
    }
    var x = vec4<f32>(f32(v[at]), 0.0, 0.0, 0.0);
    if (c + 1u < p.d) {
        x.y = f32(v[at + p.v_d]);
    }
    if (c + 2u < p.d) {
        x.z = f32(v[at + 2 * p.v_d]);
    }
    return x;
}

fn run_tile(wid: vec3<u32>, lid: u32) -> Tile {
    let bh = wid.y;
    let h = bh % p.hkv;
    let b = bh / p.hkv;
    let bs = bases_of(b);
    let r0 = wid.x * BQ;
    let nq = min(BQ, p.rows - r0);
    let cols4 = (p.d + 3u) / 4u;
    let n_items = nq * cols4;

    var len = min(p.kv_len, p.skv);
    if (p.has_lens != 0u) {
        len = min(len, lens[bs.lens]);
    }
    // Query positions: bottom-right aligned to the valid keys, top-left
    // for causal == 2.
    let shift = select(i32(len) - i32(p.sq), 0, p.causal == 2u);
    var qpos: array<i32, BQ>;
    var mbase: array<i32, BQ>;
    var pmin = 2147483647;
    var pmax = -2147483647;
    for (var i = 0u; i < nq; i++) {
        let r = r0 + i;
        let s = r % p.sq;
        let hq = h * p.group + r / p.sq;
        qpos[i] = i32(s) + shift;
        mbase[i] = bs.m + i32(hq) * p.m_h;
        pmin = min(pmin, qpos[i]);
        pmax = max(pmax, qpos[i]);
        mrow[i] = neg_inf();
    }
    for (var i = 0u; i < ITEMS; i++) {
        acc[i] = vec4<f32>(0.0);
        lsum[i] = 0.0;
    }
    // q, scaled, into workgroup memory.
    for (var e = lid; e < nq * p.d; e += BK) {
        let i = e / p.d;
        let c = e % p.d;
        let r = r0 + i;
        let hq = h * p.group + r / p.sq;
        let s = r % p.sq;
        qs[i * DMAX + c] = f32(q[bs.q + i32(hq) * p.q_h + i32(s) * p.q_s + i32(c) * p.q_d]) * p.scale;
    }

    // This chunk's keys, cut to those some row of the tile may see.
    var kbeg = i32(wid.z * p.chunk_keys);
    var kend = min(kbeg + i32(p.chunk_keys), i32(len));
    if (p.causal != 0u) {
        kend = min(kend, pmax + 1);
    }
    if (p.window != 0u) {
        kbeg = max(kbeg, pmin - i32(p.window) + 1);
    }
    let kb = bs.k + i32(h) * p.k_h;
    let vb = bs.v + i32(h) * p.v_h;
    workgroupBarrier();

    for (var kt = kbeg; kt < kend; kt += i32(BK)) {
        // 1. Scores of key kt + lid.
        let key = kt + i32(lid);
        for (var i = 0u; i < nq; i++) {
            var s = neg_inf();
            if (key < kend && key_allowed(key, qpos[i])) {
                let kr = kb + key * p.k_s;
                var dot = 0.0;
                let qb = i * DMAX;
                // Four columns a step, then the rest.
                for (var c = 0u; c + 4u <= p.d; c += 4u) {
                    let kc = kr + i32(c) * p.k_d;
                    dot += qs[qb + c] * f32(k[kc]) + qs[qb + c + 1u] * f32(k[kc + p.k_d])
                        + qs[qb + c + 2u] * f32(k[kc + 2 * p.k_d]) + qs[qb + c + 3u] * f32(k[kc + 3 * p.k_d]);
                }
                for (var c = p.d & ~3u; c < p.d; c++) {
                    dot += qs[qb + c] * f32(k[kr + i32(c) * p.k_d]);
                }
                s = dot + mask_term(mbase[i], (r0 + i) % p.sq, u32(key));
            }
            ps[i * BK + lid] = s;
        }
        workgroupBarrier();
        let n = u32(min(i32(BK), kend - kt));
        // 2. Running maxima (comparisons skip NaN: it reaches the sums).
        var alpha: array<f32, BQ>;
        for (var i = 0u; i < nq; i++) {
            let old = mrow[i];
            var m = old;
            // Four keys a step: keys past n hold -inf.
            for (var j = 0u; j < n; j += 4u) {
                let b = i * BK + j;
                let s = array<f32, 4>(ps[b], ps[b + 1u], ps[b + 2u], ps[b + 3u]);
                if (s[0] > m) {
                    m = s[0];
                }
                if (s[1] > m) {
                    m = s[1];
                }
                if (s[2] > m) {
                    m = s[2];
                }
                if (s[3] > m) {
                    m = s[3];
                }
            }
            alpha[i] = select(exp(old - m), 1.0, old == m);
            mrow[i] = m;
        }
        // 3. Rescale and add p * v.
        for (var t = 0u; t < ITEMS; t++) {
            let item = lid + t * BK;
            if (item >= n_items) {
                break;
            }
            let i = item / cols4;
            let c = (item % cols4) * 4u;
            let m = mrow[i];
            var a = acc[t] * alpha[i];
            var l = lsum[t] * alpha[i];
            for (var j = 0u; j < n; j++) {
                let s = ps[i * BK + j];
                // A key no row may see weighs 0, also when m is -inf.
                let w = select(exp(s - m), 0.0, s == neg_inf());
                l += w;
                a += w * load4(vb + (kt + i32(j)) * p.v_s, c);
            }
            acc[t] = a;
            lsum[t] = l;
        }
        workgroupBarrier();
    }
    return Tile(bs, h, r0, nq, n_items, cols4);
}

@compute @workgroup_size(BK)
fn attention(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let tile = run_tile(wid, lid);
    for (var t = 0u; t < ITEMS; t++) {
        let item = lid + t * BK;
        if (item >= tile.n_items) {
            break;
        }
        let i = item / tile.cols4;
        let c = (item % tile.cols4) * 4u;
        let l = lsum[t];
        // A row that no key reaches gives 0 (as PyTorch's SDPA) and lse -inf.
        let o = select(acc[t] / l, vec4<f32>(0.0), l == 0.0);
        let at = out_row(tile.bs, tile.h, tile.r0 + i);
        for (var e = 0u; e < 4u; e++) {
            if (c + e < p.d) {
                out[at.x + i32(c + e) * p.o_d] = T(o[e]);
            }
        }
        if (c == 0u && p.want_lse != 0u) {
            lse[at.y] = select(mrow[i] + log(l), neg_inf(), l == 0.0);
        }
    }
}

@compute @workgroup_size(BK)
fn attention_partial(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let tile = run_tile(wid, lid);
    let stride = p.d + 2u;
    for (var t = 0u; t < ITEMS; t++) {
        let item = lid + t * BK;
        if (item >= tile.n_items) {
            break;
        }
        let i = item / tile.cols4;
        let c = (item % tile.cols4) * 4u;
        let at = ((wid.y * p.rows + tile.r0 + i) * p.chunks + wid.z) * stride;
        if (c == 0u) {
            part[at] = mrow[i];
            part[at + 1u] = lsum[t];
        }
        for (var e = 0u; e < 4u; e++) {
            if (c + e < p.d) {
                part[at + 2u + c + e] = acc[t][e];
            }
        }
    }
}
