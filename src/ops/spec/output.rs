//! The output check every operator runs before recording: an output view
//! whose elements share memory (a zero stride, or strides that interleave)
//! would race on write, and an output that shares memory with an input
//! would read what the launch has already overwritten. Inputs are bound
//! read-only, and a buffer cannot be bound read-only and writable in one
//! launch, so by default an input may not even share the output's buffer.

use super::super::tensor::{Tensor, MAX_RANK};
use crate::bail;
use crate::error::Result;

/// What an operator's kernel allows between its output and its inputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sharing {
    /// No input may share the output's buffer.
    Separate,
    /// An input that is exactly the output's view is allowed (the kernel
    /// reads it through the output's binding, each element before writing
    /// it); any other sharing is refused.
    InPlace,
    /// As `InPlace`, and an input may also share the output's buffer apart
    /// from it (no byte in common); the operator reads such an input from a
    /// copy. Partial overlap is refused.
    InPlaceOrApart,
    /// An input may share the output's buffer where no element of it
    /// overlaps the output: for operators that read their inputs and write
    /// their output in different launches (reductions).
    Disjoint,
}

/// The first dim (as given) whose stride does not step past every element
/// that the dims with smaller strides reach, or `None` if no two elements
/// of the view share memory by this test. Sorted by |stride|, each dim must
/// step past the span of the ones before it; a zero stride on a dim longer
/// than 1 fails at once. Views this refuses whose elements happen not to
/// collide (rare interleavings) are refused too: the test is sufficient,
/// not exact.
pub fn self_overlapping_dim(shape: &[usize], strides: &[isize]) -> Option<usize> {
    // (|stride|, size, dim) of the dims that step, on the stack for views
    // of up to MAX_RANK dims (all checked views).
    let mut buf = [(0usize, 0usize, 0usize); MAX_RANK];
    let mut heap = Vec::new();
    let dims: &mut [(usize, usize, usize)] = if shape.len() <= MAX_RANK {
        let mut k = 0;
        for d in (0..shape.len()).filter(|&d| shape[d] > 1) {
            buf[k] = (strides[d].unsigned_abs(), shape[d], d);
            k += 1;
        }
        &mut buf[..k]
    } else {
        heap.extend((0..shape.len()).filter(|&d| shape[d] > 1).map(|d| (strides[d].unsigned_abs(), shape[d], d)));
        &mut heap
    };
    dims.sort_unstable();
    let mut span = 0usize;
    for &mut (s, n, d) in dims {
        if s <= span || s == 0 {
            return Some(d);
        }
        span = span.saturating_add(s.saturating_mul(n - 1));
    }
    None
}

/// True if `a` and `b` address exactly the same elements in the same order.
fn identical(a: &Tensor, b: &Tensor) -> bool {
    a.same_buffer(b)
        && a.dtype == b.dtype
        && a.offset == b.offset
        && a.shape == b.shape
        && a.shape.iter().zip(a.strides.iter().zip(&b.strides)).all(|(&d, (x, y))| d <= 1 || x == y)
}

/// Check `out` against itself and against `inputs` ((name, view) pairs, the
/// names used in messages). Returns a bit per input that is `out`'s very
/// view (never with `Sharing::Separate`).
pub fn check_output(what: &str, out: &Tensor, inputs: &[(&str, &Tensor)], sharing: Sharing) -> Result<u32> {
    if let Some(d) = self_overlapping_dim(&out.shape, &out.strides) {
        bail!(
            InvalidArgument,
            "{what}: out's elements share memory (shape {:?}, strides {:?}: dim {d}'s stride does not step past the others)",
            out.shape,
            out.strides
        );
    }
    let mut in_place = 0u32;
    for (i, (name, t)) in inputs.iter().enumerate() {
        if !t.same_buffer(out) || t.numel() == 0 || out.numel() == 0 {
            continue;
        }
        if sharing == Sharing::Disjoint && !t.may_overlap(out) {
            continue;
        }
        if matches!(sharing, Sharing::InPlace | Sharing::InPlaceOrApart) && identical(t, out) {
            in_place |= 1 << i;
        } else if t.may_overlap(out) {
            bail!(InvalidArgument, "{what}: out overlaps {name} without being the same view");
        } else if sharing != Sharing::InPlaceOrApart {
            bail!(InvalidArgument, "{what}: out shares a buffer with {name} (outputs need a buffer of their own)");
        }
    }
    Ok(in_place)
}

#[cfg(test)]
mod tests {
    use super::self_overlapping_dim;

    #[test]
    fn overlapping_output_views_are_found() {
        assert_eq!(self_overlapping_dim(&[3, 4], &[4, 1]), None);
        assert_eq!(self_overlapping_dim(&[3, 4], &[1, 3]), None);
        assert_eq!(self_overlapping_dim(&[3, 4], &[-4, -1]), None);
        assert_eq!(self_overlapping_dim(&[5, 1], &[1, 0]), None, "a zero stride on a dim of 1 is harmless");
        assert_eq!(self_overlapping_dim(&[3, 4], &[0, 1]), Some(0), "zero stride");
        assert_eq!(self_overlapping_dim(&[3, 4], &[2, 1]), Some(0), "rows overlap");
        assert!(self_overlapping_dim(&[4, 3], &[1, 1]).is_some(), "equal strides");
        assert_eq!(self_overlapping_dim(&[], &[]), None);
    }
}
