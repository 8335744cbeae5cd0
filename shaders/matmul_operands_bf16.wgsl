// Fragment: joined after matmul.wgsl in the family matmul.wgsl+bf16: A and
// B as bf16 bits, two per u32 word (element i is the low half of word i / 2
// when i is even, the high half when odd), widened to f32 exactly as the
// tiles are staged.

@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;

fn bf16_elem(word: u32, i: i32) -> f32 {
    return bitcast<f32>(select(word << 16u, word & 0xffff0000u, (i & 1) != 0));
}
fn a_elem(i: i32) -> f32 {
    return bf16_elem(a[u32(i) >> 1u], i);
}
fn b_elem(i: i32) -> f32 {
    return bf16_elem(b[u32(i) >> 1u], i);
}
