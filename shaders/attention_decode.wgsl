
// Attention decode (flash-decoding), after attention_params.wgsl, one mask
// fragment and one team fragment (attention_team_subgroups.wgsl or
// attention_team_shared.wgsl); T = f16 (or f32 with bf16 K and V:
// KV_BF16). Entry points: `attention_decode`
// (one KV chunk: writes out and lse) and `attention_decode_partial` (several:
// writes each chunk's m, l and sums to `part` as attention.wgsl's
// attention_partial does, merged by attention_combine.wgsl).
//
// Grid: x = tile of RB query rows (GQA: the query heads of one KV head share
// each K and V read), y = b * hkv + h, z = KV chunk. The host routes here
// only views whose key rows are dense, D a multiple of 8 up to 128 and
// every K/V offset and stride a multiple of 8 halves, so rows are read as
// 16-byte words (k4, v4). A workgroup is 8 teams of 16 invocations; lane c
// of a team holds columns 8c .. 8c + 7 of q (scaled, f32), of its sums, and
// of each K and V row it reads. Team t takes keys base + 4t .. base + 4t + 3
// of every 32 keys: each lane's partial dot products are summed over the
// team (team_sum), each team keeps its own online softmax, and at the end
// the 8 teams are merged in workgroup memory.
//
// DEC_SPREAD (tiles of RB = 4 real rows: GQA groups of 4 or more): the 16
// sums of a team step (4 rows x 4 keys) are spread one a lane by halving
// exchanges (15 values moved instead of 64), each lane scales, masks and
// exponentiates its own (row, key) score, and the rows' weights travel back
// to every lane as vec4s: the per-row cross-lane work shrinks about 4x.

const RB: u32 = 4u;
const KB: u32 = 4u;
const TEAMS: u32 = 8u;
// Per team and row: m, l and 128 sums; teams x rows of them.
const TSTRIDE: u32 = 130u;
var<workgroup> tmerge: array<f32, 4160>;
var<workgroup> dec_len: u32;

@group(0) @binding(9) var<storage, read> k4: array<vec4<u32>>;
@group(0) @binding(10) var<storage, read> v4: array<vec4<u32>>;

// K and V are bf16 (read as words; q, out and an additive mask then f32),
// else T (f16).
override KV_BF16: bool = false;
override DEC_SPREAD: bool = false;

fn bf16_pair(w: u32) -> vec2<f32> {
    return vec2<f32>(bitcast<f32>(w << 16u), bitcast<f32>(w & 0xffff0000u));
}

fn dec_unpack(w: vec4<u32>) -> array<vec4<f32>, 2> {
    if (KV_BF16) {
        return array<vec4<f32>, 2>(vec4<f32>(bf16_pair(w.x), bf16_pair(w.y)), vec4<f32>(bf16_pair(w.z), bf16_pair(w.w)));
    }
    let a = unpack2x16float(w.x);
    let b = unpack2x16float(w.y);
    let c = unpack2x16float(w.z);
    let d = unpack2x16float(w.w);
    return array<vec4<f32>, 2>(vec4<f32>(a, b), vec4<f32>(c, d));
}

fn dec_allowed(key: i32, qpos: i32) -> bool {
    if (p.causal != 0u && key > qpos) {
        return false;
    }
    return p.window == 0u || key > qpos - i32(p.window);
}

struct DecodeTile {
    bs: Bases,
    h: u32,
    r0: u32,
    nq: u32,
}

// The chunk's work; leaves each row's merged m, l and sums in tmerge (team
// 0's slots).
fn decode_tile(wid: vec3<u32>, lid: u32) -> DecodeTile {
    let team = lid / 16u;
    let lane = lid % 16u;
    let bh = wid.y;
    let h = bh % p.hkv;
    let bs = bases_of(bh / p.hkv);
    let r0 = wid.x * RB;
    let nq = min(RB, p.rows - r0);
    let n8 = p.d / 8u;
    let has_col = lane < n8;
    if (lid == 0u) {
        var len = min(p.kv_len, p.skv);
        if (p.has_lens != 0u) {
            len = min(len, lens[bs.lens]);
        }
        dec_len = len;
    }
    let len = i32(workgroupUniformLoad(&dec_len));
    let shift = select(len - i32(p.sq), 0, p.causal == 2u);

    var qa: array<vec4<f32>, RB>;
    var qb: array<vec4<f32>, RB>;
    var qpos: array<i32, RB>;
    var mbase: array<i32, RB>;
    var spos: array<u32, RB>;
    var m: array<f32, RB>;
    var l: array<f32, RB>;
    var acc_a: array<vec4<f32>, RB>;
    var acc_b: array<vec4<f32>, RB>;
    var pmin = 2147483647;
    var pmax = -2147483647;
    for (var i = 0u; i < RB; i++) {
        let r = min(r0 + i, p.rows - 1u);
        let hq = h * p.group + r / p.sq;
        let s = r % p.sq;
        spos[i] = s;
        qpos[i] = i32(s) + shift;
        mbase[i] = bs.m + i32(hq) * p.m_h;
        m[i] = neg_inf();
        l[i] = 0.0;
        acc_a[i] = vec4<f32>(0.0);
        acc_b[i] = vec4<f32>(0.0);
        qa[i] = vec4<f32>(0.0);
        qb[i] = vec4<f32>(0.0);
        if (i < nq) {
            pmin = min(pmin, qpos[i]);
            pmax = max(pmax, qpos[i]);
            if (has_col) {
                let qr = bs.q + i32(hq) * p.q_h + i32(s) * p.q_s + i32(lane * 8u) * p.q_d;
                var x: array<f32, 8>;
                for (var e = 0; e < 8; e++) {
                    x[e] = f32(q[qr + e * p.q_d]) * p.scale;
                }
                qa[i] = vec4<f32>(x[0], x[1], x[2], x[3]);
                qb[i] = vec4<f32>(x[4], x[5], x[6], x[7]);
            }
        }
    }
    var kbeg = i32(wid.z * p.chunk_keys);
    var kend = min(kbeg + i32(p.chunk_keys), len);
    if (p.causal != 0u) {
        kend = min(kend, pmax + 1);
    }
    if (p.window != 0u) {
        kbeg = max(kbeg, pmin - i32(p.window) + 1);
    }
    let kb = bs.k + i32(h) * p.k_h;
    let vb = bs.v + i32(h) * p.v_h;
    // The spread path (a uniform choice): this lane's row lane / 4, its
    // running max and its own keys' share of the row's sum.
    let spread = DEC_SPREAD && nq == RB;
    let tb = team_base(lid);
    let my_r = min(r0 + lane / 4u, p.rows - 1u);
    let my_spos = my_r % p.sq;
    let my_qpos = i32(my_spos) + shift;
    let my_mbase = bs.m + i32(h * p.group + my_r / p.sq) * p.m_h;
    var my_m = neg_inf();
    var my_l = 0.0;

    for (var base = kbeg; base < kend; base += i32(KB * TEAMS)) {
        let k0 = base + i32(team * KB);
        // K words of this team's keys (zero past the chunk).
        var kw: array<vec4<u32>, KB>;
        var vw: array<vec4<u32>, KB>;
        for (var u = 0u; u < KB; u++) {
            let key = k0 + i32(u);
            kw[u] = vec4<u32>();
            vw[u] = vec4<u32>();
            if (key < kend && has_col) {
                kw[u] = k4[u32(kb + key * p.k_s) / 8u + lane];
                vw[u] = v4[u32(vb + key * p.v_s) / 8u + lane];
            }
        }
        var kx: array<array<vec4<f32>, 2>, KB>;
        for (var u = 0u; u < KB; u++) {
            kx[u] = dec_unpack(kw[u]);
        }
        if (spread) {
            // Lane 4r + u ends with row r's score of key k0 + u.
            var part: array<vec4<f32>, RB>;
            for (var i = 0u; i < RB; i++) {
                for (var u = 0u; u < KB; u++) {
                    part[i][u] = dot(qa[i], kx[u][0]) + dot(qb[i], kx[u][1]);
                }
            }
            let b3 = (lane & 8u) != 0u;
            let b2 = (lane & 4u) != 0u;
            let b1 = (lane & 2u) != 0u;
            let b0 = (lane & 1u) != 0u;
            let n0 = select(part[0], part[2], b3) + team_xor(select(part[2], part[0], b3), 8u, lid);
            let n1 = select(part[1], part[3], b3) + team_xor(select(part[3], part[1], b3), 8u, lid);
            let n = select(n0, n1, b2) + team_xor(select(n1, n0, b2), 4u, lid);
            let h2 = select(n.xy, n.zw, b1) + team_xor(vec4<f32>(select(n.zw, n.xy, b1), 0.0, 0.0), 2u, lid).xy;
            let sc = select(h2.x, h2.y, b0) + team_xor(vec4<f32>(select(h2.y, h2.x, b0)), 1u, lid).x;
            let key = k0 + i32(lane & 3u);
            var x = neg_inf();
            if (key < kend && dec_allowed(key, my_qpos)) {
                x = sc + mask_term(my_mbase, my_spos, u32(key));
            }
            var mx = max(x, team_xor(vec4<f32>(x), 1u, lid).x);
            mx = max(mx, team_xor(vec4<f32>(mx), 2u, lid).x);
            let mt = max(my_m, mx);
            let alpha = select(exp(my_m - mt), 1.0, my_m == mt);
            my_m = mt;
            let w = select(exp(x - mt), 0.0, x == neg_inf());
            my_l = my_l * alpha + w;
            // The row's 4 weights on each of its lanes (keys in order), then
            // each row's weights and alpha from its first lane.
            let wo = team_xor(vec4<f32>(w), 1u, lid).x;
            let w2 = select(vec2<f32>(w, wo), vec2<f32>(wo, w), b0);
            let wo2 = team_xor(vec4<f32>(w2, 0.0, 0.0), 2u, lid).xy;
            let w4 = select(vec4<f32>(w2, wo2), vec4<f32>(wo2, w2), b1);
            var vx: array<array<vec4<f32>, 2>, KB>;
            for (var u = 0u; u < KB; u++) {
                vx[u] = dec_unpack(vw[u]);
            }
            for (var i = 0u; i < RB; i++) {
                let wi = team_get(w4, tb + 4u * i, lid);
                let ai = team_get(vec4<f32>(alpha), tb + 4u * i, lid).x;
                var a = acc_a[i] * ai;
                var b = acc_b[i] * ai;
                for (var u = 0u; u < KB; u++) {
                    a += wi[u] * vx[u][0];
                    b += wi[u] * vx[u][1];
                }
                acc_a[i] = a;
                acc_b[i] = b;
            }
            continue;
        }
        for (var i = 0u; i < RB; i++) {
            // Rows past the tile (MHA decode has one): no work (nq is uniform).
            if (i >= nq) {
                break;
            }
            // This lane's part of the 4 scores, then the team's sum.
            var part4 = vec4<f32>(0.0);
            for (var u = 0u; u < KB; u++) {
                part4[u] = dot(qa[i], kx[u][0]) + dot(qb[i], kx[u][1]);
            }
            let s4 = team_sum(part4, lid);
            var sc: array<f32, KB>;
            var mt = m[i];
            for (var u = 0u; u < KB; u++) {
                let key = k0 + i32(u);
                var x = neg_inf();
                if (key < kend && dec_allowed(key, qpos[i])) {
                    x = s4[u] + mask_term(mbase[i], spos[i], u32(key));
                }
                sc[u] = x;
                if (x > mt) {
                    mt = x;
                }
            }
            let alpha = select(exp(m[i] - mt), 1.0, m[i] == mt);
            m[i] = mt;
            var a = acc_a[i] * alpha;
            var b = acc_b[i] * alpha;
            var ls = l[i] * alpha;
            for (var u = 0u; u < KB; u++) {
                let w = select(exp(sc[u] - mt), 0.0, sc[u] == neg_inf());
                let vx = dec_unpack(vw[u]);
                ls += w;
                a += w * vx[0];
                b += w * vx[1];
            }
            acc_a[i] = a;
            acc_b[i] = b;
            l[i] = ls;
        }
    }

    if (spread) {
        // Each row's max and sum from its 4 lanes.
        var ls = my_l + team_xor(vec4<f32>(my_l), 1u, lid).x;
        ls += team_xor(vec4<f32>(ls), 2u, lid).x;
        for (var i = 0u; i < RB; i++) {
            let ml = team_get(vec4<f32>(my_m, ls, 0.0, 0.0), tb + 4u * i, lid);
            m[i] = ml.x;
            l[i] = ml.y;
        }
    }
    // Merge the teams: each writes its rows, then invocations combine.
    for (var i = 0u; i < RB; i++) {
        let at = (team * RB + i) * TSTRIDE;
        if (lane == 0u) {
            tmerge[at] = m[i];
            tmerge[at + 1u] = l[i];
        }
        if (has_col) {
            let c = 2u + lane * 8u;
            tmerge[at + c] = acc_a[i].x;
            tmerge[at + c + 1u] = acc_a[i].y;
            tmerge[at + c + 2u] = acc_a[i].z;
            tmerge[at + c + 3u] = acc_a[i].w;
            tmerge[at + c + 4u] = acc_b[i].x;
            tmerge[at + c + 5u] = acc_b[i].y;
            tmerge[at + c + 6u] = acc_b[i].z;
            tmerge[at + c + 7u] = acc_b[i].w;
        }
    }
    workgroupBarrier();
    // One row at a time: invocation e merges entries e and e + 128 (m, l, sums).
    var merged: array<f32, 2>;
    for (var i = 0u; i < RB; i++) {
        var big = neg_inf();
        for (var t = 0u; t < TEAMS; t++) {
            let mt = tmerge[(t * RB + i) * TSTRIDE];
            if (mt > big) {
                big = mt;
            }
        }
        // Entries lid and lid + 128 (m, l, then the sums; m stays `big`).
        for (var half = 0u; half < 2u; half++) {
            let e = lid + half * 128u;
            var sum = 0.0;
            if (e >= 1u && e < p.d + 2u) {
                for (var t = 0u; t < TEAMS; t++) {
                    let at = (t * RB + i) * TSTRIDE;
                    let mt = tmerge[at];
                    let w = select(exp(mt - big), 1.0, mt == big);
                    sum += w * tmerge[at + e];
                }
            }
            merged[half] = select(sum, big, e == 0u);
        }
        workgroupBarrier();
        for (var half = 0u; half < 2u; half++) {
            let e = lid + half * 128u;
            if (e < p.d + 2u) {
                tmerge[i * TSTRIDE + e] = merged[half];
            }
        }
        workgroupBarrier();
    }
    return DecodeTile(bs, h, r0, nq);
}

@compute @workgroup_size(128)
fn attention_decode(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let tile = decode_tile(wid, lid);
    for (var e = lid; e < tile.nq * p.d; e += 128u) {
        let i = e / p.d;
        let c = e % p.d;
        let l = tmerge[i * TSTRIDE + 1u];
        let at = out_row(tile.bs, tile.h, tile.r0 + i);
        out[at.x + i32(c) * p.o_d] = T(select(tmerge[i * TSTRIDE + 2u + c] / l, 0.0, l == 0.0));
        if (c == 0u && p.want_lse != 0u) {
            lse[at.y] = select(tmerge[i * TSTRIDE] + log(l), neg_inf(), l == 0.0);
        }
    }
}

@compute @workgroup_size(128)
fn attention_decode_partial(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let tile = decode_tile(wid, lid);
    let stride = p.d + 2u;
    for (var e = lid; e < tile.nq * stride; e += 128u) {
        let i = e / stride;
        let c = e % stride;
        let at = ((wid.y * p.rows + tile.r0 + i) * p.chunks + wid.z) * stride;
        part[at + c] = tmerge[i * TSTRIDE + c];
    }
}
