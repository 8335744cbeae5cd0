//! Axis arguments of reductions: normalising Python-style axes, and the
//! output shape with or without kept dims.

use crate::bail;
use crate::error::Result;

/// A flag per input dim: true where it is reduced. No axes means all.
pub fn reduced_mask(rank: usize, axes: &[i32]) -> Result<Vec<bool>> {
    let mut mask = vec![axes.is_empty(); rank];
    for &a in axes {
        let r = rank as i64;
        let norm = if a < 0 { a as i64 + r } else { a as i64 };
        if norm < 0 || norm >= r {
            bail!(InvalidArgument, "axis {a} is out of range for a rank-{rank} tensor");
        }
        if mask[norm as usize] {
            bail!(InvalidArgument, "axis {a} is given more than once");
        }
        mask[norm as usize] = true;
    }
    Ok(mask)
}

/// One Python-style axis, normalised.
pub fn single_axis(rank: usize, axis: i32) -> Result<usize> {
    let r = rank as i64;
    let norm = if axis < 0 { axis as i64 + r } else { axis as i64 };
    if norm < 0 || norm >= r {
        bail!(InvalidArgument, "axis {axis} is out of range for a rank-{rank} tensor");
    }
    Ok(norm as usize)
}

/// The output shape of a reduction: reduced dims become 1 (`keepdim`) or vanish.
pub fn reduced_shape(shape: &[usize], mask: &[bool], keepdim: bool) -> Vec<usize> {
    shape
        .iter()
        .zip(mask)
        .filter_map(|(&d, &m)| match (m, keepdim) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect()
}
