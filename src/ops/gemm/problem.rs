//! One GEMM as the planner sees it, decoded once from the views: sizes,
//! each operand's two inner strides, offset and batch strides over the
//! broadcast batch shape, dtypes, alpha, beta and the row bias. Planning
//! reads nothing else, so every route decides from the same numbers.

use crate::bail;
use crate::error::Result;
use crate::ops::gemm::epilogue::Epilogue;
use crate::ops::gemm::RowBias;
use crate::ops::spec::{self, Sharing};
use crate::ops::tensor::{
    broadcast_shapes, broadcast_strides, check_kernel_counts, contiguous_strides, expect_shape, numel, DType, Tensor,
};
use crate::runtime::stream::StreamShared;

/// An operand's last two dims as a matrix over the batch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matrix {
    pub rows: usize,
    pub cols: usize,
    /// Strides of the rows and the columns.
    pub strides: [isize; 2],
    /// The offset kernels take (from where the view is bound).
    pub offset: u32,
    /// Strides over the broadcast batch shape (0 where broadcast).
    pub batch_strides: Vec<isize>,
}

impl Matrix {
    /// A dense row-major matrix (batch strides for `batch` matrices after it).
    pub fn row_major(rows: usize, cols: usize, batch: &[usize]) -> Matrix {
        let mut shape = batch.to_vec();
        shape.extend([rows, cols]);
        let strides = contiguous_strides(&shape);
        let r = batch.len();
        Matrix { rows, cols, strides: [strides[r], strides[r + 1]], offset: 0, batch_strides: strides[..r].to_vec() }
    }

    /// The transposed matrix (a view: strides swapped).
    pub fn t(&self) -> Matrix {
        Matrix { rows: self.cols, cols: self.rows, strides: [self.strides[1], self.strides[0]], ..self.clone() }
    }

    /// Which dim has unit stride, for the tuner's shape class: `r` the
    /// columns, `c` the rows, `s` neither.
    pub fn unit_char(&self) -> char {
        match self.strides {
            [_, 1] => 'r',
            [1, _] => 'c',
            _ => 's',
        }
    }
}

/// `C = alpha * A B + beta * C (+ bias[m])` over a batch, A (M x K), B (K x N).
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// The broadcast batch shape and its element count.
    pub batch: Vec<usize>,
    pub batch_count: usize,
    /// A's and B's own batch shapes (before broadcasting).
    pub a_batch: Vec<usize>,
    pub b_batch: Vec<usize>,
    pub a: Matrix,
    pub b: Matrix,
    /// C as the kernels write it (contiguous f32 scratch for a bf16 C).
    pub c: Matrix,
    /// A's and B's dtype.
    pub dtype: DType,
    /// The dtype the kernels write (f32 for a bf16 C).
    pub out: DType,
    /// C is bf16: the product goes to f32 scratch, rounded once into C.
    pub c_bf16: bool,
    pub alpha: f32,
    pub beta: f32,
    /// The row bias's stride, where there is one.
    pub bias: Option<isize>,
    /// What is applied before C is stored (epilogue.rs; none for a plain GEMM).
    pub epilogue: Epilogue,
}

impl Problem {
    /// The problem of prepared views a (..., M, K), b (..., K, N), c
    /// (..., M, N), dtypes and devices checked: validated here (shapes,
    /// output sharing, sizes); None where C is empty (nothing to do).
    pub fn of(
        stream: &StreamShared,
        (alpha, beta): (f32, f32),
        a: &Tensor,
        b: &Tensor,
        c: &Tensor,
        bias: Option<&RowBias>,
    ) -> Result<Option<Problem>> {
        let dev = &stream.device;
        dev.check_alive()?;
        let (ra, rb) = (a.rank(), b.rank());
        let (m, k) = (a.shape[ra - 2], a.shape[ra - 1]);
        let (kb, n) = (b.shape[rb - 2], b.shape[rb - 1]);
        if k != kb {
            bail!(ShapeMismatch, "gemm: inner dims differ: op(a) is {:?} and op(b) is {:?}", a.shape, b.shape);
        }
        let batch = broadcast_shapes(&[&a.shape[..ra - 2], &b.shape[..rb - 2]])?;
        let mut expected = batch.clone();
        expected.extend([m, n]);
        expect_shape(c, &expected, "gemm: c")?;
        // beta != 0 reads C through the output's own binding, so C is no input here.
        let mut inputs = vec![("a", a), ("b", b)];
        if let Some(bb) = bias {
            inputs.push(("the bias", bb.tensor));
        }
        spec::check_output("gemm", c, &inputs, Sharing::Separate)?;
        // M and N are dims of c, which has no zero strides; K may be broadcast.
        check_kernel_counts("gemm", &[("the inner dim K", k)])?;
        let batch_count = numel(&batch);
        if m == 0 || n == 0 || batch_count == 0 {
            return Ok(None);
        }
        let max_dim = dev.limits.max_compute_workgroups_per_dimension as usize;
        if batch_count > max_dim {
            bail!(
                TooLarge,
                "gemm: {batch_count} batch matrices exceed this adapter's {max_dim} workgroups per dimension"
            );
        }
        let c_bf16 = c.dtype == DType::BF16;
        let c_matrix = if c_bf16 {
            Matrix::row_major(m, n, &batch)
        } else {
            let r = batch.len();
            Matrix {
                rows: m,
                cols: n,
                strides: [c.strides[r], c.strides[r + 1]],
                offset: c.bound_offset(),
                batch_strides: c.strides[..r].to_vec(),
            }
        };
        Ok(Some(Problem {
            m,
            n,
            k,
            batch_count,
            a_batch: a.shape[..ra - 2].to_vec(),
            b_batch: b.shape[..rb - 2].to_vec(),
            a: operand(a, &batch),
            b: operand(b, &batch),
            c: c_matrix,
            batch,
            dtype: a.dtype,
            out: if c_bf16 { DType::F32 } else { c.dtype },
            c_bf16,
            alpha,
            beta,
            bias: bias.map(|bb| bb.stride),
            epilogue: Epilogue::default(),
        }))
    }

    /// A plain product (alpha 1, beta 0, no bias) of dense row-major
    /// operands, for tables of routes; change fields to describe others.
    pub fn dense(m: usize, n: usize, k: usize, dtype: DType) -> Problem {
        Problem {
            m,
            n,
            k,
            batch: Vec::new(),
            batch_count: 1,
            a_batch: Vec::new(),
            b_batch: Vec::new(),
            a: Matrix::row_major(m, k, &[]),
            b: Matrix::row_major(k, n, &[]),
            c: Matrix::row_major(m, n, &[]),
            dtype,
            out: dtype,
            c_bf16: false,
            alpha: 1.0,
            beta: 0.0,
            bias: None,
            epilogue: Epilogue::default(),
        }
    }

    /// The product of this problem without its epilogue, into contiguous
    /// f32 scratch (what a route that does not fuse the epilogue records
    /// before the epilogue's pass).
    pub fn into_scratch(&self) -> Problem {
        Problem {
            c: Matrix::row_major(self.m, self.n, &self.batch),
            out: DType::F32,
            c_bf16: false,
            alpha: 1.0,
            beta: 0.0,
            bias: None,
            epilogue: Epilogue::default(),
            ..self.clone()
        }
    }

    /// The same product over `batch` matrices, each operand with its own
    /// (dense, row-major) batch shape, broadcast to `batch`.
    pub fn batched(mut self, a_batch: &[usize], b_batch: &[usize]) -> Problem {
        self.batch = crate::ops::tensor::broadcast_shapes(&[a_batch, b_batch]).expect("broadcastable batch shapes");
        self.batch_count = numel(&self.batch);
        let own = |own: &[usize], rows, cols| {
            let x = Matrix::row_major(rows, cols, own);
            Matrix { batch_strides: broadcast_own(own, &x.batch_strides, &self.batch), ..x }
        };
        self.a = own(a_batch, self.m, self.k);
        self.b = own(b_batch, self.k, self.n);
        self.c = Matrix::row_major(self.m, self.n, &self.batch);
        (self.a_batch, self.b_batch) = (a_batch.to_vec(), b_batch.to_vec());
        self
    }

    /// C's elements over the batch.
    pub fn outputs(&self) -> usize {
        self.batch_count * self.m * self.n
    }

    /// 2 M N K over the batch.
    pub fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64 * self.batch_count as f64
    }
}

/// An operand view's matrix, its batch strides over `batch`.
fn operand(t: &Tensor, batch: &[usize]) -> Matrix {
    let r = t.rank() - 2;
    let own = Tensor { shape: t.shape[..r].to_vec(), strides: t.strides[..r].to_vec(), ..t.clone() };
    Matrix {
        rows: t.shape[r],
        cols: t.shape[r + 1],
        strides: [t.strides[r], t.strides[r + 1]],
        offset: t.bound_offset(),
        batch_strides: broadcast_strides(&own, batch),
    }
}

/// Strides `strides` of a batch shape `own` over the broadcast shape
/// `batch` (0 where `own` has no dim or a dim of 1), as `broadcast_strides`.
pub fn broadcast_own(own: &[usize], strides: &[isize], batch: &[usize]) -> Vec<isize> {
    let pad = batch.len() - own.len();
    (0..batch.len()).map(|i| if i < pad || own[i - pad] == 1 { 0 } else { strides[i - pad] }).collect()
}
