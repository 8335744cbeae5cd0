// Fragment: the uniform of the reduce kernels generated for expressions
// (src/ops/expr/reduce_codegen.rs), joined to reduce.wgsl in place of
// reduce_params.wgsl: its fields, then the prologue's. The generated input
// stage binds the inputs as in<k> at binding 5 + k.

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
    // The prologue (src/ops/expr/reduce_codegen.rs): NaN and infinity bits
    // for elementwise_scalar.wgsl, the dims of the broadcast shape the
    // inputs are indexed over (merged where every input allows), and per
    // input its element offset and strides over them (MAX_RANK slots each).
    nan: u32,
    inf: u32,
    _pad0: u32,
    _pad1: u32,
    shape: array<vec4<u32>, 2>,
    off: array<vec4<u32>, 3>,
    st: array<vec4<i32>, 24>,
    // Scalar slots (expr.wgsl's slot()): the prologue's, then the epilogue's.
    s: array<vec4<u32>, 8>,
}
@group(0) @binding(3) var<uniform> p: Params;
