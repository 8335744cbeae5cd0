//! Choices by measurement: an operator with several kernel variants for a
//! shape describes the choice (`Choice`: a name, a shape class, candidates
//! with the heuristic's pick first) and asks `pick`. With the device's
//! tuner on and a class not seen before, `pick` records and times each
//! distinct candidate on the call's own operands (see
//! `runtime::autotune_timer`), keeps the fastest for the class, and returns
//! it; the operator then records that candidate as usual. Otherwise it
//! returns the stored choice, or the heuristic's.
//!
//! A candidate's `run` must write only the call's outputs (and scratch) and
//! record its whole sequence (every pass), so that running it again gives
//! the same result. Calls where that does not hold (an output also read,
//! or sharing a buffer with an input) set `rerunnable: false` and are never
//! timed.

use crate::error::{Error, Result};
use crate::runtime::autotune::TuneMode;
use crate::runtime::autotune_timer::{time, Clock};
use crate::runtime::stream::StreamShared;

pub struct Candidate<C> {
    /// Its name in the tuning file (a token: no spaces).
    pub name: &'static str,
    pub value: C,
    /// What the candidate launches for this call; candidates with equal
    /// plans are the same work, and only the first of them is timed.
    pub plan: u64,
}

pub struct Choice<C> {
    /// `operator.what`, e.g. `reduce_rows.loads`.
    pub name: &'static str,
    /// The shape class (see `class`): calls of one class share the choice.
    pub class: String,
    /// The heuristic's pick first.
    pub candidates: Vec<Candidate<C>>,
    /// An environment variable fixes the choice: never tuned.
    pub fixed: bool,
    /// Running the call again gives the same result (see the module doc).
    pub rerunnable: bool,
}

/// A size's bucket in a shape class: the next power of two.
pub fn bucket(n: usize) -> usize {
    n.max(1).next_power_of_two()
}

/// The candidate to record for this call (see the module doc): `heuristic`
/// (the value of `choice`'s first candidate) where the tuner is off, else
/// as `choice()` describes. Blocks while candidates are timed; errors of a
/// lost device or a timeout are returned.
pub fn pick<C: Copy>(
    stream: &StreamShared,
    heuristic: C,
    choice: impl FnOnce() -> Choice<C>,
    run: impl Fn(C) -> Result<()>,
) -> Result<C> {
    let tuner = &stream.device.tuner;
    if tuner.mode == TuneMode::Off {
        return Ok(heuristic);
    }
    let choice = choice();
    let heuristic = choice.candidates[0].value;
    if choice.fixed {
        return Ok(heuristic);
    }
    let mut distinct: Vec<&Candidate<C>> = Vec::new();
    for c in &choice.candidates {
        if !distinct.iter().any(|d| d.plan == c.plan) {
            distinct.push(c);
        }
    }
    if distinct.len() < 2 {
        return Ok(heuristic);
    }
    let stored = || {
        let name = tuner.lookup(choice.name, &choice.class)?;
        choice.candidates.iter().find(|c| c.name == name).map(|c| c.value)
    };
    if let Some(value) = stored() {
        tuner.count_reuse();
        return Ok(value);
    }
    // A capture records candidates' runs into the graph, and cannot wait on them.
    if tuner.mode == TuneMode::Cached || !choice.rerunnable || stream.is_capturing() {
        return Ok(heuristic);
    }
    let _timing = tuner.timing_lock();
    // Another thread may have timed this class while this one waited.
    if let Some(value) = stored() {
        tuner.count_reuse();
        return Ok(value);
    }
    let clock = Clock::of(stream);
    let mut times: Vec<(&str, f64)> = Vec::new();
    let mut best: Option<(f64, &Candidate<C>)> = None;
    for c in distinct {
        match time(stream, clock, &|| run(c.value)) {
            Ok(ms) => {
                times.push((c.name, ms));
                if best.is_none_or(|(b, _)| ms < b) {
                    best = Some((ms, c));
                }
            }
            Err(e @ (Error::DeviceLost(_) | Error::Timeout(_))) => return Err(e),
            // A candidate that cannot be recorded here is not chosen; the
            // heuristic's own failure is reported by the call's recording.
            Err(_) => {}
        }
    }
    let Some((_, best)) = best else {
        return Ok(heuristic);
    };
    tuner.store(choice.name, &choice.class, best.name, &times);
    Ok(best.value)
}
