// Fragment: appended to another shader, not compiled on its own.
// Rows handled by teams of TEAM invocations, WG / TEAM rows per workgroup
// (norm_rows.wgsl, softmax_rows.wgsl): which row an invocation has, and
// where that row starts. Needs WG, TEAM and a uniform `p` with blocks_per_y,
// in_offset, out_offset, outer_rank, outer_shape, outer_in and outer_out.

// The invocation's row (possibly past the last: such invocations load and
// store nothing but still reach every barrier).
fn row_of(lid: u32, wid: vec3<u32>) -> u32 {
    return (wid.z * p.blocks_per_y + wid.y) * (WG / TEAM) + lid / TEAM;
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
