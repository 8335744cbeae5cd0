// Fragment: attention_decode.wgsl's team sum through workgroup memory
// (src/ops/attention/decode.rs picks it where the adapter has no subgroups
// of 16 or more). Called in uniform control flow by every invocation.

var<workgroup> team_red: array<vec4<f32>, 128>;

// The sum over the 16 invocations of a team (lid / 16).
fn team_sum(v: vec4<f32>, lid: u32) -> vec4<f32> {
    team_red[lid] = v;
    workgroupBarrier();
    let b = lid & ~15u;
    var s = vec4<f32>(0.0);
    for (var j = 0u; j < 16u; j++) {
        s += team_red[b + j];
    }
    workgroupBarrier();
    return s;
}

// Where team_get finds this team's first lane.
fn team_base(lid: u32) -> u32 {
    return lid & ~15u;
}

// v of the team lane `lane ^ mask` (mask below 16).
fn team_xor(v: vec4<f32>, mask: u32, lid: u32) -> vec4<f32> {
    return team_get(v, lid ^ mask, lid);
}

// v of invocation `src` (a lane of this team: team_base + lane).
fn team_get(v: vec4<f32>, src: u32, lid: u32) -> vec4<f32> {
    team_red[lid] = v;
    workgroupBarrier();
    let x = team_red[src];
    workgroupBarrier();
    return x;
}
