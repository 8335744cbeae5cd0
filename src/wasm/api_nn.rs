//! More of the JavaScript API: convolution and pooling, norms, indexing and
//! random numbers. Where the operands cannot give an output shape, the
//! output is a one-element placeholder and the operator's own checks throw
//! the library's message.

use super::api::{js, usizes, Device, Tensor};
use crate::ops::conv::{self, Conv2dParams};
use crate::ops::pool::{self, Pool2dParams, PoolKind};
use crate::ops::random::{self, Distribution};
use crate::ops::{movement::gather, norm};
use wasm_bindgen::prelude::*;

fn pair(v: &[u32], default: u32) -> [u32; 2] {
    match v {
        [] => [default; 2],
        [a] => [*a; 2],
        [a, b, ..] => [*a, *b],
    }
}

/// `conv::out_size` for both spatial dims, or None.
fn conv_out(x: &[usize], w: &[usize], p: &Conv2dParams) -> Option<Vec<usize>> {
    if x.len() != 4 || w.len() != 4 {
        return None;
    }
    let s = p.stride.map(|v| v as usize);
    let d = p.dilation.map(|v| v as usize);
    let pad = p.pad.map(|v| v as usize);
    let oh = conv::out_size(x[2], w[2], s[0], pad[0], d[0])?;
    let ow = conv::out_size(x[3], w[3], s[1], pad[1], d[1])?;
    Some(vec![x[0], w[0], oh, ow])
}

fn pool_out(x: &[usize], p: &Pool2dParams) -> Option<Vec<usize>> {
    if x.len() != 4 {
        return None;
    }
    let k = p.kernel.map(|v| v as usize);
    let s = [0, 1].map(|i| if p.stride[i] == 0 { k[i] } else { p.stride[i] as usize });
    let pad = p.pad.map(|v| v as usize);
    let oh = (x[2] + 2 * pad[0]).checked_sub(k[0])?.checked_div(s[0])? + 1;
    let ow = (x[3] + 2 * pad[1]).checked_sub(k[1])?.checked_div(s[1])? + 1;
    Some(vec![x[0], x[1], oh, ow])
}

#[wasm_bindgen]
impl Device {
    /// 2-D convolution, NCHW input and (C_out, C_in / groups, KH, KW)
    /// weight; `stride`, `pad`, `dilation`: [h, w] or one value for both.
    pub fn conv2d(
        &self,
        x: &Tensor,
        weight: &Tensor,
        stride: &[u32],
        pad: &[u32],
        dilation: &[u32],
        groups: u32,
    ) -> Result<Tensor, JsError> {
        self.conv(x, weight, None, stride, pad, dilation, groups)
    }

    /// `conv2d` plus a per-output-channel bias (C_out).
    #[wasm_bindgen(js_name = conv2dBias)]
    #[allow(clippy::too_many_arguments)]
    pub fn conv2d_bias(
        &self,
        x: &Tensor,
        weight: &Tensor,
        bias: &Tensor,
        stride: &[u32],
        pad: &[u32],
        dilation: &[u32],
        groups: u32,
    ) -> Result<Tensor, JsError> {
        self.conv(x, weight, Some(bias), stride, pad, dilation, groups)
    }

    /// Max or average pooling (`kind` "max" or "avg") over NCHW windows;
    /// `stride` empty means the kernel size.
    #[wasm_bindgen(js_name = pool2d)]
    pub fn pool2d(
        &self,
        kind: &str,
        x: &Tensor,
        kernel: &[u32],
        stride: &[u32],
        pad: &[u32],
        #[wasm_bindgen(js_name = countIncludePad)] count_include_pad: bool,
    ) -> Result<Tensor, JsError> {
        let kind = match kind {
            "max" => PoolKind::Max,
            "avg" => PoolKind::Avg,
            _ => return Err(js(crate::Error::InvalidArgument(format!("unknown pooling \"{kind}\" (max, avg)")))),
        };
        let p = Pool2dParams { kernel: pair(kernel, 1), stride: pair(stride, 0), pad: pair(pad, 0), count_include_pad };
        let xv = x.core_view()?;
        let shape = pool_out(&xv.shape, &p).unwrap_or(vec![1]);
        let out = self.alloc(xv.dtype, shape)?;
        pool::pool2d(&self.stream, kind, &p, &xv, &out.core_view()?).map_err(js)?;
        Ok(out)
    }

    /// Layer norm over the last `dims` dims, without weight and bias.
    #[wasm_bindgen(js_name = layerNorm)]
    pub fn layer_norm(&self, x: &Tensor, dims: u32, eps: f32) -> Result<Tensor, JsError> {
        self.norm(x, None, None, dims, eps, false)
    }

    /// Layer norm with a weight and a bias of the normalised shape.
    #[wasm_bindgen(js_name = layerNormAffine)]
    pub fn layer_norm_affine(
        &self,
        x: &Tensor,
        weight: &Tensor,
        bias: &Tensor,
        dims: u32,
        eps: f32,
    ) -> Result<Tensor, JsError> {
        self.norm(x, Some(weight), Some(bias), dims, eps, false)
    }

    /// RMS norm over the last `dims` dims with a weight of the normalised shape.
    #[wasm_bindgen(js_name = rmsNorm)]
    pub fn rms_norm(&self, x: &Tensor, weight: &Tensor, dims: u32, eps: f32) -> Result<Tensor, JsError> {
        self.norm(x, Some(weight), None, dims, eps, true)
    }

    /// The slices of `x` along `axis` that the i32 `index` names.
    #[wasm_bindgen(js_name = indexSelect)]
    pub fn index_select(&self, x: &Tensor, axis: i32, index: &Tensor) -> Result<Tensor, JsError> {
        let (xv, iv) = (x.core_view()?, index.core_view()?);
        let r = xv.rank() as i32;
        let a = if axis < 0 { axis + r } else { axis };
        let mut shape = xv.shape.clone();
        if (0..r).contains(&a) {
            shape[a as usize] = iv.numel();
        }
        let out = self.alloc(xv.dtype, shape)?;
        gather::index_select(&self.stream, &xv, axis, &iv, &out.core_view()?).map_err(js)?;
        Ok(out)
    }

    /// A new f32 tensor of random numbers: "uniform" in [a, b) or "normal"
    /// with mean a and standard deviation b, reproducible from `seed`.
    pub fn random(&self, shape: &[u32], distribution: &str, seed: u32, a: f64, b: f64) -> Result<Tensor, JsError> {
        let dist = match distribution {
            "uniform" => Distribution::Uniform,
            "normal" => Distribution::Normal,
            _ => {
                return Err(js(crate::Error::InvalidArgument(format!(
                    "unknown distribution \"{distribution}\" (uniform, normal)"
                ))))
            }
        };
        let out = self.alloc(crate::ops::tensor::DType::F32, usizes(shape))?;
        random::random(&self.stream, &out.core_view()?, dist, seed as u64, 0, a, b).map_err(js)?;
        Ok(out)
    }
}

impl Device {
    #[allow(clippy::too_many_arguments)]
    fn conv(
        &self,
        x: &Tensor,
        weight: &Tensor,
        bias: Option<&Tensor>,
        stride: &[u32],
        pad: &[u32],
        dilation: &[u32],
        groups: u32,
    ) -> Result<Tensor, JsError> {
        let p = Conv2dParams { stride: pair(stride, 1), pad: pair(pad, 0), dilation: pair(dilation, 1), groups };
        let (xv, wv) = (x.core_view()?, weight.core_view()?);
        let bv = bias.map(|b| b.core_view()).transpose()?;
        let shape = conv_out(&xv.shape, &wv.shape, &p).unwrap_or(vec![1]);
        let out = self.alloc(xv.dtype, shape)?;
        conv::conv2d(&self.stream, &p, &xv, &wv, bv.as_ref(), &out.core_view()?).map_err(js)?;
        Ok(out)
    }

    fn norm(
        &self,
        x: &Tensor,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        dims: u32,
        eps: f32,
        rms: bool,
    ) -> Result<Tensor, JsError> {
        let xv = x.core_view()?;
        let wv = weight.map(|t| t.core_view()).transpose()?;
        let bv = bias.map(|t| t.core_view()).transpose()?;
        let out = self.alloc(xv.dtype, xv.shape.clone())?;
        norm::norm(&self.stream, &xv, wv.as_ref(), bv.as_ref(), dims, eps, rms, &out.core_view()?).map_err(js)?;
        Ok(out)
    }
}
