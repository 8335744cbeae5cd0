"""Graph capture and replay from Python: replay equals eager, new inputs by
writing and by rebinding, a patched kernel parameter, misuse, threads."""

import threading

import numpy as np
import pytest

import wgcompute as wg

AFFINE = """
struct P { scale: f32, shift: f32, n: u32, pad: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: P;
@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3<u32>) {
  if (g.x < p.n) { y[g.x] = x[g.x] * p.scale + p.shift; }
}
"""

R, C = 5, 130


def params(scale, shift=0.25):
    return np.array([scale, shift], np.float32).tobytes() + np.array([R * C, 0], np.uint32).tobytes()


def chain(kernel, x, w, c, scale):
    """softmax(affine(x * 1.5 + w)) and its row sums; c is the kernel's output."""
    b = x * 1.5 + w
    kernel.launch((R * C + 63) // 64, [b, c], params=params(scale))
    return wg.softmax(c, axis=1), wg.sum(c, axis=1)


def reference(x, w, scale):
    c = ((x * np.float32(1.5)).astype(np.float64) + w) * scale + 0.25
    e = np.exp(c - c.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True), c.sum(axis=1)


def check(d, e, x, w, scale):
    dr, er = reference(x, w, scale)
    np.testing.assert_allclose(d.numpy(), dr, rtol=2e-5, atol=1e-7)
    np.testing.assert_allclose(e.numpy(), er, rtol=1e-5, atol=1e-3)


@pytest.fixture
def data():
    rng = np.random.default_rng(7)
    return [rng.uniform(-2, 2, (R, C)).astype(np.float32) for _ in range(4)]


def test_replay_matches_eager_and_takes_new_inputs(data):
    xs, ws, xs2, ws2 = data
    k = wg.Kernel(AFFINE)
    x, w = wg.asarray(xs), wg.asarray(ws)
    c = wg.zeros((R, C))
    d_eager, e_eager = chain(k, x, w, wg.zeros((R, C)), 0.5)
    with wg.capture() as g:
        b = x * 1.5 + w
        launch = g.next_launch()
        k.launch((R * C + 63) // 64, [b, c], params=params(0.5))
        d, e = wg.softmax(c, axis=1), wg.sum(c, axis=1)
    counts = g.counts()
    assert counts["launches"] == counts["dispatches"] >= 5
    assert not np.any(d.numpy())  # nothing ran during the capture
    g.replay()
    check(d, e, xs, ws, 0.5)
    assert np.array_equal(d.numpy(), d_eager.numpy())

    x.buffer.write(xs2)
    g.replay()
    check(d, e, xs2, ws, 0.5)

    # A binding table: other inputs and outputs; the captured ones untouched.
    x2, w2, d2, e2 = wg.asarray(xs), wg.asarray(ws2), wg.zeros((R, C)), wg.zeros((R,))
    for _ in range(2):
        g.replay(rebind=[(x, x2), (w, w2), (d, d2), (e, e2)])
        check(d2, e2, xs, ws2, 0.5)
    check(d, e, xs2, ws, 0.5)

    # A patched scalar for one replay.
    g.replay(rebind=[(x, x2), (w, w2), (d, d2), (e, e2)], scalars=[(launch, 0, np.float32(-1.25))])
    check(d2, e2, xs, ws2, -1.25)
    g.replay()
    check(d, e, xs2, ws, 0.5)

    # Another stream.
    with wg.Stream() as s:
        g.replay(stream=s)
        s.synchronize()
    check(d, e, xs2, ws, 0.5)

    with pytest.raises(wg.InvalidArgumentError):
        g.replay(rebind=[(x, wg.zeros((R, C - 1)))])
    with pytest.raises(wg.BindingMismatchError):
        g.replay(rebind=[(b, c)])
    with pytest.raises(wg.OutOfRangeError):
        g.replay(scalars=[(launch, 12, np.zeros(2, np.float32))])
    with pytest.raises(wg.NotFoundError):
        g.slot(wg.zeros((3,)))
    with pytest.raises(TypeError):
        g.replay(scalars=[(launch, 0, 1.25)])  # a Python float has no width
    g.close()


def test_captured_tensors_may_be_dropped(data):
    xs, ws, _, _ = data
    k = wg.Kernel(AFFINE)
    out_d, out_e = wg.zeros((R, C)), wg.zeros((R,))
    x, w = wg.asarray(xs), wg.asarray(ws)
    with wg.capture() as g:
        d, e = chain(k, x, w, wg.zeros((R, C)), 2.0)
        wg.current_stream().copy_buffer(d.buffer, out_d.buffer, R * C * 4)
        wg.current_stream().copy_buffer(e.buffer, out_e.buffer, R * 4)
    del x, w, d, e
    import gc

    gc.collect()
    junk = [wg.full((R, C), float("nan")) for _ in range(6)]
    del junk
    g.replay()
    check(out_d, out_e, xs, ws, 2.0)


def test_what_cannot_be_captured(data):
    xs, ws, _, _ = data
    k = wg.Kernel(AFFINE)
    x, w = wg.asarray(xs), wg.asarray(ws)
    unrelated = wg.asarray(np.arange(4, dtype=np.float32))
    with pytest.raises(wg.InvalidOperationError):
        wg.Graph(wg.current_stream(), None).next_launch()
    with wg.capture() as g:
        d, e = chain(k, x, w, wg.zeros((R, C)), 1.0)
        with pytest.raises(wg.InvalidOperationError):
            d.numpy()
        with pytest.raises(wg.InvalidOperationError):
            x.buffer.write(xs.tobytes())
        with pytest.raises(wg.InvalidOperationError):
            wg.current_stream().synchronize()
        with pytest.raises(wg.InvalidOperationError):
            wg.current_stream().record_event()
        with pytest.raises(wg.InvalidOperationError):
            wg.errors.check(wg.lib.wgc_stream_begin_capture(wg.current_stream().handle))
        assert np.array_equal(unrelated.numpy(), np.arange(4, dtype=np.float32))
    g.replay()
    check(d, e, xs, ws, 1.0)

    # An exception in the block ends the capture and drops it.
    with pytest.raises(RuntimeError):
        with wg.capture():
            chain(k, x, w, wg.zeros((R, C)), 1.0)
            raise RuntimeError("stop")
    flag = wg.ffi.new("uint32_t *")
    wg.errors.check(wg.lib.wgc_stream_is_capturing(wg.current_stream().handle, flag))
    assert flag[0] == 0


def test_replay_on_another_device_fails(data):
    xs, ws, _, _ = data
    other = wg.Device()
    x, w = wg.asarray(xs), wg.asarray(ws)
    with wg.capture() as g:
        y = x + w
    with wg.Stream(other) as s:
        with pytest.raises(wg.DeviceMismatchError):
            g.replay(stream=s)
    g.replay()
    np.testing.assert_allclose(y.numpy(), xs.astype(np.float64) + ws, rtol=1e-6)


def test_concurrent_replays(data):
    xs, ws, _, _ = data
    k = wg.Kernel(AFFINE)
    x, w = wg.asarray(xs), wg.asarray(ws)
    with wg.capture() as g:
        b = x * 1.5 + w
        c = wg.zeros((R, C))
        launch = g.next_launch()
        k.launch((R * C + 63) // 64, [b, c], params=params(1.0))
        d, e = wg.softmax(c, axis=1), wg.sum(c, axis=1)
    errors = []

    def work(i):
        try:
            with wg.Stream() as s:
                d2, e2 = wg.zeros((R, C)), wg.zeros((R,))
                for r in range(3):
                    scale = 0.1 * (i * 3 + r + 1)
                    g.replay(stream=s, rebind=[(d, d2), (e, e2)], scalars=[(launch, 0, np.float32(scale))])
                    s.flush()
                    check(d2, e2, xs, ws, np.float32(scale))
        except Exception as ex:  # reported below
            errors.append(ex)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
