// Fragment of random.wgsl: Philox's products as one 64-bit multiply, for
// adapters with 64-bit integers (a wide multiply instruction instead of
// the four 16-bit products of random_mulhi_u16.wgsl: the generator is
// bound by these products).

// (high, low) words of the 64-bit product a * b.
fn mulhilo(a: u32, b: u32) -> vec2<u32> {
    let w = u64(a) * u64(b);
    return vec2<u32>(u32(w >> 32u), u32(w));
}
