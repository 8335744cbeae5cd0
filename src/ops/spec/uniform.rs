//! One uniform struct per kernel family: `#[repr(C)]`, `Pod`, declared with
//! `uniform!` so its field list is known to the layout test
//! (tests/spec_uniforms.rs), which compares every field's offset and size,
//! and the struct's size, with the WGSL struct of the same family through
//! naga's reflection. WGSL aligns `vec4` and arrays of them to 16 bytes:
//! where it pads, the Rust struct carries an explicit `_pad*` field.

/// A uniform struct as the layout test sees it.
#[derive(Debug)]
pub struct UniformLayout {
    /// The name of the WGSL struct it mirrors.
    pub wgsl_struct: &'static str,
    pub size: usize,
    /// (name, byte offset, byte size) of every field, `_pad*` fields included.
    pub fields: Vec<(&'static str, usize, usize)>,
}

/// A kernel family's parameters, uploaded as its uniform.
pub trait Uniform: bytemuck::Pod {
    fn layout() -> UniformLayout;
}

/// Declare a family's uniform struct: `#[repr(C)]`, `Pod`, and its layout.
///
/// ```ignore
/// uniform! {
///     /// Parameters of gather.wgsl.
///     pub struct GatherParams = "Params" {
///         pub n: u32,
///         pub _pad0: [u32; 3],
///         pub shape: [[u32; 4]; 2],
///     }
/// }
/// ```
macro_rules! uniform {
    ($(#[$meta:meta])* $vis:vis struct $name:ident = $wgsl:literal {
        $($(#[$fmeta:meta])* $fvis:vis $field:ident : $ty:ty),* $(,)?
    }) => {
        $(#[$meta])*
        #[repr(C)]
        #[derive(Clone, Copy, Debug, bytemuck::Pod, bytemuck::Zeroable)]
        $vis struct $name {
            $($(#[$fmeta])* $fvis $field: $ty),*
        }
        impl $crate::ops::spec::uniform::Uniform for $name {
            fn layout() -> $crate::ops::spec::uniform::UniformLayout {
                $crate::ops::spec::uniform::UniformLayout {
                    wgsl_struct: $wgsl,
                    size: std::mem::size_of::<$name>(),
                    fields: vec![$((
                        stringify!($field),
                        std::mem::offset_of!($name, $field),
                        std::mem::size_of::<$ty>(),
                    )),*],
                }
            }
        }
    };
}
pub(crate) use uniform;

/// Up to 8 sizes as WGSL `array<vec4<u32>, 2>`, padded with `fill`.
pub fn pack_u32(vals: &[usize], fill: u32) -> [[u32; 4]; 2] {
    let mut out = [[fill; 4]; 2];
    for (i, &v) in vals.iter().take(8).enumerate() {
        out[i / 4][i % 4] = v as u32;
    }
    out
}

/// Up to 8 strides as WGSL `array<vec4<i32>, 2>`, padded with 0.
pub fn pack_i32(vals: &[isize]) -> [[i32; 4]; 2] {
    let mut out = [[0; 4]; 2];
    for (i, &v) in vals.iter().take(8).enumerate() {
        out[i / 4][i % 4] = v as i32;
    }
    out
}
