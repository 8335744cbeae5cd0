//! Replay scalars of built-in operators: values an operator takes as an
//! argument (an elementwise scalar, a RoPE position offset, an attention
//! `kv_len`) that a graph replay may change without recapture.
//!
//! While capturing, an operator declares its replay scalars before it
//! records (`StreamShared::replay_scalars`); each gets an index in capture
//! order. Every launch it records while the declaration is open whose
//! parameters have the declared field holding the declared value becomes a
//! *site* of that scalar. A replay encodes the new value once and writes it
//! at every site, in the replay's copy of the parameters (the same bytes a
//! user kernel's `WgcGraphScalar` patch writes). A scalar is refused at
//! replay (with the reason) where it could not be found safely: the
//! operator launched kernels but none takes it as a parameter (the value
//! chose the kernel), or it was found in launches that must not all change.

use crate::bail;
use crate::error::Result;
use std::sync::Arc;

/// How a replay value becomes the 4 bytes of a parameter field.
pub type Encode = Arc<dyn Fn(f64) -> u32 + Send + Sync>;

/// What an operator declares for one of its scalars.
#[derive(Clone)]
pub struct ScalarDecl {
    /// The argument's name, for messages (`"scalar"`, `"position_offset"`).
    pub name: &'static str,
    /// The uniform field that holds it, and the u32 word inside the field.
    pub field: &'static str,
    pub word: u32,
    /// The value the capture recorded (as the caller gave it).
    pub captured: f64,
    pub encode: Encode,
    /// Values a replay may give: an inclusive range; `integral` values only
    /// where the kernel indexes with it. NaN and infinities pass only when
    /// `finite` is false (an elementwise scalar may be any float).
    pub min: f64,
    pub max: f64,
    pub integral: bool,
    pub finite: bool,
    /// The operator's launches that hold it must be exactly one.
    pub one_launch: bool,
    /// Set where the operator knows the value cannot change at replay
    /// (it chose the kernel): the reason.
    pub fixed: Option<&'static str>,
}

/// A declared scalar and where the capture found it.
pub struct OpScalar {
    pub decl: ScalarDecl,
    /// (launch index, byte offset in that launch's parameters).
    pub sites: Vec<(u32, u32)>,
    /// Launches the operator recorded while the declaration was open.
    pub launches: u32,
    /// Why a replay may not change it (None: it may).
    pub refused: Option<String>,
}

impl OpScalar {
    pub fn new(decl: ScalarDecl) -> OpScalar {
        let refused = decl.fixed.map(|r| r.to_string());
        OpScalar { decl, sites: Vec::new(), launches: 0, refused }
    }

    /// A launch recorded in the declaration's scope, with its parameters'
    /// bytes and fields (name, offset, size); `launch` is its index.
    pub fn note_launch(&mut self, launch: u32, params: &[u8], fields: &[(&'static str, usize, usize)]) {
        self.launches += 1;
        let Some(&(_, offset, size)) = fields.iter().find(|f| f.0 == self.decl.field) else { return };
        let at = offset + 4 * self.decl.word as usize;
        if at + 4 > offset + size || at + 4 > params.len() {
            return;
        }
        // Only where it holds the value the operator passed: a field of the
        // same name set to something else (a pass that applies it later) is
        // not this argument.
        let held = u32::from_le_bytes(params[at..at + 4].try_into().unwrap());
        if held == (self.decl.encode)(self.decl.captured) {
            self.sites.push((launch, at as u32));
        }
    }

    /// The declaration's scope ended: decide whether replays may change it.
    pub fn close(&mut self) {
        if self.refused.is_some() {
            return;
        }
        let name = self.decl.name;
        if self.launches > 0 && self.sites.is_empty() {
            self.refused =
                Some(format!("the kernels chosen for {name} = {} do not take it as a parameter", self.decl.captured));
        } else if self.decl.one_launch && self.sites.windows(2).any(|w| w[0].0 != w[1].0) {
            self.refused =
                Some(format!("{name} = {} was found in several launches of the operator", self.decl.captured));
        }
    }

    /// Check a replay's value; returns the bytes to write at each site.
    pub fn encode(&self, index: u32, value: f64) -> Result<u32> {
        let d = &self.decl;
        if let Some(why) = &self.refused {
            bail!(InvalidArgument, "replay scalar {index} ({}): a replay cannot change it: {why}", d.name);
        }
        if value.is_nan() || value.is_infinite() {
            if d.finite {
                bail!(InvalidArgument, "replay scalar {index} ({}): {value} is not a finite value", d.name);
            }
            return Ok((d.encode)(value));
        }
        if value < d.min || value > d.max || (d.integral && value.fract() != 0.0) {
            bail!(
                OutOfRange,
                "replay scalar {index} ({}): {value} is outside what the captured work allows ({}{} to {})",
                d.name,
                if d.integral { "integers from " } else { "" },
                d.min,
                d.max
            );
        }
        Ok((d.encode)(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(one_launch: bool) -> ScalarDecl {
        ScalarDecl {
            name: "alpha",
            field: "alpha",
            word: 0,
            captured: 2.0,
            encode: Arc::new(|v| (v as f32).to_bits()),
            min: 0.0,
            max: 8.0,
            integral: true,
            finite: true,
            one_launch,
            fixed: None,
        }
    }

    /// Parameters (alpha: f32, n: u32) holding `alpha`.
    fn params(alpha: f32) -> ([u8; 8], Vec<(&'static str, usize, usize)>) {
        let mut p = [0u8; 8];
        p[..4].copy_from_slice(&alpha.to_le_bytes());
        p[4..].copy_from_slice(&7u32.to_le_bytes());
        (p, vec![("alpha", 0, 4), ("n", 4, 4)])
    }

    #[test]
    fn found_where_the_field_holds_the_value() {
        let mut s = OpScalar::new(decl(false));
        let (p, f) = params(2.0);
        s.note_launch(3, &p, &f);
        let (q, f2) = params(1.0); // a pass that applies another alpha
        s.note_launch(4, &q, &f2);
        s.close();
        assert!(s.refused.is_none());
        assert_eq!(s.sites, vec![(3, 0)]);
        assert_eq!(s.encode(0, 5.0).unwrap(), 5.0f32.to_bits());
        assert!(s.encode(0, 9.0).is_err() && s.encode(0, 2.5).is_err() && s.encode(0, f64::NAN).is_err());
    }

    #[test]
    fn refused_when_not_a_parameter_or_ambiguous() {
        let mut s = OpScalar::new(decl(false));
        let (p, f) = params(1.0);
        s.note_launch(0, &p, &f);
        s.close();
        assert!(s.refused.is_some() && s.encode(0, 2.0).is_err());

        let mut s = OpScalar::new(decl(true));
        let (p, f) = params(2.0);
        s.note_launch(0, &p, &f);
        s.note_launch(1, &p, &f);
        s.close();
        assert!(s.refused.is_some());

        // No launch at all (an empty tensor): nothing to write, allowed.
        let mut s = OpScalar::new(decl(true));
        s.close();
        assert!(s.refused.is_none() && s.encode(0, 4.0).is_ok());
    }
}
