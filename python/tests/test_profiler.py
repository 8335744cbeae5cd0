"""wg.profile(): records of the operators a block records, the table, results
unchanged while profiling, and misuse."""

import numpy as np
import pytest

import wgcompute as wg
from conftest import assert_close, rand


def test_profile_records_and_table(dev, rng):
    a, b = rand(rng, (33, 47)), rand(rng, (47, 29))
    ta, tb = wg.asarray(a), wg.asarray(b)
    wg.current_stream().synchronize()
    with wg.profile() as p:
        c = ta @ tb
        s = wg.softmax(c * 2.0, axis=-1)
    ref = a.astype(np.float64) @ b.astype(np.float64) * 2
    ref = np.exp(ref - ref.max(-1, keepdims=True))
    assert_close(s, ref / ref.sum(-1, keepdims=True))

    records = p.records
    ops = []
    for r in records:
        if not ops or ops[-1] != (r.call, r.op):
            ops.append((r.call, r.op))
    names = [op for _, op in ops]
    assert "matmul" in names and "softmax" in names and "binary_scalar.mul" in names
    mm = next(r for r in records if r.op == "matmul")
    assert mm.shapes == "f32[33,47], f32[47,29] -> f32[33,29]"
    assert mm.flops == 2 * 33 * 47 * 29
    assert mm.bytes == 4 * (33 * 47 + 47 * 29 + 33 * 29)
    assert ".wgsl:" in mm.kernel
    statuses = {r.time_status for r in records}
    assert statuses in ({"measured"}, {"no_timestamps"})
    for r in records:
        assert (r.gpu_ns is None) == (r.time_status != "measured")
    assert p.has_times == (statuses == {"measured"})

    table = p.table()
    assert "matmul" in table and "softmax" in table and "total" in table
    assert ("no timestamp queries" in table) == (statuses == {"no_timestamps"})
    by_kernel = p.table(group="kernel", max_rows=1)
    assert "more rows" in by_kernel


def test_profile_is_off_outside_the_block(dev, rng):
    t = wg.asarray(rand(rng, (64,)))
    with wg.profile() as p:
        _ = t + t
    _ = t * t  # after the block: not recorded
    assert {(r.call, r.op) for r in p.records} == {(0, "binary.add")}
    with wg.profile() as empty:
        pass
    assert empty.records == [] and "total" in empty.table()


def test_profile_of_an_explicit_stream(dev, rng):
    x = rand(rng, (5, 7))
    stream = wg.Stream(dev)
    with stream:
        t = wg.asarray(x)
        with wg.profile(stream=stream) as p:
            y = wg.exp(t)
        assert_close(y, np.exp(x.astype(np.float64)))
    assert {(r.call, r.op) for r in p.records} == {(0, "unary.exp")}


def test_profile_misuse(dev):
    p = wg.profile()
    with pytest.raises(RuntimeError):
        p.table()
    with pytest.raises(RuntimeError):
        _ = p.records
    with p:
        with pytest.raises(RuntimeError):
            p.table()
        with pytest.raises(RuntimeError):
            with wg.profile():
                pass
    with pytest.raises(RuntimeError):
        with p:
            pass
    with pytest.raises(ValueError):
        p.table(group="nope")
    with pytest.raises(ValueError):
        p.table(max_rows=-1)
    # The C calls' own checks surface as the library's errors.
    with pytest.raises(wg.WgcError):
        wg.errors.check(wg.lib.wgc_stream_set_profiling(wg.ffi.NULL, 1))
    fake = wg.ffi.new("WgcProfileRecord *")
    assert wg.lib.wgc_profile_records_free(fake) == wg.lib.WGC_ERROR_INVALID_ARGUMENT
