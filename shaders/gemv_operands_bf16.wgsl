// Fragment: joined last in the family gemv.wgsl+bf16: A and W
// as bf16 bits, two per u32 word (element i is the low half of word i / 2
// when i is even, the high half when odd), widened to f32 exactly as they
// are read, so W is read at 2 bytes an element. A vec4 unit of W is two
// words (its offset a multiple of 4 elements, as for T).

@group(0) @binding(1) var<storage, read> a: array<u32>;
@group(0) @binding(2) var<storage, read> w: array<u32>;
@group(0) @binding(3) var<storage, read> w4: array<vec2<u32>>;
@group(0) @binding(7) var<storage, read> a4: array<vec2<u32>>;

fn bf16_elem(word: u32, i: i32) -> f32 {
    return bitcast<f32>(select(word << 16u, word & 0xffff0000u, (i & 1) != 0));
}
fn a_elem(i: i32) -> f32 {
    return bf16_elem(a[u32(i) >> 1u], i);
}
fn w_elem(i: i32) -> f32 {
    return bf16_elem(w[u32(i) >> 1u], i);
}
fn bf16_quad(u: vec2<u32>) -> vec4<f32> {
    return vec4<f32>(bitcast<f32>(u.x << 16u), bitcast<f32>(u.x & 0xffff0000u), bitcast<f32>(u.y << 16u),
                     bitcast<f32>(u.y & 0xffff0000u));
}
fn w_quad(q: i32) -> vec4<f32> {
    return bf16_quad(w4[q]);
}
fn a_quad4(q: i32) -> vec4<f32> {
    return bf16_quad(a4[q]);
}

// The unit entries' 16-byte unit of W: 8 bf16 (the upper 4 in hi).
const VW: u32 = 8u;
fn unit_of(u: vec4<u32>) -> Unit {
    return Unit(bf16_quad(u.xy), bf16_quad(u.zw));
}
