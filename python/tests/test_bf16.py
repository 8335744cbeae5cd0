"""bfloat16 tensors from Python: host data in and out (NumPy has no
bfloat16 without ml_dtypes: float32 values or uint16 bits), casts, an
elementwise op, a reduction and a matmul against float64 references."""

import numpy as np

import wgcompute as wg


def bf16_round(x: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 (nearest even), as float64."""
    return wg.bfloat16_bits_to_float32(wg.float32_to_bfloat16_bits(x.astype(np.float32))).astype(np.float64)


def test_bits_round_trip_and_rounding(dev):
    bits = np.array([0x0000, 0x8000, 0x3F80, 0x7F80, 0xFF80, 0x7FC0, 0x0001, 0x7F7F], dtype=np.uint16)
    t = wg.from_bfloat16_bits(bits, device=dev)
    assert t.dtype == wg.bfloat16 and t.dtype.itemsize == 2
    np.testing.assert_array_equal(t.bfloat16_bits(), bits)
    # Ties go to even, NaN to 0x7fc0, past the largest value to inf.
    x = np.array([1 + 2**-8, 1 + 3 * 2**-8, np.nan, 3.4e38, -0.0], dtype=np.float32)
    got = wg.asarray(x, dtype="bfloat16", device=dev).bfloat16_bits()
    np.testing.assert_array_equal(got, np.array([0x3F80, 0x3F82, 0x7FC0, 0x7F80, 0x8000], dtype=np.uint16))


def test_cast_and_ops(dev, rng):
    a = rng.uniform(-2, 2, size=(5, 7)).astype(np.float32)
    b = rng.uniform(-2, 2, size=(7,)).astype(np.float32)
    ta = wg.asarray(a, device=dev).astype("bfloat16")  # rounded on the GPU
    tb = wg.asarray(b, dtype="bfloat16", device=dev)  # rounded on the host
    ra, rb = bf16_round(a), bf16_round(b)
    np.testing.assert_array_equal(ta.numpy(), ra.astype(np.float32))
    s = wg.add(ta, tb)
    assert s.dtype == wg.bfloat16
    np.testing.assert_array_equal(s.numpy(), bf16_round((ra + rb).astype(np.float32)).astype(np.float32))
    back = ta.astype("float32").numpy()
    np.testing.assert_array_equal(back, ra.astype(np.float32))
    total = wg.sum(ta, axis=1).numpy().astype(np.float64)
    np.testing.assert_allclose(total, ra.sum(axis=1), rtol=2**-8, atol=1e-6)
    m = wg.matmul(ta, wg.asarray(rng.uniform(-1, 1, size=(7, 3)), dtype="bfloat16", device=dev))
    assert m.dtype == wg.bfloat16 and m.shape == (5, 3)
