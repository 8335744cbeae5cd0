"""The raw binding is the header: every function it declares is callable,
every operator has a Pythonic wrapper, and a failed load says what it tried."""

import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import wgcompute as wg
from wgcompute import _ffi, _header, ops


def header_functions():
    return _header.parse(_ffi._header_path()).functions


def test_every_header_function_is_reachable():
    names = header_functions()
    assert len(names) > 50
    missing = [n for n in names if not callable(getattr(wg.lib, n, None))]
    assert not missing, f"declared in wgcompute.h but not reachable through wgcompute.lib: {missing}"


def test_every_operator_has_a_python_wrapper():
    source = inspect.getsource(ops)
    unwrapped = [n for n in header_functions() if n.startswith("wgc_op_") and f"lib.{n}" not in source]
    assert not unwrapped, f"operators without a function in wgcompute.ops: {unwrapped}"


def test_every_header_constant_is_reachable():
    for name, value in _ffi.header.constants.items():
        assert getattr(wg.lib, name) == value, name


def test_bundled_header_matches_the_library_version():
    v = wg.lib.wgc_version()
    assert (v >> 16, (v >> 8) & 0xFF, v & 0xFF) == (wg.lib.WGC_VERSION_MAJOR, wg.lib.WGC_VERSION_MINOR, wg.lib.WGC_VERSION_PATCH)
    assert wg.lib.wgc_abi_version() == wg.lib.WGC_ABI_VERSION


def test_header_conditionals_resolve_for_c99():
    text = "#if defined(__cplusplus) || __STDC_VERSION__ >= 202311L\nA\n#else\nB\n#endif\n#ifndef X\nC\n#endif\n"
    assert _header._preprocess(text).split() == ["B", "C"]


def test_failed_load_lists_the_paths_tried_and_why():
    env = dict(os.environ, WGC_LIBRARY_PATH="/nonexistent/libwgcompute.so")
    r = subprocess.run([sys.executable, "-c", "import wgcompute"], env=env, capture_output=True, text=True)
    assert r.returncode != 0
    assert "could not load the wgcompute library" in r.stderr
    assert "/nonexistent/libwgcompute.so (WGC_LIBRARY_PATH): no such file" in r.stderr


def test_library_path_override_loads_that_library(tmp_path: Path):
    env = dict(os.environ, WGC_LIBRARY_PATH=str(Path(wg.library_path).parent))
    r = subprocess.run([sys.executable, "-c", "import wgcompute; print(wgcompute.library_path)"], env=env,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().startswith(str(Path(wg.library_path).parent))


def test_a_file_that_is_not_a_library_is_reported(tmp_path: Path):
    bogus = tmp_path / "libwgcompute.so"
    bogus.write_text("not a library")
    env = dict(os.environ, WGC_LIBRARY_PATH=str(bogus))
    r = subprocess.run([sys.executable, "-c", "import wgcompute"], env=env, capture_output=True, text=True)
    assert r.returncode != 0 and str(bogus) in r.stderr and re.search(r"invalid ELF|file too short|cannot", r.stderr)


def test_the_installed_package_loads_its_bundled_library():
    if os.environ.get("WGC_LIBRARY_PATH"):
        return  # an explicit library was chosen for this run
    package = Path(wg.__file__).parent
    assert Path(wg.library_path).parent == package, wg.library_path
    assert (package / "include" / "wgcompute.h").is_file()
