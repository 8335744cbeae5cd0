// Fragment: joined after expr.wgsl in generated kernels that use f16 (which then
// enable it): a value rounded to f16 and held in f32 again.
fn rf16(x: f32) -> f32 { return f32(f16(x)); }
