#include "array.hpp"

#include <sigpu/core.hpp>
#include <sigpu/io.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <numeric>

#include "cuda_check.hpp"

namespace sigpu::python {

std::size_t Array::size() const {
  return std::accumulate(shape.begin(), shape.end(), std::size_t{1},
                         [](std::size_t a, std::int64_t b) { return a * std::size_t(b); });
}

std::size_t Array::nbytes() const {
  return size() * dtype.bits / 8;
}

std::size_t HostView::size() const {
  return std::accumulate(shape.begin(), shape.end(), std::size_t{1},
                         [](std::size_t a, std::int64_t b) { return a * std::size_t(b); });
}

std::string dtype_name(DLDataType t) {
  const char* kind = t.code == kDLFloat ? "float" : t.code == kDLInt ? "int" : "uint";
  return kind + std::to_string(t.bits);
}

namespace {

// NumPy's array-interface type string: little-endian (every CUDA host is), kind, bytes.
std::string typestr(DLDataType t) {
  const char kind = t.code == kDLFloat ? 'f' : t.code == kDLInt ? 'i' : 'u';
  return std::string(t.bits == 8 ? "|" : "<") + kind + std::to_string(t.bits / 8);
}

DLDataType parse_typestr(const std::string& s) {
  DLDataType t{kDLUInt, 8, 1};
  if (s.size() < 3) throw UsageError("unsupported array type " + s);
  t.code = s[1] == 'f'                  ? kDLFloat
           : s[1] == 'i'                ? kDLInt
           : s[1] == 'u' || s[1] == 'b' ? kDLUInt
                                        : 255;
  t.bits = static_cast<std::uint8_t>(std::stoi(s.substr(2)) * 8);
  if (t.code == 255 || (s[0] == '>' && t.bits > 8))
    throw UsageError("unsupported array type " + s + " (integers and floats, little-endian)");
  return t;
}

// Runs `release` with the GIL held, whichever thread drops the last reference.
std::shared_ptr<void> keep_object(py::object o) {
  return std::shared_ptr<void>(new py::object(std::move(o)), [](void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<py::object*>(p);
  });
}

#if SIGPU_HAVE_CUDA
// One non-blocking stream per device for the copies the extension makes, so that they wait for
// no other work on the device.
cudaStream_t copy_stream(int device) {
  static std::mutex mutex;
  static std::vector<cudaStream_t> streams;
  std::lock_guard lock(mutex);
  if (device >= int(streams.size())) streams.resize(device + 1, nullptr);
  if (!streams[device]) {
    PY_CUDA_CHECK(cudaSetDevice(device));
    PY_CUDA_CHECK(cudaStreamCreateWithFlags(&streams[device], cudaStreamNonBlocking));
  }
  return streams[device];
}

// The stream a DLPack consumer names: None is the legacy default stream, 1 too, 2 the per-thread
// default stream, anything else a cudaStream_t.
cudaStream_t consumer_stream(const py::object& stream) {
  if (stream.is_none()) return cudaStreamLegacy;
  const auto s = stream.cast<std::intptr_t>();
  if (s == 0 || s == 1) return cudaStreamLegacy;
  if (s == 2) return cudaStreamPerThread;
  return reinterpret_cast<cudaStream_t>(s);
}

// Notes a DLPack consumer's stream on the memory, for its reuse. -1 (the consumer orders its
// own work) and the per-thread default stream (the thread that lets go may not be the one that
// consumed) cannot be named when the memory is let go.
void note_consumer(const Array& a, const py::object& stream) {
  if (!a.memory) return;
  const bool unnamed = !stream.is_none() && stream.cast<std::intptr_t>() == -1;
  cudaStream_t s = unnamed ? nullptr : consumer_stream(stream);
  a.memory->used_on(s == cudaStreamPerThread ? nullptr : s);
}
#endif

#if !SIGPU_HAVE_CUDA
[[noreturn]] void no_cuda() {
  throw Error("the cuda backend is not available: sigpu was built without CUDA");
}
#endif

// What a DLPack capsule hands over: the tensor and the shape it points at, owned together.
struct Exported {
  std::shared_ptr<void> owner;
  std::vector<std::int64_t> shape;
  DLManagedTensor tensor{};
};

void delete_exported(DLManagedTensor* t) {
  delete static_cast<Exported*>(t->manager_ctx);
}

// A capsule nobody consumed still owns its tensor; a consumed one was renamed "used_dltensor".
void capsule_destructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;
  auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (t && t->deleter) t->deleter(t);
}

// Versioned capsules (max_version >= 1) are not made: DLPack lets a producer answer with the
// unversioned capsule every consumer takes.
py::capsule to_dlpack(const Array& a, const py::object& stream, const py::object& /*max_version*/,
                      const py::object& dl_device, const py::object& copy) {
  if (!copy.is_none() && copy.cast<bool>())
    throw py::buffer_error("sigpu arrays are shared, not copied, through DLPack");
  if (!dl_device.is_none()) {
    auto d = dl_device.cast<std::pair<int, int>>();
    if (d.first != a.device.device_type || d.second != a.device.device_id)
      throw py::buffer_error("this array lives on another device");
  }
#if SIGPU_HAVE_CUDA
  if (a.device.device_type == kDLCUDA) note_consumer(a, stream);
#endif
  if (a.device.device_type == kDLCUDA && a.ready) {
#if SIGPU_HAVE_CUDA
    if (stream.is_none() || stream.cast<std::intptr_t>() != -1) {
      PY_CUDA_CHECK(cudaSetDevice(a.device.device_id));
      PY_CUDA_CHECK(
          cudaStreamWaitEvent(consumer_stream(stream), static_cast<cudaEvent_t>(a.ready.get())));
    }
#else
    (void)stream;
#endif
  }
  auto* e = new Exported{a.owner, a.shape, {}};
  e->tensor.dl_tensor.data = a.data;
  e->tensor.dl_tensor.device = a.device;
  e->tensor.dl_tensor.ndim = int(e->shape.size());
  e->tensor.dl_tensor.dtype = a.dtype;
  e->tensor.dl_tensor.shape = e->shape.data();
  e->tensor.dl_tensor.strides = nullptr;  // compact, row-major
  e->tensor.manager_ctx = e;
  e->tensor.deleter = delete_exported;
  return py::capsule(&e->tensor, "dltensor", capsule_destructor);
}

py::dict interface(const Array& a) {
  py::dict d;
  d["shape"] = py::tuple(py::cast(a.shape));
  d["typestr"] = typestr(a.dtype);
  d["data"] = py::make_tuple(reinterpret_cast<std::uintptr_t>(a.data), false);
  d["version"] = 3;
  return d;
}

std::string device_string(DLDevice d) {
  return d.device_type == kDLCUDA ? "cuda:" + std::to_string(d.device_id) : "cpu";
}

// A DLPack capsule taken over from a producer: the tensor is released with the last owner.
std::shared_ptr<DLManagedTensor> take_capsule(py::object capsule) {
  auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (!t) throw py::error_already_set();
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  return std::shared_ptr<DLManagedTensor>(t, [](DLManagedTensor* t) {
    if (t->deleter) {
      py::gil_scoped_acquire gil;
      t->deleter(t);
    }
  });
}

bool compact(const DLTensor& t) {
  if (!t.strides) return true;
  std::int64_t expect = 1;
  for (int i = t.ndim - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.strides[i] != expect) return false;
    expect *= t.shape[i];
  }
  return true;
}

std::size_t tensor_bytes(const DLTensor& t) {
  std::size_t n = t.dtype.bits / 8 * t.dtype.lanes;
  for (int i = 0; i < t.ndim; ++i) n *= std::size_t(t.shape[i]);
  return n;
}

bool on_gpu(py::handle src) {
  if (!py::hasattr(src, "__dlpack_device__")) return false;
  auto d = src.attr("__dlpack_device__")().cast<std::pair<int, int>>();
  return d.first == kDLCUDA || d.first == kDLCUDAManaged;
}

// A GPU array's tensor, after the producer's work: it is handed over on the legacy default
// stream, which is then waited for (that stream alone, not the device).
std::shared_ptr<DLManagedTensor> take_gpu(py::handle src) {
#if SIGPU_HAVE_CUDA
  auto t = take_capsule(src.attr("__dlpack__")(py::arg("stream") = 1));
  PY_CUDA_CHECK(cudaSetDevice(t->dl_tensor.device.device_id));
  PY_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
  if (!compact(t->dl_tensor)) throw UsageError("a GPU array input must be contiguous");
  return t;
#else
  (void)src;
  no_cuda();
#endif
}

}  // namespace

MappedFile::MappedFile(std::string path) : name(std::move(path)) {
  const auto fail = [&](const char* what) {
    throw InputError(std::string(what) + " '" + name + "': " + std::strerror(errno));
  };
  const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open");
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const int err = S_ISREG(st.st_mode) ? errno : EINVAL;
    ::close(fd);
    errno = err;
    fail("cannot map (not a regular file)");
  }
  size = static_cast<std::size_t>(st.st_size);
  void* p = size ? ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0) : nullptr;
  const int err = errno;
  ::close(fd);
  errno = err;
  if (p == MAP_FAILED) fail("cannot map");
  const std::size_t n = size;
  data = std::shared_ptr<const std::uint8_t>(static_cast<const std::uint8_t*>(p),
                                             [n](const std::uint8_t* q) {
                                               if (q) ::munmap(const_cast<std::uint8_t*>(q), n);
                                             });
}

InputBytes input_bytes(py::handle src, bool device_ok) {
  InputBytes in;
  if (py::isinstance<MappedFile>(src)) {
    const auto& f = src.cast<const MappedFile&>();
    in.name = f.name;
    in.bytes = {f.data.get(), f.size};
    in.keep = std::const_pointer_cast<std::uint8_t>(f.data);
    return in;
  }
  if (py::isinstance<py::str>(src) || py::hasattr(src, "__fspath__")) {
    in.name = py::module_::import("os").attr("fspath")(src).cast<std::string>();
    auto file = std::make_shared<io::Input>(in.name);
    py::gil_scoped_release nogil;
    in.bytes = file->seekable() ? file->map() : file->all(std::uint64_t{1} << 40);
    in.keep = file;
    return in;
  }
  if (on_gpu(src)) {
    if (!device_ok) throw UsageError("this input must be in host memory, not on a GPU");
    auto t = take_gpu(src);
    in.bytes = {static_cast<const std::uint8_t*>(t->dl_tensor.data) + t->dl_tensor.byte_offset,
                tensor_bytes(t->dl_tensor)};
    in.device = t->dl_tensor.device;
    in.keep = t;
    return in;
  }
  if (PyObject_CheckBuffer(src.ptr())) {
    auto view = std::shared_ptr<Py_buffer>(new Py_buffer{}, [](Py_buffer* v) {
      py::gil_scoped_acquire gil;
      PyBuffer_Release(v);
      delete v;
    });
    if (PyObject_GetBuffer(src.ptr(), view.get(), PyBUF_C_CONTIGUOUS) != 0)
      throw py::error_already_set();
    in.bytes = {static_cast<const std::uint8_t*>(view->buf), std::size_t(view->len)};
    in.keep = view;
    return in;
  }
  if (py::hasattr(src, "__dlpack__")) {
    auto t = take_capsule(src.attr("__dlpack__")());
    if (!compact(t->dl_tensor)) throw UsageError("an array input must be contiguous");
    in.bytes = {static_cast<const std::uint8_t*>(t->dl_tensor.data) + t->dl_tensor.byte_offset,
                tensor_bytes(t->dl_tensor)};
    in.keep = t;
    return in;
  }
  throw UsageError(std::string("expected bytes, a path or an array, not ") +
                   py::str(py::type::handle_of(src).attr("__name__")).cast<std::string>());
}

HostView host_view(py::handle src, DLDataType fallback) {
  auto np = py::module_::import("numpy");
  py::object arr;
  if (on_gpu(src)) {
#if SIGPU_HAVE_CUDA
    auto t = take_gpu(src);
    const DLTensor& d = t->dl_tensor;
    std::vector<std::int64_t> shape(d.shape, d.shape + d.ndim);
    arr = np.attr("empty")(py::tuple(py::cast(shape)), typestr(d.dtype));
    auto dst = reinterpret_cast<void*>(
        arr.attr("__array_interface__")["data"].cast<py::tuple>()[0].cast<std::uintptr_t>());
    PY_CUDA_CHECK(cudaMemcpy(dst, static_cast<const char*>(d.data) + d.byte_offset, tensor_bytes(d),
                             cudaMemcpyDeviceToHost));
#endif
  } else if (py::hasattr(src, "__array_interface__") || PyObject_CheckBuffer(src.ptr())) {
    arr = np.attr("ascontiguousarray")(src);
  } else if (py::hasattr(src, "__dlpack__")) {
    arr = np.attr("ascontiguousarray")(np.attr("from_dlpack")(src));
  } else {
    arr = np.attr("ascontiguousarray")(src, typestr(fallback));
  }
  auto ai = arr.attr("__array_interface__").cast<py::dict>();
  HostView v;
  v.dtype = parse_typestr(ai["typestr"].cast<std::string>());
  v.shape = ai["shape"].cast<std::vector<std::int64_t>>();
  v.data = reinterpret_cast<const void*>(ai["data"].cast<py::tuple>()[0].cast<std::uintptr_t>());
  v.keep = keep_object(arr);
  return v;
}

Placement parse_device(const std::string& device) {
  if (device == "cpu") return {false, 0};
  if (device == "auto") return {!cuda_devices().empty(), 0};
  if (device == "cuda") return {true, 0};
  if (device.starts_with("cuda:")) {
    const std::string n = device.substr(5);
    if (!n.empty() && n.find_first_not_of("0123456789") == std::string::npos)
      return {true, std::stoi(n)};
  }
  throw UsageError("device must be \"auto\", \"cpu\", \"cuda\" or \"cuda:N\", not \"" + device +
                   "\"");
}

namespace {
/// A copy between host and device on `device`'s copy stream, waited for.
void copy_on_device(void* dst, const void* src, std::size_t bytes, int device, bool to_device,
                    DeviceMemory* written = nullptr) {
#if SIGPU_HAVE_CUDA
  cudaStream_t s = copy_stream(device);
  if (written) written->wait_on(s);
  PY_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes,
                                to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, s));
  PY_CUDA_CHECK(cudaStreamSynchronize(s));
#else
  (void)dst, (void)src, (void)bytes, (void)device, (void)to_device, (void)written;
  no_cuda();
#endif
}
}  // namespace

void copy_to_device(DeviceMemory& dst, const void* src, std::size_t bytes) {
  copy_on_device(dst.data(), src, bytes, dst.device(), true, &dst);
}

void copy_to_host(void* dst, const void* src, std::size_t bytes, int device) {
  copy_on_device(dst, src, bytes, device, false);
}

Array device_rows(std::shared_ptr<void> owner, const void* data, std::size_t pitch,
                  std::size_t row_bytes, std::int64_t rows, DLDataType dtype) {
#if SIGPU_HAVE_CUDA
  cudaPointerAttributes at{};
  PY_CUDA_CHECK(cudaPointerGetAttributes(&at, data));
  const std::int64_t width = std::int64_t(row_bytes / (dtype.bits / 8));
  Array a;
  a.shape = {rows, width};
  a.dtype = dtype;
  a.device = {kDLCUDA, at.device};
  if (pitch == row_bytes) {
    a.owner = std::move(owner);
    a.data = const_cast<void*>(data);
    return a;
  }
  a.memory = device_alloc(row_bytes * std::size_t(rows), at.device);
  a.owner = a.memory;
  a.data = a.memory->data();
  PY_CUDA_CHECK(cudaSetDevice(at.device));
  cudaStream_t s = copy_stream(at.device);
  a.memory->wait_on(s);
  PY_CUDA_CHECK(cudaMemcpy2DAsync(a.data, row_bytes, data, pitch, row_bytes, std::size_t(rows),
                                  cudaMemcpyDeviceToDevice, s));
  // Waited for (microseconds on the device), so that `owner` lets the source go now.
  PY_CUDA_CHECK(cudaStreamSynchronize(s));
  return a;
#else
  (void)owner, (void)data, (void)pitch, (void)row_bytes, (void)rows, (void)dtype;
  no_cuda();
#endif
}

Array device_array(const void* src, std::size_t bytes, std::vector<std::int64_t> shape,
                   DLDataType dtype, int device) {
#if SIGPU_HAVE_CUDA
  Array a;
  a.memory = device_alloc(bytes, device);
  a.owner = a.memory;
  a.data = a.memory->data();
  a.shape = std::move(shape);
  a.dtype = dtype;
  a.device = {kDLCUDA, device};
  // The copy runs on the extension's stream, after the memory's previous users; the array's
  // consumers wait for its event, not for the copy here. From pageable memory the call returns
  // once `src` has been staged.
  cudaStream_t s = copy_stream(device);
  a.memory->wait_on(s);
  PY_CUDA_CHECK(cudaMemcpyAsync(a.data, src, bytes, cudaMemcpyHostToDevice, s));
  cudaEvent_t event = nullptr;
  PY_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  a.ready = std::shared_ptr<void>(event, [](void* e) { cudaEventDestroy(cudaEvent_t(e)); });
  PY_CUDA_CHECK(cudaEventRecord(event, s));
  return a;
#else
  (void)src, (void)bytes, (void)shape, (void)dtype, (void)device;
  no_cuda();
#endif
}

void bind_array(py::module_& m) {
  py::class_<MappedFile>(m, "MappedFile", R"doc(
A file mapped read-only once and kept: every input that takes a path takes this in its place
without opening or mapping the file again (sigpu.flac.ClipLoader holds one per file it draws
from). The mapping ends when the object and every result read from it are gone.
)doc")
      .def(py::init([](const py::object& path) {
             return MappedFile(py::module_::import("os").attr("fspath")(path).cast<std::string>());
           }),
           py::arg("path"))
      .def_readonly("name", &MappedFile::name)
      .def("__len__", [](const MappedFile& f) { return f.size; })
      .def("__repr__", [](const MappedFile& f) { return "<sigpu.MappedFile '" + f.name + "'>"; });

  py::class_<Array>(m, "Array", R"doc(
A decoded result: an n-dimensional, C-contiguous array in host or GPU memory that sigpu owns.

NumPy (``np.asarray``), CuPy (``cupy.asarray``), PyTorch (``torch.from_dlpack``) and any other
DLPack consumer view it without a copy; the memory lives until the last of them lets go.
)doc")
      .def_property_readonly("shape", [](const Array& a) { return py::tuple(py::cast(a.shape)); })
      .def_property_readonly("ndim", [](const Array& a) { return a.shape.size(); })
      .def_property_readonly(
          "dtype", [](const Array& a) { return dtype_name(a.dtype); },
          "NumPy's name of the element type, e.g. \"int16\".")
      .def_property_readonly(
          "device", [](const Array& a) { return device_string(a.device); },
          "\"cpu\" or \"cuda:N\".")
      .def_property_readonly("nbytes", &Array::nbytes)
      .def("__len__", [](const Array& a) { return a.shape.empty() ? 0 : a.shape[0]; })
      .def("__dlpack__", &to_dlpack, py::kw_only(), py::arg("stream") = py::none(),
           py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(),
           py::arg("copy") = py::none(),
           "A DLPack capsule viewing this array. On a GPU, `stream` (the consumer's) is made to "
           "wait for the producer's work; -1 skips that.")
      .def("__dlpack_device__",
           [](const Array& a) {
             return py::make_tuple(int(a.device.device_type), a.device.device_id);
           })
      .def_property_readonly(
          "__array_interface__",
          [](const Array& a) {
            if (a.device.device_type != kDLCPU)
              throw py::attribute_error("a GPU array has no __array_interface__; use .cpu()");
            return interface(a);
          })
      .def_property_readonly(
          "__cuda_array_interface__",
          [](const Array& a) {
            if (a.device.device_type != kDLCUDA)
              throw py::attribute_error("a host array has no __cuda_array_interface__");
#if SIGPU_HAVE_CUDA
            // The interface cannot carry an event: wait for this one (not for the device).
            if (a.ready) PY_CUDA_CHECK(cudaEventSynchronize(cudaEvent_t(a.ready.get())));
            // Its consumers (CuPy, Numba) say nothing of their streams: the legacy default
            // stream, which follows every blocking stream's work, stands for them.
            if (a.memory) a.memory->used_on(cudaStreamLegacy);
#endif
            py::dict d = interface(a);
            d["stream"] = py::none();
            return d;
          })
      .def(
          "cpu",
          [](const Array& a) -> Array {
            if (a.device.device_type == kDLCPU) return a;
#if SIGPU_HAVE_CUDA
            std::vector<std::uint8_t> host(a.nbytes());
            {
              py::gil_scoped_release nogil;
              PY_CUDA_CHECK(cudaSetDevice(a.device.device_id));
              if (a.ready) PY_CUDA_CHECK(cudaEventSynchronize(cudaEvent_t(a.ready.get())));
              PY_CUDA_CHECK(cudaMemcpy(host.data(), a.data, host.size(), cudaMemcpyDeviceToHost));
            }
            Array h = host_array(std::move(host), a.shape);
            h.dtype = a.dtype;
            return h;
#else
            no_cuda();
#endif
          },
          "This array in host memory: itself when it is there, else a copy.")
      .def(
          "numpy",
          [](py::object self) {
            return py::module_::import("numpy").attr("asarray")(self.attr("cpu")());
          },
          "A NumPy array of this array's values (a view of host memory, a copy of GPU memory).")
      .def("__repr__", [](const Array& a) {
        std::string s = "sigpu.Array(shape=(";
        for (std::size_t i = 0; i < a.shape.size(); ++i)
          s += (i ? ", " : "") + std::to_string(a.shape[i]);
        if (a.shape.size() == 1) s += ",";
        return s + "), dtype=" + dtype_name(a.dtype) + ", device=" + device_string(a.device) + ")";
      });
}

}  // namespace sigpu::python
