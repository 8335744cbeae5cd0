// Fragment: joined last in the family gemv.wgsl: A and W read
// as the prelude's T (f32 or f16), widened to f32.

@group(0) @binding(1) var<storage, read> a: array<T>;
@group(0) @binding(2) var<storage, read> w: array<T>;
@group(0) @binding(3) var<storage, read> w4: array<vec4<T>>;
@group(0) @binding(7) var<storage, read> a4: array<vec4<T>>;

fn a_elem(i: i32) -> f32 {
    return f32(a[i]);
}
fn w_elem(i: i32) -> f32 {
    return f32(w[i]);
}
fn w_quad(q: i32) -> vec4<f32> {
    return vec4<f32>(w4[q]);
}
fn a_quad4(q: i32) -> vec4<f32> {
    return vec4<f32>(a4[q]);
}

// The unit entries' 16-byte unit of W: 4 f32, or 8 f16 (the upper 4 in hi).
const VW: u32 = 4u + 4u * T_KIND;
fn unit_of(u: vec4<u32>) -> Unit {
    if (T_KIND == 1u) {
        return Unit(vec4<f32>(unpack2x16float(u.x), unpack2x16float(u.y)),
                    vec4<f32>(unpack2x16float(u.z), unpack2x16float(u.w)));
    }
    return Unit(bitcast<vec4<f32>>(u), vec4<f32>(0.0));
}
