// Fragment: appended to another shader, not compiled on its own.
// Subgroup primitives, for adapters with the SUBGROUP feature, appended to a
// reduction template (naga accepts these builtins without an enable
// directive). The workgroup-memory-only twin is reduce_wg_shared.wgsl.

// Lanes in the calling subgroup (a power of two): the kernel's
// sg_lanes_hint() where it knows them (every file this fragment is appended
// to defines one; 0: unknown), else by ballot. Both are cheaper than a
// subgroupAdd(1u), which cost an f16 layer norm 7% on an H200 (its
// workgroup reductions are on the critical path).
fn sg_size() -> u32 {
    if (sg_lanes_hint() != 0u) {
        return sg_lanes_hint();
    }
    let b = subgroupBallot(true);
    return countOneBits(b.x) + countOneBits(b.y) + countOneBits(b.z) + countOneBits(b.w);
}
fn sg_xor_f32(v: f32, mask: u32) -> f32 {
    return subgroupShuffleXor(v, mask);
}
fn sg_xor_i32(v: i32, mask: u32) -> i32 {
    return subgroupShuffleXor(v, mask);
}
fn sg_xor_u32(v: u32, mask: u32) -> u32 {
    return subgroupShuffleXor(v, mask);
}
fn sg_sum_f32(v: f32) -> f32 {
    return subgroupAdd(v);
}
fn sg_max_f32(v: f32) -> f32 {
    return subgroupMax(v);
}
