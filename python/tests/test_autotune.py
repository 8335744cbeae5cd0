"""The autotuner through the Python package: a device option, its counters
and the tuning file (the C test test_autotune checks every candidate)."""

from pathlib import Path

import numpy as np
import pytest

import wgcompute as wg
from conftest import assert_close, rand


def test_tuned_softmax_is_timed_once_saved_and_reloaded(tmp_path: Path, rng):
    path = tmp_path / "tuning.txt"
    x = rand(rng, (3, 40001))
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    expected = e / e.sum(axis=1, keepdims=True)
    dev = wg.Device(autotune="on", tuning_cache_path=str(path))
    for _ in range(2):
        assert_close(wg.ops.softmax(wg.asarray(x, device=dev)), expected)
    stats = dev.tuning_stats()
    assert stats["mode"] == "on" and stats["timed"] == 1 and stats["reused"] == 1
    assert dev.save_tuning()
    assert path.read_text().startswith("wgcompute tuning 1\nkey ")

    again = wg.Device(autotune="cached", tuning_cache_path=str(path))
    assert_close(wg.ops.softmax(wg.asarray(x, device=again)), expected)
    stats = again.tuning_stats()
    assert stats["loaded"] == 1 and stats["timed"] == 0 and stats["reused"] == 1


def test_autotune_off_writes_no_file(tmp_path: Path):
    dev = wg.Device(autotune="off", tuning_cache_path=str(tmp_path / "t.txt"))
    assert dev.tuning_stats()["mode"] == "off"
    assert not dev.save_tuning()
    assert not (tmp_path / "t.txt").exists()


def test_unknown_autotune_mode_is_refused():
    with pytest.raises(ValueError):
        wg.Device(autotune="sometimes")
