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

// The subgroup index of this team's first lane (every invocation active).
fn team_base(lid: u32) -> u32 {
    return subgroupExclusiveAdd(1u) & ~15u;
}

// v of the team lane `lane ^ mask` (mask below 16).
fn team_xor(v: vec4<f32>, mask: u32, lid: u32) -> vec4<f32> {
    return subgroupShuffleXor(v, mask);
}

// v of subgroup invocation `src` (a lane of this team: team_base + lane).
fn team_get(v: vec4<f32>, src: u32, lid: u32) -> vec4<f32> {
    return subgroupShuffle(v, src);
}
