"""sigpu: signal decoding and processing on NVIDIA GPUs, with CPU backends.

Every decoded result is a :class:`sigpu.Array` that NumPy, CuPy and PyTorch take without a copy
(``np.asarray(x)``, ``cupy.asarray(x)``, ``torch.from_dlpack(x)``).
"""

import atexit

from . import _sigpu
from ._sigpu import (
    Array,
    CudaError,
    Error,
    InputError,
    MappedFile,
    OutputError,
    UnsupportedError,
    UsageError,
    cuda_compiled,
    cuda_devices,
    gpu_cache_info,
    release_gpu_cache,
    set_gpu_cache_budget,
    version,
)

# At exit the cache frees what it holds and keeps nothing more, while the CUDA runtime is still
# there to take it.
atexit.register(set_gpu_cache_budget, 0)

__version__ = version()
__all__ = [
    "Array",
    "CudaError",
    "Error",
    "InputError",
    "OutputError",
    "UnsupportedError",
    "UsageError",
    "cuda_compiled",
    "cuda_devices",
    "gpu_cache_info",
    "info",
    "MappedFile",
    "release_gpu_cache",
    "set_gpu_cache_budget",
    "version",
]


def info() -> dict:
    """The build and the machine: version, CUDA backend, visible GPUs, modules."""
    return {
        "version": version(),
        "cuda_compiled": cuda_compiled(),
        "cuda_devices": cuda_devices(),
        "modules": list(_sigpu.modules),
    }


def __getattr__(name):
    # Submodules load on first use (sigpu.flac, sigpu.turbo, ...), so that a build without one
    # still imports; asking for a module this build lacks says so.
    import importlib

    if name in ("flac", "turbo", "audio", "nam", "prores", "hevc", "dask"):
        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'sigpu' has no attribute {name!r}")
