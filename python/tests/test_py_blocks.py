"""bench/py_blocks.py's decoder layer at its tiny size: written with the
package, checked against NumPy in float64, timed and profiled."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "py_blocks.py"


@pytest.mark.parametrize("case", ["llama_prefill_512_f16", "llama_decode_1k_bf16"])
def test_decoder_layer_checks_and_times(case):
    run = subprocess.run([sys.executable, str(SCRIPT), "--small", case], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    rows = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    assert [r["case"] for r in rows] == [f"py_{case}"]
    assert rows[0]["check"] == "ok" and rows[0]["ms"] > 0 and rows[0]["wall_ms"] > 0
    assert "# profile of" in run.stdout and "gemm" in run.stdout
    if "decode" in case:  # captured once and replayed: the same output as the eager step
        assert rows[0]["replay_check"] == "ok" and rows[0]["replay_ms"] > 0 and rows[0]["replay_wall_ms"] > 0
