// The `sigpu._sigpu` extension: the error hierarchy, sigpu.info(), and one submodule per
// library module this build has (bound in <module>.cpp, selected as the library's modules are).
#include <sigpu/core.hpp>

#include "array.hpp"
#include "device_cache.hpp"
#include "modules.hpp"

namespace {

// The submodules of this build: SIGPU_PY_<MODULE> is defined for each module the library has.
struct Binding {
  const char* name;
  void (*init)(pybind11::module_&);
};
constexpr Binding kBindings[] = {
    {"flac", sigpu::python::init_flac},
#ifdef SIGPU_PY_TURBO
    {"turbo", sigpu::python::init_turbo},
#endif
#ifdef SIGPU_PY_AUDIO
    {"audio", sigpu::python::init_audio},
#endif
#ifdef SIGPU_PY_NAM
    {"nam", sigpu::python::init_nam},
#endif
#ifdef SIGPU_PY_PRORES
    {"prores", sigpu::python::init_prores},
#endif
#ifdef SIGPU_PY_HEVC
    {"hevc", sigpu::python::init_hevc},
#endif
};

}  // namespace

namespace py = pybind11;
using namespace sigpu::python;

PYBIND11_MODULE(_sigpu, m) {
  m.doc() = "sigpu: signal decoding and processing on NVIDIA GPUs, with CPU backends.";

  // Python's own classes where the meaning matches, so that `except ValueError` and
  // `except OSError` catch sigpu's usage and I/O errors too.
  static py::exception<sigpu::Error> error(m, "Error");
  static py::exception<sigpu::InputError> input_error(m, "InputError", error.ptr());
  static py::exception<sigpu::UnsupportedError> unsupported_error(m, "UnsupportedError",
                                                                  error.ptr());
  static py::exception<sigpu::UsageError> usage_error(
      m, "UsageError", py::make_tuple(error, py::handle(PyExc_ValueError)));
  static py::exception<sigpu::OutputError> output_error(
      m, "OutputError", py::make_tuple(error, py::handle(PyExc_OSError)));
  static py::exception<sigpu::CudaError> cuda_error(m, "CudaError", error.ptr());
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const sigpu::InputError& e) {
      input_error(e.what());
    } catch (const sigpu::UnsupportedError& e) {
      unsupported_error(e.what());
    } catch (const sigpu::UsageError& e) {
      usage_error(e.what());
    } catch (const sigpu::OutputError& e) {
      output_error(e.what());
    } catch (const sigpu::CudaError& e) {
      cuda_error(e.what());
    } catch (const sigpu::Error& e) {
      error(e.what());
    }
  });

  m.def(
      "version", [] { return std::string(sigpu::version()); }, "The library's version.");
  m.def("cuda_compiled", &sigpu::cuda_compiled, "True when this build has the CUDA backend.");
  m.def(
      "cuda_devices",
      [] {
        py::list out;
        for (const auto& d : sigpu::cuda_devices()) {
          py::dict info;
          info["index"] = d.index;
          info["name"] = d.name;
          info["sm_count"] = d.sm_count;
          info["compute_capability"] = py::make_tuple(d.compute_major, d.compute_minor);
          info["memory_bytes"] = d.memory_bytes;
          out.append(info);
        }
        return out;
      },
      "The CUDA devices this process sees (empty without CUDA or a GPU), one dict each.");

  m.def(
      "gpu_cache_info",
      [](int device) {
        const DeviceCacheInfo i = device_cache_info(device);
        py::dict d;
        d["bytes"] = i.bytes;
        d["blocks"] = i.blocks;
        d["budget"] = i.budget;
        d["reused"] = i.reused;
        d["allocated"] = i.allocated;
        return d;
      },
      py::arg("device") = 0, R"doc(
The cache of GPU memory behind sigpu's GPU arrays on `device`: bytes and blocks held idle for
reuse, the budget it keeps them under, and how many allocations it served (reused) or made
(allocated, cudaMalloc).
)doc");
  m.def(
      "set_gpu_cache_budget",
      [](std::uint64_t bytes) {
        py::gil_scoped_release nogil;
        set_device_cache_budget(bytes);
      },
      py::arg("bytes"), R"doc(
The bytes of idle GPU memory the cache may keep per device for the next arrays (default: an
eighth of the device's memory); the oldest blocks over it are freed. 0 keeps none.
)doc");
  m.def(
      "release_gpu_cache",
      [] {
        py::gil_scoped_release nogil;
        release_device_cache();
      },
      "Frees the idle GPU memory the cache keeps (arrays in use keep theirs).");

  bind_array(m);
  py::list modules;
  for (const auto& bind : kBindings) {
    auto sub = m.def_submodule(bind.name);
    bind.init(sub);
    modules.append(bind.name);
  }
  m.attr("modules") = modules;
}
