// Fragment: attention_decode.wgsl's team sum with subgroup operations
// (src/ops/attention/decode.rs picks it where subgroups hold whole teams).

// The sum over the 16 invocations of a team (consecutive invocation indices
// within one subgroup of at least 16).
fn team_sum(v: vec4<f32>, lid: u32) -> vec4<f32> {
    var x = v;
    x += subgroupShuffleXor(x, 8u);
    x += subgroupShuffleXor(x, 4u);
    x += subgroupShuffleXor(x, 2u);
    x += subgroupShuffleXor(x, 1u);
    return x;
}
