"""Builds the `sigpu` Python package: CMake builds the library and the pybind11 extension
(python/), setuptools packs python/sigpu with it.

    python3 -m venv --system-site-packages .venv   # Debian's NumPy, pybind11 and setuptools
    .venv/bin/pip install --no-build-isolation .

Nothing is downloaded. SIGPU_CMAKE_ARGS adds CMake options (e.g. "-DSIGPU_CUDA=OFF"), JOBS sets
the build's parallelism (default 2). The CMake build folder is build-python/cmake.
"""

import os
import pathlib
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent
VERSION = re.search(r"project\(sigpu VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())[1]


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = ROOT / "build-python" / "cmake"
        configure = ["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                     f"-DPython3_EXECUTABLE={sys.executable}", "-DSIGPU_PYTHON=ON",
                     "-DBUILD_TESTING=OFF", *os.environ.get("SIGPU_CMAKE_ARGS", "").split()]
        if shutil.which("ninja") and not (build / "CMakeCache.txt").exists():
            configure += ["-G", "Ninja"]
        subprocess.run(configure, check=True)
        subprocess.run(["cmake", "--build", str(build), "--target", "sigpu_python", "-j",
                        os.environ.get("JOBS", "2")], check=True)
        built = next((build / "python" / "sigpu").glob("_sigpu*.so"), None)
        if built is None:
            sys.exit("sigpu: the extension was not built; see CMake's output above "
                     "(pybind11 or dlpack/dlpack.h missing?)")
        target = pathlib.Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


setup(
    name="sigpu",
    version=VERSION,
    description="FLAC, LTE turbo, audio, NAM, ProRes and HEVC on NVIDIA GPUs, with CPU backends",
    python_requires=">=3.9",
    install_requires=["numpy"],
    packages=["sigpu"],
    package_dir={"": "python"},
    package_data={"sigpu": ["*.pyi", "py.typed"]},
    ext_modules=[Extension("sigpu._sigpu", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": "build-python"}, "egg_info": {"egg_base": "build-python"}},
    zip_safe=False,
)
