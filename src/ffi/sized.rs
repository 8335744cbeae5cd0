//! Structs that begin with `uint32_t struct_size`, read from and written to
//! the caller's memory. A field is read or written only if the caller's
//! `struct_size` covers all of it: fields past it keep their defaults (an
//! older, smaller struct), and a size that ends inside a field is refused
//! (no header ever declared one; reading part of a pointer would crash).

use crate::error::{Error, Result};

/// A `#[repr(C)]` struct whose first field is `struct_size: u32`, with the
/// byte range of every other field. Implemented by `sized_struct!`.
pub(crate) trait SizedStruct: Copy + Default {
    /// (name, first byte, end byte, alignment) of each field after
    /// `struct_size`, in declaration order.
    const FIELDS: &'static [(&'static str, usize, usize, usize)];
}

/// The size of the field `f` selects, for `sized_struct!`.
pub(crate) const fn size_of_field<T, F>(_: fn(&T) -> &F) -> usize {
    std::mem::size_of::<F>()
}

/// The alignment of the field `f` selects, for `sized_struct!`.
pub(crate) const fn align_of_field<T, F>(_: fn(&T) -> &F) -> usize {
    std::mem::align_of::<F>()
}

/// `sized_struct!(Type { field, field, ... })`: every field after
/// `struct_size`, in order (a unit test checks that none is missing).
macro_rules! sized_struct {
    ($t:ty { $($field:ident),+ $(,)? }) => {
        impl $crate::ffi::sized::SizedStruct for $t {
            const FIELDS: &'static [(&'static str, usize, usize, usize)] = &[$((
                stringify!($field),
                ::std::mem::offset_of!($t, $field),
                ::std::mem::offset_of!($t, $field) + $crate::ffi::sized::size_of_field(|s: &$t| &s.$field),
                $crate::ffi::sized::align_of_field(|s: &$t| &s.$field),
            )),+];
        }
    };
}
pub(crate) use sized_struct;

/// How many bytes of the caller's struct to use: `struct_size`, at most the
/// library's size, refused if under 4 or ending inside a field.
fn covered<T: SizedStruct>(declared: u32, what: &str) -> Result<usize> {
    let declared = declared as usize;
    if declared < 4 {
        return Err(Error::InvalidArgument(format!("{what}.struct_size must be set to sizeof the struct")));
    }
    if let Some((name, start, end, _)) = T::FIELDS.iter().find(|f| f.1 < declared && declared < f.2) {
        return Err(Error::InvalidArgument(format!(
            "{what}.struct_size {declared} ends inside field `{name}` (bytes {start}..{end}); set it to sizeof the struct"
        )));
    }
    Ok(declared.min(std::mem::size_of::<T>()))
}

/// Read a caller's struct: fields past its `struct_size` keep their defaults.
///
/// # Safety
/// `p` must be NULL or point to at least `struct_size` readable bytes.
pub(crate) unsafe fn read_sized<T: SizedStruct>(p: *const T, what: &str) -> Result<T> {
    if p.is_null() {
        return Err(Error::NullPointer(format!("{what} is NULL")));
    }
    let n = covered::<T>(unsafe { std::ptr::read_unaligned(p as *const u32) }, what)?;
    let mut value = T::default();
    unsafe { std::ptr::copy_nonoverlapping(p as *const u8, &mut value as *mut T as *mut u8, n) };
    Ok(value)
}

/// Write an output struct, no more bytes than the caller's `struct_size`
/// declares (which it keeps).
///
/// # Safety
/// `p` must be NULL or point to at least `struct_size` writable bytes.
pub(crate) unsafe fn write_sized<T: SizedStruct>(p: *mut T, value: &T, what: &str) -> Result<()> {
    if p.is_null() {
        return Err(Error::NullPointer(format!("{what} is NULL")));
    }
    let declared = unsafe { std::ptr::read_unaligned(p as *const u32) };
    let n = covered::<T>(declared, what)?;
    unsafe {
        std::ptr::copy_nonoverlapping(value as *const T as *const u8, p as *mut u8, n);
        std::ptr::write_unaligned(p as *mut u32, declared);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::device::{WgcDeviceOptions, WgcMemoryStats};
    use crate::ffi::instance::WgcAdapterInfo;
    use crate::ffi::kernel::WgcKernelDesc;
    use crate::ffi::ops_attention::WgcAttentionDesc;
    use crate::ffi::ops_conv::{WgcConv2dParams, WgcPool2dParams};
    use crate::ffi::ops_rope::WgcRopeDesc;
    use crate::ffi::stream::WgcLaunch;

    /// The listed fields tile the struct exactly: each starts where the
    /// previous one ends, rounded up to its alignment, and only the final
    /// padding follows the last.
    fn lists_every_field<T: SizedStruct>() {
        let mut end = 4usize;
        for &(name, start, field_end, align) in T::FIELDS {
            assert_eq!(
                start,
                end.next_multiple_of(align),
                "{}: a field before `{name}` is missing",
                std::any::type_name::<T>()
            );
            end = field_end;
        }
        assert_eq!(
            end.next_multiple_of(std::mem::align_of::<T>()),
            std::mem::size_of::<T>(),
            "{}: a last field is missing",
            std::any::type_name::<T>()
        );
    }

    #[test]
    fn every_sized_struct_lists_every_field() {
        lists_every_field::<WgcDeviceOptions>();
        lists_every_field::<WgcMemoryStats>();
        lists_every_field::<WgcAdapterInfo>();
        lists_every_field::<WgcKernelDesc>();
        lists_every_field::<WgcLaunch>();
        lists_every_field::<WgcConv2dParams>();
        lists_every_field::<WgcPool2dParams>();
        lists_every_field::<WgcRopeDesc>();
        lists_every_field::<crate::ffi::graph::WgcGraphReplay>();
        lists_every_field::<WgcAttentionDesc>();
    }

    #[test]
    fn sizes_ending_inside_a_field_are_refused() {
        // source: bytes 8..16.
        assert!(covered::<WgcKernelDesc>(9, "desc").is_err());
        assert!(covered::<WgcKernelDesc>(3, "desc").is_err());
        assert_eq!(covered::<WgcKernelDesc>(8, "desc").unwrap(), 8);
        assert_eq!(covered::<WgcKernelDesc>(16, "desc").unwrap(), 16);
        assert_eq!(covered::<WgcKernelDesc>(4096, "desc").unwrap(), std::mem::size_of::<WgcKernelDesc>());
    }
}
