// Fragment: appended to another shader, not compiled on its own.
// Subgroup primitives for adapters without subgroups: every invocation is
// its own subgroup of one lane, so the workgroup-memory stage does all the work.

fn sg_size() -> u32 {
    return 1u;
}
fn sg_xor_f32(v: f32, mask: u32) -> f32 {
    return v;
}
fn sg_xor_i32(v: i32, mask: u32) -> i32 {
    return v;
}
fn sg_xor_u32(v: u32, mask: u32) -> u32 {
    return v;
}
fn sg_sum_f32(v: f32) -> f32 {
    return v;
}
fn sg_max_f32(v: f32) -> f32 {
    return v;
}
