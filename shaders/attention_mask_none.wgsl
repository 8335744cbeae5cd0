// Fragment: the attention kernels' mask term without a mask (src/ops/attention.rs).

// No attention mask.
fn mask_term(base: i32, s: u32, key: u32) -> f32 {
    return 0.0;
}
