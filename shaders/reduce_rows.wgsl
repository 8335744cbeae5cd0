// Fragment: appended to reduce.wgsl (then the sg_* primitives), not compiled on its own.
// Reductions of contiguous rows (the last axis) in one launch: LANES
// invocations per row, WG / LANES rows per workgroup, so rows of a few
// dozen to a few thousand elements keep every invocation busy with several
// loads in flight. Each row is read as a scalar head up to its first
// 4-aligned element (rows of odd length start anywhere), vec4 loads, and a
// scalar tail; an invocation sees its elements in increasing order, as the
// arg ops need. The row's lanes combine by subgroup shuffles, then (when a
// row spans several subgroups) through workgroup memory.
//
// Variance and standard deviation read the row twice in the same
// workgroup (the second read comes from cache): once for the mean (the
// compensated sum over n, as OP_SHIFT), then the deviations from it,
// exactly as the two-launch path does.
//
// Kernel spec families "reduce_rows" (src/ops/reduce_rows.rs). Overrides:
// OP (reduce.wgsl's codes but OP_SHIFT), LANES (a power of two, 4 to WG).

override LANES: u32;

// Fold element `k` (value `a`) into `s`; the mean pass of OP_VAR / OP_STD
// only sums.
fn fold1(s: State, a: ACC, k: u32, shift: ACC, mean_pass: bool) -> State {
    if (mean_pass) {
        return add_v(s, a);
    }
    return accumulate(s, a, k, shift);
}

fn fold4(s: State, v: vec4<T>, k: u32, shift: ACC, mean_pass: bool) -> State {
    if (mean_pass) {
        let a = vec4<ACC>(v);
        return add_v(s, (a.x + a.y) + (a.z + a.w));
    }
    return accumulate4(s, v, k, shift);
}

// The share of lane `lane` of the row of k_total elements from x element base.
fn fold_row(base: u32, lane: u32, shift: ACC, mean_pass: bool) -> State {
    var s = identity();
    let k = p.k_total;
    let head = min((4u - base % 4u) % 4u, k);
    if (lane < head) {
        s = fold1(s, ACC(x_at(base + lane)), lane, shift, mean_pass);
    }
    let b4 = (base + head) / 4u;
    let k4 = (k - head) / 4u;
    var i = lane;
    for (; i + 3u * LANES < k4; i += 4u * LANES) {
        let a = xv_at(b4 + i);
        let b = xv_at(b4 + i + LANES);
        let c = xv_at(b4 + i + 2u * LANES);
        let d = xv_at(b4 + i + 3u * LANES);
        s = fold4(s, a, head + 4u * i, shift, mean_pass);
        s = fold4(s, b, head + 4u * (i + LANES), shift, mean_pass);
        s = fold4(s, c, head + 4u * (i + 2u * LANES), shift, mean_pass);
        s = fold4(s, d, head + 4u * (i + 3u * LANES), shift, mean_pass);
    }
    for (; i < k4; i += LANES) {
        s = fold4(s, xv_at(b4 + i), head + 4u * i, shift, mean_pass);
    }
    // Fewer than 4 elements remain: one per lane.
    let t = head + 4u * k4 + lane;
    if (t < k) {
        s = fold1(s, ACC(x_at(base + t)), t, shift, mean_pass);
    }
    return s;
}

// The combined State of the LANES invocations of the caller's row, in each
// of them. Every invocation of the workgroup calls it (it may hold barriers).
fn row_allreduce(s_in: State, lid: u32) -> State {
    var s = s_in;
    let lanes = sg_size();
    for (var m = 1u; m < min(lanes, LANES); m = m * 2u) {
        s = combine(s, shuffled(s, m));
    }
    if (lid == 0u) {
        wg_lanes = lanes;
    }
    let sg = min(workgroupUniformLoad(&wg_lanes), LANES);
    // Subgroup States per row (a row spans LANES / sg subgroups).
    let per_row = LANES / sg;
    if (per_row == 1u) {
        return s;
    }
    if (lid % sg == 0u) {
        wg_states[lid / sg] = s;
    }
    workgroupBarrier();
    let first = (lid / LANES) * per_row;
    if (per_row > 16u) {
        // Many States per row (no subgroups): a tree, all rows at once.
        let n = WG / sg;
        for (var m = per_row; m > 1u; m = m / 2u) {
            let half = m / 2u;
            if (lid < n && lid % per_row < half) {
                wg_states[lid] = combine(wg_states[lid], wg_states[lid + half]);
            }
            workgroupBarrier();
        }
    }
    var r = wg_states[first];
    if (per_row <= 16u) {
        for (var i = 1u; i < per_row; i++) {
            r = combine(r, wg_states[first + i]);
        }
    }
    // wg_states may be written again by the caller's next reduction.
    workgroupBarrier();
    return r;
}

@compute @workgroup_size(WG)
fn reduce_rows(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = row_of(wid) * (WG / LANES) + lid / LANES;
    let lane = lid % LANES;
    // Invocations past the last row still take part in the row steps' barriers.
    let valid = row < p.rows;
    var base = 0u;
    if (valid) {
        base = u32(i32(p.in_offset) + kept_offsets(row).x);
    }
    var shift = ACC(0);
    if (OP == OP_VAR || OP == OP_STD) {
        var m = identity();
        if (valid) {
            m = fold_row(base, lane, shift, true);
        }
        shift = ACC(mean_of(row_allreduce(m, lid)));
    }
    var s = identity();
    if (valid) {
        s = fold_row(base, lane, shift, false);
    }
    s = row_allreduce(s, lid);
    if (valid && lane == 0u) {
        out[u32(i32(p.out_offset) + kept_offsets(row).y)] = finish(s);
    }
}
