//! The JavaScript API (wasm-bindgen): `Device`, `Tensor`, and operators as
//! device methods that allocate their output. Errors become exceptions
//! carrying the library's message; tensors are freed by `release()`, or by
//! the `FinalizationRegistry` wasm-bindgen's `--weak-refs` output installs.

use super::read::read_bytes;
use crate::error::Error;
use crate::ops::elementwise::{self, BinaryOp, UnaryOp};
use crate::ops::reduce::{self, ReduceOp};
use crate::ops::tensor::{broadcast_shapes, contiguous_strides, numel, DType, Tensor as View};
use crate::ops::{gemm as matmul, norm::softmax};
use crate::runtime::buffer::{Buffer, Usage};
use crate::runtime::device::{Device as Core, DeviceOptions};
use crate::runtime::stream::StreamShared;
use std::sync::Arc;
use wasm_bindgen::prelude::*;

pub(super) fn js(e: Error) -> JsError {
    JsError::new(&e.to_string())
}

fn invalid(msg: String) -> JsError {
    js(Error::InvalidArgument(msg))
}

/// A WebGPU device with the library's caches and one command stream.
#[wasm_bindgen]
pub struct Device {
    pub(super) core: Arc<Core>,
    pub(super) stream: Arc<StreamShared>,
}

/// A tensor view: shape, strides and offset (in elements) over a buffer.
#[wasm_bindgen]
pub struct Tensor {
    buffer: Option<Arc<Buffer>>,
    pub(super) dtype: DType,
    pub(super) shape: Vec<usize>,
    strides: Vec<isize>,
    offset: usize,
}

impl Tensor {
    pub(super) fn core_view(&self) -> Result<View<'_>, JsError> {
        let buffer = self.buffer.as_deref().ok_or_else(|| invalid("the tensor was released".into()))?;
        let v = View {
            buffer,
            dtype: self.dtype,
            shape: self.shape.clone(),
            strides: self.strides.clone(),
            offset: self.offset,
        };
        v.validate("tensor").map_err(js)?;
        Ok(v)
    }
}

fn dtype_of(name: &str) -> Result<DType, JsError> {
    match name {
        "f32" => Ok(DType::F32),
        "f16" => Ok(DType::F16),
        "i32" => Ok(DType::I32),
        "u32" => Ok(DType::U32),
        _ => Err(invalid(format!("unknown dtype \"{name}\" (f32, f16, i32, u32)"))),
    }
}

fn binary_op(name: &str) -> Result<BinaryOp, JsError> {
    use BinaryOp::*;
    Ok(match name {
        "add" => Add,
        "sub" => Sub,
        "mul" => Mul,
        "div" => Div,
        "pow" => Pow,
        "maximum" => Maximum,
        "minimum" => Minimum,
        "eq" => Eq,
        "ne" => Ne,
        "lt" => Lt,
        "le" => Le,
        "gt" => Gt,
        "ge" => Ge,
        _ => return Err(invalid(format!("unknown binary op \"{name}\""))),
    })
}

fn unary_op(name: &str) -> Result<UnaryOp, JsError> {
    use UnaryOp::*;
    Ok(match name {
        "neg" => Neg,
        "abs" => Abs,
        "exp" => Exp,
        "log" => Log,
        "sqrt" => Sqrt,
        "rsqrt" => Rsqrt,
        "sin" => Sin,
        "cos" => Cos,
        "tanh" => Tanh,
        "sigmoid" => Sigmoid,
        "relu" => Relu,
        "gelu" => GeluErf,
        "gelu_tanh" => GeluTanh,
        "silu" => Silu,
        "relu6" => Relu6,
        "hardswish" => Hardswish,
        _ => return Err(invalid(format!("unknown unary op \"{name}\""))),
    })
}

fn reduce_op(name: &str) -> Result<ReduceOp, JsError> {
    Ok(match name {
        "sum" => ReduceOp::Sum,
        "mean" => ReduceOp::Mean,
        "max" => ReduceOp::Max,
        "min" => ReduceOp::Min,
        "prod" => ReduceOp::Prod,
        "var" => ReduceOp::Var { unbiased: true },
        "std" => ReduceOp::Std { unbiased: true },
        _ => return Err(invalid(format!("unknown reduction \"{name}\""))),
    })
}

pub(super) fn usizes(v: &[u32]) -> Vec<usize> {
    v.iter().map(|&d| d as usize).collect()
}

#[wasm_bindgen]
impl Device {
    /// Open the first WebGPU adapter (`navigator.gpu`). Rejects where the
    /// environment has no WebGPU.
    #[wasm_bindgen(js_name = create, unchecked_return_type = "Promise<Device>")]
    pub fn create() -> js_sys::Promise {
        wasm_bindgen_futures::future_to_promise(async {
            let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
            desc.backends = wgpu::Backends::BROWSER_WEBGPU;
            let instance = wgpu::Instance::new(desc);
            let adapter = instance
                .request_adapter(&wgpu::RequestAdapterOptions::default())
                .await
                .map_err(|e| JsValue::from(js(Error::NotFound(format!("no WebGPU adapter: {e}")))))?;
            let core = Core::create_web(&adapter, DeviceOptions::default()).await.map_err(|e| JsValue::from(js(e)))?;
            let stream = StreamShared::create(&core).map_err(|e| JsValue::from(js(e)))?;
            Ok(Device { core, stream }.into())
        })
    }

    /// The adapter's name.
    #[wasm_bindgen(getter, js_name = adapterName)]
    pub fn adapter_name(&self) -> String {
        self.core.adapter.info.name.clone()
    }

    /// The optional WebGPU features the device has on (`shader-f16`, `subgroups`).
    #[wasm_bindgen(getter)]
    pub fn features(&self) -> Vec<String> {
        let f = self.core.features;
        let mut v = Vec::new();
        if f.contains(wgpu::Features::SHADER_F16) {
            v.push("shader-f16".to_string());
        }
        if f.contains(wgpu::Features::SUBGROUP) {
            v.push("subgroups".to_string());
        }
        v
    }

    pub(super) fn alloc(&self, dtype: DType, shape: Vec<usize>) -> Result<Tensor, JsError> {
        let n = numel(&shape);
        let bytes = (n.max(1) * dtype.size()).div_ceil(4) * 4;
        let usage = Usage { storage: true, uniform: false, indirect: false };
        let buffer = Buffer::create(&self.core, bytes as u64, usage).map_err(js)?;
        let strides = contiguous_strides(&shape);
        Ok(Tensor { buffer: Some(buffer), dtype, shape, strides, offset: 0 })
    }

    fn upload(&self, dtype: DType, shape: &[u32], bytes: &[u8]) -> Result<Tensor, JsError> {
        let shape = usizes(shape);
        let n = numel(&shape);
        if n * dtype.size() != bytes.len() {
            return Err(js(Error::ShapeMismatch(format!(
                "shape {shape:?} has {n} elements, the data {}",
                bytes.len() / dtype.size()
            ))));
        }
        let t = self.alloc(dtype, shape)?;
        let mut padded = bytes.to_vec();
        padded.resize(bytes.len().div_ceil(4) * 4, 0);
        t.buffer.as_ref().unwrap().write(0, &padded).map_err(js)?;
        Ok(t)
    }

    /// A new f32 tensor of `shape` holding `data` (row-major).
    #[wasm_bindgen(js_name = tensorF32)]
    pub fn tensor_f32(&self, data: &[f32], shape: &[u32]) -> Result<Tensor, JsError> {
        self.upload(DType::F32, shape, bytemuck::cast_slice(data))
    }

    /// A new i32 tensor of `shape` holding `data`.
    #[wasm_bindgen(js_name = tensorI32)]
    pub fn tensor_i32(&self, data: &[i32], shape: &[u32]) -> Result<Tensor, JsError> {
        self.upload(DType::I32, shape, bytemuck::cast_slice(data))
    }

    /// A new u32 tensor of `shape` holding `data`.
    #[wasm_bindgen(js_name = tensorU32)]
    pub fn tensor_u32(&self, data: &[u32], shape: &[u32]) -> Result<Tensor, JsError> {
        self.upload(DType::U32, shape, bytemuck::cast_slice(data))
    }

    /// A new f16 tensor from raw half-precision bits; refused (at the first
    /// operator) where the adapter lacks `shader-f16`.
    #[wasm_bindgen(js_name = tensorF16Bits)]
    pub fn tensor_f16_bits(&self, bits: &[u16], shape: &[u32]) -> Result<Tensor, JsError> {
        self.upload(DType::F16, shape, bytemuck::cast_slice(bits))
    }

    /// A new tensor of `shape` and `dtype` (f32, f16, i32, u32) holding zeros.
    pub fn zeros(&self, shape: &[u32], dtype: &str) -> Result<Tensor, JsError> {
        self.alloc(dtype_of(dtype)?, usizes(shape))
    }

    /// Elementwise `a op b` with NumPy broadcasting. `op`: add, sub, mul,
    /// div, pow, maximum, minimum, eq, ne, lt, le, gt, ge (comparisons give u32).
    pub fn binary(&self, op: &str, a: &Tensor, b: &Tensor) -> Result<Tensor, JsError> {
        let op = binary_op(op)?;
        let (av, bv) = (a.core_view()?, b.core_view()?);
        let shape = broadcast_shapes(&[&av.shape, &bv.shape]).map_err(js)?;
        let dtype = if op.is_comparison() { DType::U32 } else { av.dtype };
        let out = self.alloc(dtype, shape)?;
        elementwise::binary(&self.stream, op, &av, &bv, &out.core_view()?).map_err(js)?;
        Ok(out)
    }

    /// Elementwise `op(a)`: neg, abs, exp, log, sqrt, rsqrt, sin, cos, tanh,
    /// sigmoid, relu, gelu, gelu_tanh, silu, relu6, hardswish.
    pub fn unary(&self, op: &str, a: &Tensor) -> Result<Tensor, JsError> {
        let op = unary_op(op)?;
        let av = a.core_view()?;
        let out = self.alloc(av.dtype, av.shape.clone())?;
        elementwise::unary(&self.stream, op, &av, &out.core_view()?).map_err(js)?;
        Ok(out)
    }

    /// NumPy matmul (batched, broadcast batch dims, 1-D operands as vectors).
    pub fn matmul(&self, a: &Tensor, b: &Tensor) -> Result<Tensor, JsError> {
        let (av, bv) = (a.core_view()?, b.core_view()?);
        let shape = matmul_shape(&av.shape, &bv.shape).map_err(js)?;
        let out = self.alloc(av.dtype, shape)?;
        matmul::matmul(&self.stream, &av, &bv, &out.core_view()?).map_err(js)?;
        Ok(out)
    }

    /// Reduce over `axes` (negative counts from the end; empty: all):
    /// sum, mean, max, min, prod, var, std (var and std unbiased).
    pub fn reduce(&self, op: &str, a: &Tensor, axes: &[i32], keepdim: bool) -> Result<Tensor, JsError> {
        let op = reduce_op(op)?;
        let av = a.core_view()?;
        let shape = reduced_shape(&av.shape, axes, keepdim)?;
        let out = self.alloc(av.dtype, shape)?;
        reduce::reduce(&self.stream, op, &av, axes, keepdim, &out.core_view()?).map_err(js)?;
        Ok(out)
    }

    /// Softmax (or log-softmax) along `axis`.
    pub fn softmax(&self, a: &Tensor, axis: i32, log: bool) -> Result<Tensor, JsError> {
        let av = a.core_view()?;
        let out = self.alloc(av.dtype, av.shape.clone())?;
        softmax::softmax(&self.stream, &av, axis, log, &out.core_view()?).map_err(js)?;
        Ok(out)
    }

    /// Release the device's GPU memory now; later calls fail with "device lost".
    pub fn destroy(&self) {
        self.core.destroy();
    }
}

fn matmul_shape(a: &[usize], b: &[usize]) -> crate::Result<Vec<usize>> {
    if a.is_empty() || b.is_empty() {
        return Err(Error::ShapeMismatch("matmul: operands must have at least one dimension".into()));
    }
    let a2: Vec<usize> = if a.len() == 1 { vec![1, a[0]] } else { a.to_vec() };
    let b2: Vec<usize> = if b.len() == 1 { vec![b[0], 1] } else { b.to_vec() };
    let (m, n) = (a2[a2.len() - 2], b2[b2.len() - 1]);
    let mut shape = broadcast_shapes(&[&a2[..a2.len() - 2], &b2[..b2.len() - 2]])?;
    if a.len() > 1 {
        shape.push(m);
    }
    if b.len() > 1 {
        shape.push(n);
    }
    Ok(shape)
}

fn reduced_shape(shape: &[usize], axes: &[i32], keepdim: bool) -> Result<Vec<usize>, JsError> {
    let r = shape.len() as i32;
    let mut gone = vec![axes.is_empty(); shape.len()];
    for &a in axes {
        let i = if a < 0 { a + r } else { a };
        if i < 0 || i >= r {
            return Err(js(Error::InvalidArgument(format!("axis {a} is out of range for rank {r}"))));
        }
        gone[i as usize] = true;
    }
    Ok(shape
        .iter()
        .zip(&gone)
        .filter_map(|(&d, &g)| match (g, keepdim) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect())
}

#[wasm_bindgen]
impl Tensor {
    #[wasm_bindgen(getter)]
    pub fn shape(&self) -> Vec<u32> {
        self.shape.iter().map(|&d| d as u32).collect()
    }

    #[wasm_bindgen(getter)]
    pub fn dtype(&self) -> String {
        self.dtype.wgsl().to_string()
    }

    /// Another view of the same memory: `shape`, `strides` (in elements,
    /// may be zero or negative) and `offset` (in elements), checked against
    /// the buffer.
    pub fn view(&self, shape: &[u32], strides: &[i32], offset: u32) -> Result<Tensor, JsError> {
        if shape.len() != strides.len() {
            return Err(invalid(format!("{} dims but {} strides", shape.len(), strides.len())));
        }
        let t = Tensor {
            buffer: self.buffer.clone(),
            dtype: self.dtype,
            shape: usizes(shape),
            strides: strides.iter().map(|&s| s as isize).collect(),
            offset: offset as usize,
        };
        t.core_view()?;
        Ok(t)
    }

    /// The elements in row-major order, after all recorded work: a
    /// Float32Array (f32), Int32Array (i32), Uint32Array (u32) or
    /// Uint16Array of half bits (f16). Strided views are read through a
    /// contiguous copy.
    #[wasm_bindgen(unchecked_return_type = "Promise<Float32Array | Int32Array | Uint32Array | Uint16Array>")]
    pub fn read(&self) -> js_sys::Promise {
        let prepared = self.contiguous();
        wasm_bindgen_futures::future_to_promise(async move {
            let (buffer, dtype, n, offset, _keep) = prepared.map_err(JsValue::from)?;
            let start = (offset * dtype.size()) as u64;
            let bytes = (n * dtype.size()) as u64;
            let (lo, hi) = (start / 4 * 4, (start + bytes).div_ceil(4) * 4);
            let raw = read_bytes(&buffer, lo, hi - lo).await.map_err(|e| JsValue::from(js(e)))?;
            let raw = &raw[(start - lo) as usize..][..bytes as usize];
            Ok(match dtype {
                DType::F32 => {
                    js_sys::Float32Array::from(bytemuck::pod_collect_to_vec::<u8, f32>(raw).as_slice()).into()
                }
                DType::I32 => js_sys::Int32Array::from(bytemuck::pod_collect_to_vec::<u8, i32>(raw).as_slice()).into(),
                DType::U32 => js_sys::Uint32Array::from(bytemuck::pod_collect_to_vec::<u8, u32>(raw).as_slice()).into(),
                _ => js_sys::Uint16Array::from(bytemuck::pod_collect_to_vec::<u8, u16>(raw).as_slice()).into(),
            })
        })
    }

    /// Free the memory now (the view and every other view of the same
    /// memory stay valid until they are released or collected too).
    pub fn release(&mut self) {
        self.buffer = None;
    }
}

type Prepared = (Arc<Buffer>, DType, usize, usize, Option<Tensor>);

impl Tensor {
    /// The buffer, dtype, element count and offset to read: this view's
    /// own where it is contiguous, else a contiguous copy recorded now.
    fn contiguous(&self) -> Result<Prepared, JsError> {
        let v = self.core_view()?;
        let buffer = self.buffer.clone().unwrap();
        if v.is_contiguous() {
            return Ok((buffer, self.dtype, v.numel(), self.offset, None));
        }
        let stream = StreamShared::create(&buffer.device).map_err(js)?;
        let n = v.numel();
        let bytes = (n.max(1) * self.dtype.size()).div_ceil(4) * 4;
        let usage = Usage { storage: true, uniform: false, indirect: false };
        let copy = Buffer::create(&buffer.device, bytes as u64, usage).map_err(js)?;
        let out = Tensor {
            buffer: Some(copy.clone()),
            dtype: self.dtype,
            shape: self.shape.clone(),
            strides: contiguous_strides(&self.shape),
            offset: 0,
        };
        crate::ops::movement::copy(&stream, &v, &out.core_view()?).map_err(js)?;
        // Submit now: the stream is dropped here, and reads submit only
        // the streams still alive.
        stream.flush().map_err(js)?;
        Ok((copy, self.dtype, n, 0, Some(out)))
    }
}
