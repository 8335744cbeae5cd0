// Fragment: joined after reduce.wgsl (and reduce_rows.wgsl) in the reduce
// families: the input read as the prelude's T.

@group(0) @binding(0) var<storage, read> x: array<T>;
@group(0) @binding(1) var<storage, read> xv: array<vec4<T>>;

fn x_at(i: u32) -> T {
    return x[i];
}
fn xv_at(q: u32) -> vec4<T> {
    return xv[q];
}

// The output value of a finished reduction: itself (expression kernels
// generate an elementwise epilogue here).
fn epilogue(v: OUT) -> OUT {
    return v;
}
