//! multi

pub mod collective;
pub mod peer;
