"""Build step of the wgcompute wheel: build libwgcompute with the project's
CMake/cargo build and bundle it, with the header the binding reads, inside
the package. Variables:

  WGC_BUILD_DIR          CMake build directory, relative to the repository
                         root (default build/release, as ./run uses)
  WGC_PREBUILT_LIBRARY   bundle this libwgcompute instead of building one
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.bdist_wheel import bdist_wheel as _bdist_wheel
from setuptools.command.build_py import build_py as _build_py

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
if sys.platform == "darwin":
    LIB_NAME = "libwgcompute.dylib"
elif sys.platform == "win32":
    LIB_NAME = "wgcompute.dll"
else:
    LIB_NAME = "libwgcompute.so"


def project_version() -> str:
    cargo = (ROOT / "Cargo.toml").read_text()
    return re.search(r'^version = "([^"]+)"', cargo, flags=re.M).group(1)


def cache_value(cache: Path, name: str) -> str:
    m = re.search(rf"^{name}:[A-Z]+=(.*)$", cache.read_text(), flags=re.M)
    return m.group(1) if m else ""


def build_library() -> Path:
    prebuilt = os.environ.get("WGC_PREBUILT_LIBRARY")
    if prebuilt:
        return Path(prebuilt)
    if not (ROOT / "Cargo.toml").is_file():
        raise RuntimeError(f"{ROOT} is not the wgcompute source tree: build from a checkout, or set WGC_PREBUILT_LIBRARY")
    build_dir = ROOT / os.environ.get("WGC_BUILD_DIR", "build/release")
    cmake = shutil.which("cmake")
    if not cmake:
        raise RuntimeError("cmake not found: it builds libwgcompute (./run installs it on Debian/Ubuntu)")
    if not (build_dir / "CMakeCache.txt").is_file():
        subprocess.check_call([cmake, "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release"])
    subprocess.check_call([cmake, "--build", str(build_dir), "--target", "wgcompute_cargo"])
    cache = build_dir / "CMakeCache.txt"
    target = Path(cache_value(cache, "WGCOMPUTE_CARGO_TARGET_DIR") or ROOT / "target")
    profile = "debug" if cache_value(cache, "WGCOMPUTE_DEBUG").upper() in ("ON", "1", "TRUE", "YES") else "release"
    return target / profile / LIB_NAME


class build_py(_build_py):
    """Also build and bundle the library and its header."""

    def run(self) -> None:
        super().run()
        package = Path(self.build_lib) / "wgcompute"
        (package / "include").mkdir(parents=True, exist_ok=True)
        shutil.copyfile(build_library(), package / LIB_NAME)
        shutil.copyfile(ROOT / "include" / "wgcompute.h", package / "include" / "wgcompute.h")


class BinaryDistribution(Distribution):
    """The package holds a native library: a platform wheel, installed to platlib."""

    def has_ext_modules(self) -> bool:
        return True


class bdist_wheel(_bdist_wheel):
    """A platform wheel for any Python 3: the binding uses cffi's ABI mode,
    so nothing is compiled against Python."""

    def get_tag(self):
        _, _, platform = super().get_tag()
        return "py3", "none", platform


setup(version=project_version(), distclass=BinaryDistribution, cmdclass={"build_py": build_py, "bdist_wheel": bdist_wheel})
