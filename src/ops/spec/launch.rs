//! A planned launch and its recording. A plan names its buffers by the
//! WGSL variable they bind to (`"x"`, `"y"`, `"index"`); the numbers come
//! from the compiled kernel's reflection, never from the plan. Recording
//! allocates nothing of its own: the arguments are a fixed-size array.

use super::family::Variant;
use super::uniform::Uniform;
use crate::error::{Error, Result};
use crate::ops::tensor::Tensor;
use crate::runtime::buffer::Buffer;
use crate::runtime::kernel::{BindingKind, Kernel};
use crate::runtime::stream::{Bind, Groups, StreamShared};

/// A buffer range bound to the storage variable `name`.
#[derive(Clone, Copy)]
pub struct Arg<'a> {
    pub name: &'static str,
    pub buffer: &'a Buffer,
    /// Byte offset of the bound range.
    pub offset: u64,
    /// Its size in bytes; `None`: to the end of the buffer.
    pub size: Option<u64>,
}

impl<'a> Arg<'a> {
    /// The whole buffer (scratch space).
    pub fn whole(name: &'static str, buffer: &'a Buffer) -> Self {
        Arg { name, buffer, offset: 0, size: None }
    }

    /// The bytes the binding covers (to the buffer's end where `size` is None):
    /// a kernel that reads it as wider units needs at least one of them.
    pub fn bound_bytes(&self) -> u64 {
        self.size.unwrap_or(self.buffer.size - self.offset)
    }
}

/// Everything one launch needs, decided before anything is recorded.
pub struct Launch<'a, P: Uniform, const N: usize> {
    pub variant: Variant,
    pub params: P,
    pub args: [Arg<'a>; N],
    /// Workgroup counts.
    pub groups: [u32; 3],
}

/// `t` bound as every operator binds a view (`Tensor::bind`: the whole
/// buffer where the adapter can bind it, else a window from an aligned
/// offset below the view), and the view's element offset from the start of
/// what is bound, which the kernel adds to its indices. Windows start on
/// whole vec4s, so `offset % 4` is the view's own alignment.
pub fn view_arg<'a>(name: &'static str, t: &Tensor<'a>) -> (Arg<'a>, u32) {
    let b = t.bind(0);
    (Arg { name, buffer: b.buffer, offset: b.offset, size: b.size }, t.bound_offset())
}

fn binding_named(kernel: &Kernel, name: &str) -> Result<u32> {
    let found = kernel.bindings.iter().find(|b| b.kind != BindingKind::Uniform && b.name == name);
    found.map(|b| b.binding).ok_or_else(|| {
        let names: Vec<&str> = kernel.bindings.iter().map(|b| b.name.as_str()).collect();
        Error::Internal(format!("kernel {:?} has no storage binding {name:?} (it has {names:?})", kernel.entry_point))
    })
}

/// Record `launch` on `stream`: find (or compile) its variant, resolve its
/// bindings by name, and launch with its params as the uniform.
pub fn record<P: Uniform, const N: usize>(stream: &StreamShared, launch: &Launch<P, N>) -> Result<()> {
    let kernel = launch.variant.kernel(&stream.device)?;
    stream.profile_kernel(|| launch.variant.describe());
    record_kernel(stream, &kernel, &launch.params, &launch.args, launch.groups)
}

/// Record a launch of a kernel that is not a WGSL variant (a SPIR-V
/// module, runtime/spirv_kernel.rs), with bindings by name as `record`.
pub fn record_kernel<P: Uniform, const N: usize>(
    stream: &StreamShared,
    kernel: &Kernel,
    params: &P,
    args: &[Arg; N],
    groups: [u32; 3],
) -> Result<()> {
    let mut numbers = [0u32; N];
    for (n, a) in numbers.iter_mut().zip(args) {
        *n = binding_named(kernel, a.name)?;
    }
    let binds: [Bind; N] = std::array::from_fn(|i| {
        let a = &args[i];
        Bind { binding: numbers[i], buffer: a.buffer, offset: a.offset, size: a.size }
    });
    let bytes = bytemuck::bytes_of(params);
    stream.launch(kernel, &binds, Some(bytes), Groups::Direct(groups))?;
    // While capturing: where the launch holds a declared replay scalar.
    stream.note_scalar_sites(bytes, || P::layout().fields);
    Ok(())
}
