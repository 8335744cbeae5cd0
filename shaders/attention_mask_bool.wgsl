// Fragment: the attention kernels' boolean mask term (src/ops/attention.rs).

// A boolean mask (32-bit words, nonzero: the key takes part), broadcast
// through strides.
@group(0) @binding(8) var<storage, read> mask: array<u32>;

fn mask_term(base: i32, s: u32, key: u32) -> f32 {
    return select(neg_inf(), 0.0, mask[base + i32(s) * p.m_q + i32(key) * p.m_k] != 0u);
}
