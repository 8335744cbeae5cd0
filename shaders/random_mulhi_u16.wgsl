// Fragment of random.wgsl: Philox's products from 16-bit halves (WGSL has
// no mulhi), for every adapter.

// (high, low) words of the 64-bit product a * b, arranged so each step maps
// to a multiply-add.
fn mulhilo(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let cross = a0 * b1 + ((a0 * b0) >> 16u);       // < 2^32
    let cross2 = a1 * b0 + (cross & 0xffffu);       // < 2^32
    let hi = a1 * b1 + (cross >> 16u) + (cross2 >> 16u);
    return vec2<u32>(hi, a * b);
}
