// Fragment: joined after reduce.wgsl (and reduce_rows.wgsl) in the
// reduce.wgsl:bf16 families: the input as bf16 bits, two per u32 word
// (element i is the low half of word i / 2 when i is even, the high half
// when odd), widened exactly to T = f32 as it is read; a vec4 unit is two
// words (4-aligned elements, as for T).

@group(0) @binding(0) var<storage, read> x: array<u32>;
@group(0) @binding(1) var<storage, read> xv: array<vec2<u32>>;

fn x_at(i: u32) -> T {
    let word = x[i >> 1u];
    return T(bitcast<f32>(select(word << 16u, word & 0xffff0000u, (i & 1u) != 0u)));
}
fn xv_at(q: u32) -> vec4<T> {
    let u = xv[q];
    return vec4<T>(T(bitcast<f32>(u.x << 16u)), T(bitcast<f32>(u.x & 0xffff0000u)), T(bitcast<f32>(u.y << 16u)),
                   T(bitcast<f32>(u.y & 0xffff0000u)));
}

// The output value of a finished reduction: itself (expression kernels
// generate an elementwise epilogue here).
fn epilogue(v: OUT) -> OUT {
    return v;
}
