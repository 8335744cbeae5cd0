// Fragment: joined after matmul.wgsl in the family matmul.wgsl: A and B
// read as the prelude's IN (f32 or f16), widened to f32.

@group(0) @binding(0) var<storage, read> a: array<IN>;
@group(0) @binding(1) var<storage, read> b: array<IN>;

fn a_elem(i: i32) -> f32 {
    return f32(a[i]);
}
fn b_elem(i: i32) -> f32 {
    return f32(b[i]);
}
