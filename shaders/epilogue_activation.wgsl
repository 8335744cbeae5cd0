// Fragment: the activation of the fused epilogues (gemm_epilogue.wgsl, and
// conv_coop_f16.wgsl, which applies one as it stores), joined after
// elementwise_scalar.wgsl. It reads `p.epi_act` from the including kernel's
// uniform (0 where there is none).

// The activation (WgcActivation's values), as the unary operators compute
// it (shaders/elementwise.wgsl): NaN stays NaN.
fn epi_activate(x: f32) -> f32 {
    switch p.epi_act {
        case 1u: { return select(max(x, 0.0), x, isnan_c(x)); }
        case 2u: { return select(min(max(x, 0.0), 6.0), x, isnan_c(x)); }
        case 3u: { return select(x * max(x + 3.0, 0.0) / 6.0, x, x >= 3.0 || isnan_c(x)); }
        case 4u: { return 0.5 * x * (1.0 + erf_c(x * 0.7071067811865476)); }
        case 5u: { return 0.5 * x * (1.0 + tanh_c(0.7978845608028654 * (x + 0.044715 * x * x * x))); }
        case 6u: { return silu_c(x); }
        case 7u: { return tanh_c(x); }
        default: { return x; }
    }
}

