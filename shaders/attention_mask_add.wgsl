// Fragment: the attention kernels' additive mask term (src/ops/attention.rs).

// An additive mask of the query's dtype, broadcast through strides.
@group(0) @binding(8) var<storage, read> mask: array<T>;

fn mask_term(base: i32, s: u32, key: u32) -> f32 {
    return f32(mask[base + i32(s) * p.m_q + i32(key) * p.m_k]);
}
