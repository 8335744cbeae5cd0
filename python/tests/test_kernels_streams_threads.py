"""Custom WGSL kernels, streams and events, and use from many threads."""

import threading

import numpy as np

import wgcompute as wg

SCALE = """
struct Params { n: u32, factor: f32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<uniform> p: Params;
@compute @workgroup_size(64)
fn scale(@builtin(global_invocation_id) id: vec3<u32>) {
    if (id.x < p.n) { y[id.x] = x[id.x] * p.factor; }
}
"""


def test_custom_kernel_on_tensors_and_buffers():
    k = wg.Kernel(SCALE, "scale")
    assert k.workgroup_size == (64, 1, 1) and k.binding_count == 3
    x = wg.asarray(np.arange(100, dtype=np.float32))
    y = wg.zeros(100)
    params = np.zeros(1, dtype=[("n", np.uint32), ("factor", np.float32)])
    params[0] = (100, 2.5)
    k.launch((100 + 63) // 64, {0: x, 1: y}, params=params)
    np.testing.assert_allclose(y.numpy(), np.arange(100) * 2.5)


def test_indirect_launch():
    k = wg.Kernel(SCALE, "scale")
    x = wg.asarray(np.ones(128, dtype=np.float32))
    y = wg.zeros(128)
    counts = wg.Buffer(12, "storage|indirect")
    counts.write(np.array([1, 1, 1], np.uint32))  # only the first 64 elements
    params = np.array([128], np.uint32).tobytes() + np.array([3.0], np.float32).tobytes()
    k.launch((0, 0, 0), [x, y], params=params, indirect=(counts, 0))
    np.testing.assert_array_equal(y.numpy(), [3.0] * 64 + [0.0] * 64)


def test_streams_and_events():
    dev = wg.default_device()
    x = wg.asarray(np.arange(1000, dtype=np.float32))
    with wg.Stream(dev) as s:
        assert wg.current_stream(dev) is s
        start = s.record_event()
        y = (x * 2).sum()
        end = s.record_event()
        s.flush()
        end.wait()
        assert end.query()
        if dev.info.features["has_timestamps"]:
            assert start.elapsed_ms(end) >= 0
        s.synchronize()
    assert wg.current_stream(dev) is not s
    assert y.item() == 999000


def test_use_stream_keeps_it_open_and_buffer_copies():
    s = wg.Stream()
    a, b = wg.Buffer(64), wg.Buffer(64)
    with wg.use_stream(s):
        s.fill_buffer(a, 0x3F800000)  # 1.0f
        s.copy_buffer(a, b, 32, dst_offset=32)
    s.synchronize()
    np.testing.assert_array_equal(np.frombuffer(b.read(), np.float32), [0] * 8 + [1] * 8)
    s.close()


def test_threads_share_a_device():
    dev = wg.default_device()
    errors = []

    def work(seed):
        try:
            rng = np.random.default_rng(seed)
            for _ in range(10):
                a = rng.standard_normal((33, 17)).astype(np.float32)
                b = rng.standard_normal((17, 9)).astype(np.float32)
                got = (wg.asarray(a, device=dev) @ wg.asarray(b, device=dev) + 1).numpy()
                np.testing.assert_allclose(got, a.astype(np.float64) @ b + 1, rtol=1e-4, atol=1e-4)
                s = wg.asarray(a, device=dev).sum(axis=0).numpy()
                np.testing.assert_allclose(s, a.astype(np.float64).sum(axis=0), rtol=1e-4, atol=1e-4)
        except Exception as e:  # reported by the main thread
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
