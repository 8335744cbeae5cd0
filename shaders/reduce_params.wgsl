// Fragment: joined to reduce.wgsl in the reduce families: its uniform.

struct Params {
    k_total: u32,
    rows: u32,
    chunks: u32,
    in_offset: u32,
    out_offset: u32,
    rows_per_y: u32,
    kept_rank: u32,
    red_rank: u32,
    unbiased: u32,
    k_total_f: f32,
    zero: u32, // 0, unknown to the compiler: see opaque()
    single_pass: u32, // 1: each row is one chunk, finished by the first launch
    kept_shape: array<vec4<u32>, 2>,
    kept_in: array<vec4<i32>, 2>,
    kept_out: array<vec4<i32>, 2>,
    red_shape: array<vec4<u32>, 2>,
    red_in: array<vec4<i32>, 2>,
}
@group(0) @binding(3) var<uniform> p: Params;
