//! Which K and V views the vectorised attention kernels read in 16-byte
//! words (8 halves): rows dense along the head dim, and every offset and
//! stride in whole words.

use crate::ops::tensor::Tensor;

/// True if each row (last dim) of `t` (f16, rank >= 3) is whole 16-byte
/// words at word boundaries: unit stride along the head dim, a head dim of
/// whole 8s, non-negative other strides and the offset multiples of 8.
pub fn rows_in_words(t: &Tensor) -> bool {
    let r = t.rank();
    let d = t.shape[r - 1];
    (t.strides[r - 1] == 1 || d == 1)
        && d.is_multiple_of(8)
        && t.strides[..r - 1].iter().all(|&s| s >= 0 && s % 8 == 0)
        && t.bound_offset().is_multiple_of(8)
}
