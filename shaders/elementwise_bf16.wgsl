// Fragment: joined after elementwise.wgsl in the family
// `elementwise.wgsl+bf16`: the vec4 entry points for bf16 operands and a
// bf16 output, with A and O both f32. Four bf16 elements are two u32 words
// (a vec2<u32>, 8 bytes like a vec4<f16>); each unit is widened to f32
// exactly, computed by compute4 as f32 tensors are, and rounded once to
// bf16 (nearest even, NaN to 0x7fc0, past the range to inf) into whole words
// of y, so no invocation touches another's elements. Same frame, layouts
// and operand sources as the _vec4 entries (the where mask is u32: maskv).

@group(0) @binding(11) var<storage, read> x0b: array<vec2<u32>>;
@group(0) @binding(12) var<storage, read> x1b: array<vec2<u32>>;
@group(0) @binding(13) var<storage, read> x2b: array<vec2<u32>>;
@group(0) @binding(14) var<storage, read_write> yb: array<vec2<u32>>;

fn widen_bf16(w: vec2<u32>) -> vec4<A> {
    return vec4<A>(A(bitcast<f32>(w.x << 16u)), A(bitcast<f32>(w.x & 0xffff0000u)),
                   A(bitcast<f32>(w.y << 16u)), A(bitcast<f32>(w.y & 0xffff0000u)));
}

// c10::BFloat16's round_to_nearest_even on the bits (integer arithmetic:
// no float reassociation or flushing).
fn round_bf16(v: O) -> u32 {
    let u = bitcast<u32>(f32(v));
    if ((u & 0x7fffffffu) > 0x7f800000u) {
        return 0x7fc0u;
    }
    return (u + 0x7fffu + ((u >> 16u) & 1u)) >> 16u;
}
fn narrow_bf16(v: vec4<O>) -> vec2<u32> {
    return vec2<u32>(round_bf16(v.x) | (round_bf16(v.y) << 16u), round_bf16(v.z) | (round_bf16(v.w) << 16u));
}

fn routed_b(k: u32, o: vec4<i32>) -> vec4<A> {
    switch p.src[k] {
        case 1u: { return widen_bf16(yb[u32(o.w)]); }
        case 2u: { return vec4<A>(scalar(0u)); }
        default: { return vec4<A>(scalar(1u)); }
    }
}
fn get0b(o: vec4<i32>) -> vec4<A> { if (ROUTED && !own(0u)) { return routed_b(0u, o); } return widen_bf16(x0b[u32(o.x)]); }
fn get1b(o: vec4<i32>) -> vec4<A> { if (ROUTED && !own(1u)) { return routed_b(1u, o); } return widen_bf16(x1b[u32(o.y)]); }
fn get2b(o: vec4<i32>) -> vec4<A> { if (ROUTED && !own(2u)) { return routed_b(2u, o); } return widen_bf16(x2b[u32(o.z)]); }

struct DoneB {
    i: u32,
    at: u32,
    v: vec2<u32>,
}
fn put_b(d: DoneB) {
    if (d.i < p.n) { yb[d.at] = d.v; }
}
fn done_b(it: Item, v: vec4<O>) -> DoneB {
    return DoneB(it.i, u32(it.o.w), narrow_bf16(v));
}

fn map0_bf16_item(gid: vec3<u32>, groups: vec3<u32>, k: u32) -> DoneB {
    let it = item(gid, groups, k);
    let o = it.o;
    return done_b(it, compute4(routed_b(0u, o), routed_b(1u, o), routed_b(2u, o), p.base + 4u * it.i));
}
@compute @workgroup_size(256)
fn map0_bf16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let d0 = map0_bf16_item(gid, groups, 0u);
    if (ITEMS == 1u) {
        put_b(d0);
        return;
    }
    let d1 = map0_bf16_item(gid, groups, 1u);
    let d2 = map0_bf16_item(gid, groups, 2u);
    let d3 = map0_bf16_item(gid, groups, 3u);
    put_b(d0);
    put_b(d1);
    put_b(d2);
    put_b(d3);
}

fn map1_bf16_item(gid: vec3<u32>, groups: vec3<u32>, k: u32) -> DoneB {
    let it = item(gid, groups, k);
    let o = it.o;
    return done_b(it, compute4(get0b(o), routed_b(1u, o), routed_b(2u, o), p.base + 4u * it.i));
}
@compute @workgroup_size(256)
fn map1_bf16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let d0 = map1_bf16_item(gid, groups, 0u);
    if (ITEMS == 1u) {
        put_b(d0);
        return;
    }
    let d1 = map1_bf16_item(gid, groups, 1u);
    let d2 = map1_bf16_item(gid, groups, 2u);
    let d3 = map1_bf16_item(gid, groups, 3u);
    put_b(d0);
    put_b(d1);
    put_b(d2);
    put_b(d3);
}

fn map2_bf16_item(gid: vec3<u32>, groups: vec3<u32>, k: u32) -> DoneB {
    let it = item(gid, groups, k);
    let o = it.o;
    return done_b(it, compute4(get0b(o), get1b(o), routed_b(2u, o), p.base + 4u * it.i));
}
@compute @workgroup_size(256)
fn map2_bf16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let d0 = map2_bf16_item(gid, groups, 0u);
    if (ITEMS == 1u) {
        put_b(d0);
        return;
    }
    let d1 = map2_bf16_item(gid, groups, 1u);
    let d2 = map2_bf16_item(gid, groups, 2u);
    let d3 = map2_bf16_item(gid, groups, 3u);
    put_b(d0);
    put_b(d1);
    put_b(d2);
    put_b(d3);
}

fn map3_bf16_item(gid: vec3<u32>, groups: vec3<u32>, k: u32) -> DoneB {
    let it = item(gid, groups, k);
    let o = it.o;
    return done_b(it, compute4(get0b(o), get1b(o), get2b(o), p.base + 4u * it.i));
}
@compute @workgroup_size(256)
fn map3_bf16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let d0 = map3_bf16_item(gid, groups, 0u);
    if (ITEMS == 1u) {
        put_b(d0);
        return;
    }
    let d1 = map3_bf16_item(gid, groups, 1u);
    let d2 = map3_bf16_item(gid, groups, 2u);
    let d3 = map3_bf16_item(gid, groups, 3u);
    put_b(d0);
    put_b(d1);
    put_b(d2);
    put_b(d3);
}

fn where3_bf16_item(gid: vec3<u32>, groups: vec3<u32>, k: u32) -> DoneB {
    let it = item(gid, groups, k);
    let o = it.o;
    return done_b(it, compute4(get_maskv(o), get1b(o), get2b(o), p.base + 4u * it.i));
}
@compute @workgroup_size(256)
fn where3_bf16(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let d0 = where3_bf16_item(gid, groups, 0u);
    if (ITEMS == 1u) {
        put_b(d0);
        return;
    }
    let d1 = where3_bf16_item(gid, groups, 1u);
    let d2 = where3_bf16_item(gid, groups, 2u);
    let d3 = where3_bf16_item(gid, groups, 3u);
    put_b(d0);
    put_b(d1);
    put_b(d2);
    put_b(d3);
}
