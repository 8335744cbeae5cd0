
// Merges the KV chunks of attention.wgsl's `attention_partial` (after
// attention_params.wgsl). Entry point: `attention_combine`, one invocation
// per output element (b * hkv + h, r, column); linear index
// gid.y * p.grid_row + gid.x. Column 0 also writes lse.
// out = sum_c e^(m_c - M) acc_c / sum_c e^(m_c - M) l_c with M the largest m_c.

@compute @workgroup_size(64)
fn attention_combine(@builtin(global_invocation_id) gid: vec3<u32>) {
    let lin = gid.y * p.grid_row + gid.x;
    let total = p.bh_total * p.rows * p.d;
    if (lin >= total) {
        return;
    }
    let c = lin % p.d;
    let r = (lin / p.d) % p.rows;
    let bh = lin / (p.d * p.rows);
    let stride = p.d + 2u;
    let base = (bh * p.rows + r) * p.chunks * stride;
    var big = neg_inf();
    for (var j = 0u; j < p.chunks; j++) {
        let m = part[base + j * stride];
        if (m > big) {
            big = m;
        }
    }
    var l = 0.0;
    var a = 0.0;
    for (var j = 0u; j < p.chunks; j++) {
        let at = base + j * stride;
        let m = part[at];
        let w = select(exp(m - big), 1.0, m == big);
        l += w * part[at + 1u];
        a += w * part[at + 2u + c];
    }
    let bs = bases_of(bh / p.hkv);
    let row = out_row(bs, bh % p.hkv, r);
    out[row.x + i32(c) * p.o_d] = T(select(a / l, 0.0, l == 0.0));
    if (c == 0u && p.want_lse != 0u) {
        lse[row.y] = select(big + log(l), neg_inf(), l == 0.0);
    }
}
