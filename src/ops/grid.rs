//! Spreading a 1-D range of work over a 2-D grid of workgroups, because one
//! grid dimension is limited (65535 groups on most adapters).

/// Workgroup counts for `n` invocations in workgroups of `wg`, and the
/// invocations one row of the grid covers (`row`): a kernel computes its
/// linear index as `gid.y * row + gid.x`.
pub fn grid_1d(n: u64, wg: u32, max_per_dim: u32) -> ([u32; 3], u32) {
    let groups = n.div_ceil(wg as u64).max(1);
    let x = groups.min(max_per_dim as u64);
    let y = groups.div_ceil(x);
    ([x as u32, y as u32, 1], (x * wg as u64) as u32)
}
