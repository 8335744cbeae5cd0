"""Failures raise the exception class of their status, with the library's message."""

import numpy as np
import pytest

import wgcompute as wg
from wgcompute import errors


def test_one_class_per_status_under_a_common_base():
    for name, value in wg._ffi.header.constants.items():
        if name.startswith("WGC_ERROR_"):
            cls = errors.error_class(value)
            assert issubclass(cls, wg.WgcError) and cls is not wg.WgcError
            assert cls.status == value
    assert wg.OutOfRangeError.status == wg.lib.WGC_ERROR_OUT_OF_RANGE
    assert wg.TimeoutError is errors.error_class(wg.lib.WGC_ERROR_TIMEOUT)


def test_shape_mismatch_carries_status_and_message():
    a = wg.zeros((2, 3))
    b = wg.zeros((4,))
    with pytest.raises(wg.ShapeMismatchError) as info:
        a + b
    e = info.value
    assert e.status == wg.lib.WGC_ERROR_SHAPE_MISMATCH
    assert e.status_name == "WGC_ERROR_SHAPE_MISMATCH"
    assert "broadcast" in e.message
    assert str(e).startswith("WGC_ERROR_SHAPE_MISMATCH: ")


def test_dtype_mismatch():
    with pytest.raises(wg.DtypeMismatchError):
        wg.zeros(3) + wg.zeros(3, "int32")


def test_shader_errors_name_line_and_column():
    with pytest.raises(wg.ShaderCompilationError) as info:
        wg.Kernel("@compute @workgroup_size(1)\nfn main() {\n  let x: f32 = undefined_name;\n}\n")
    assert ":3:" in info.value.message or "3:" in info.value.message


def test_missing_entry_point_and_bad_bindings():
    src = "@group(0) @binding(0) var<storage, read_write> x: array<f32>;\n@compute @workgroup_size(1) fn main() { x[0] = 1.0; }"
    with pytest.raises(wg.NotFoundError):
        wg.Kernel(src, "nope")
    k = wg.Kernel(src)
    with pytest.raises(wg.BindingMismatchError):
        k.launch(1, [])
    with pytest.raises(wg.LimitExceededError):
        k.launch((1 << 20, 1, 1), [wg.Buffer(16)])


def test_buffer_errors():
    b = wg.Buffer(16)
    with pytest.raises(wg.OutOfRangeError):
        b.read(8, offset=12)
    with pytest.raises(wg.AlignmentError):
        b.write(b"abc")
    with pytest.raises(wg.InvalidArgumentError):
        wg.Buffer(0)


def test_out_of_range_view_is_rejected_not_read():
    t = wg.zeros((4,))
    bad = t._view((8,), (1,), 0)  # reaches past the buffer
    with pytest.raises(wg.OutOfRangeError):
        bad + 1


def test_errors_of_the_python_layer():
    with pytest.raises(TypeError):
        wg.asarray(np.array(["a"]))
    with pytest.raises(OverflowError):
        wg.asarray(np.array([2**40]))
    with pytest.raises(IndexError):
        wg.zeros((2, 3))[2]
    with pytest.raises(ValueError):
        wg.zeros((2, 3)).reshape(4, 2)
    with pytest.raises(ValueError):
        wg.Device(preference="fastest")


def test_bad_adapter_index():
    with pytest.raises(wg.NotFoundError) as info:
        wg.Device(adapter=99)
    assert "99" in info.value.message


def test_destroyed_device_reports_device_lost():
    d = wg.Device()
    t = wg.asarray(np.ones(4, np.float32), device=d)
    d.destroy()
    with pytest.raises(wg.DeviceLostError):
        (t + 1).numpy()
