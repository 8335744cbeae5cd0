//! What the reduction front door and its kernels' files share: the
//! operation, the uniform of reduce.wgsl and the coalesced layout the
//! column and run kernels plan from.

use crate::ops::spec::uniform::uniform;

uniform! {
    /// The uniform of reduce.wgsl (both passes).
    pub struct ReduceParams = "Params" {
        pub k_total: u32,
        pub rows: u32,
        pub chunks: u32,
        pub in_offset: u32,
        pub out_offset: u32,
        pub rows_per_y: u32,
        pub kept_rank: u32,
        pub red_rank: u32,
        pub unbiased: u32,
        pub k_total_f: f32,
        /// Always 0 (reduce.wgsl's opaque()).
        pub zero: u32,
        pub single_pass: u32,
        pub kept_shape: [[u32; 4]; 2],
        pub kept_in: [[i32; 4]; 2],
        pub kept_out: [[i32; 4]; 2],
        pub red_shape: [[u32; 4]; 2],
        pub red_in: [[i32; 4]; 2],
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    Sum,
    Mean,
    Max,
    Min,
    Prod,
    Argmax,
    Argmin,
    /// Variance; `unbiased` divides by n - 1 instead of n.
    Var {
        unbiased: bool,
    },
    Std {
        unbiased: bool,
    },
}

impl ReduceOp {
    /// The OP code of shaders/reduce.wgsl.
    pub(crate) fn code(self) -> u32 {
        match self {
            ReduceOp::Sum => 0,
            ReduceOp::Mean => 1,
            ReduceOp::Max => 2,
            ReduceOp::Min => 3,
            ReduceOp::Prod => 4,
            ReduceOp::Argmax => 5,
            ReduceOp::Argmin => 6,
            ReduceOp::Var { .. } => 7,
            ReduceOp::Std { .. } => 8,
        }
    }
    pub(crate) fn is_var(self) -> bool {
        matches!(self, ReduceOp::Var { .. } | ReduceOp::Std { .. })
    }
    pub(crate) fn is_arg(self) -> bool {
        matches!(self, ReduceOp::Argmax | ReduceOp::Argmin)
    }
    pub(crate) fn floats_only(self) -> bool {
        matches!(self, ReduceOp::Mean | ReduceOp::Var { .. } | ReduceOp::Std { .. })
    }
    pub(crate) fn needs_elements(self) -> bool {
        matches!(self, ReduceOp::Max | ReduceOp::Min | ReduceOp::Argmax | ReduceOp::Argmin)
    }
}

/// The reduction's layout after coalescing (as `reduce` computes it): kept
/// dims with their input and output strides, reduced dims (largest stride
/// first) with their input strides.
pub struct Layout<'a> {
    pub kept_shape: &'a [usize],
    pub kept_in: &'a [isize],
    pub kept_out: &'a [isize],
    pub red_shape: &'a [usize],
    pub red_in: &'a [isize],
}

/// A reduction's input generated from an elementwise expression
/// (ops::expr::reduce): the elements of a dense virtual tensor, computed by
/// a generated input stage as reduce.wgsl's kernels read them. The reduce
/// front door plans as for that tensor and records through this.
pub trait FusedInput {
    /// Record `entry` of the generated module for the type slots `types`
    /// (T, ACC, OUT) with the overrides OP = `op` and LANES = `lanes` (the
    /// kernels that do not use LANES get 4), the reduce uniform `params`,
    /// the other bindings `args` (partials, out) and the grid `groups`.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &self,
        stream: &crate::runtime::stream::StreamShared,
        entry: &'static str,
        types: [crate::ops::tensor::DType; 3],
        op: u32,
        lanes: u32,
        params: &ReduceParams,
        args: &[crate::ops::spec::Arg],
        groups: [u32; 3],
    ) -> crate::error::Result<()>;
}
