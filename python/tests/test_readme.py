"""The README's Python example runs as written."""

import contextlib
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"


def test_readme_python_example_runs():
    text = README.read_text()
    section = text[text.index("## Python"):]
    code = re.search(r"```python\n(.*?)```", section, flags=re.S).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(README), "exec"), {})
    lines = out.getvalue().splitlines()
    assert lines[0] == "[[0.016 0.117 0.867]"
    assert lines[2].startswith("[19. 64.] [[0. 2.]")
    sigma = float(lines[-1].split()[0])
    assert abs(sigma - 1) < 0.1
