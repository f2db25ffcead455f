// The array object every sigpu result is handed to Python as, and the readers of inputs.
//
// An Array views memory it shares with the C++ result that produced it (a std::shared_ptr
// owner): NumPy (__array_interface__), CuPy and Numba (__cuda_array_interface__), and any DLPack
// consumer (__dlpack__: PyTorch, JAX, NumPy >= 1.22) take it without a copy, and the memory is
// let go when the last of them does. GPU memory may carry a CUDA event recorded after the
// producer's last write: a consumer's stream is made to wait on it, nothing waits for the device.
// GPU memory the extension allocates comes from its cache (device_cache.hpp), and goes back there
// after the work of the streams its consumers named (__dlpack__ notes the stream it is given).
#pragma once

#include <dlpack/dlpack.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "device_cache.hpp"

namespace sigpu::python {

namespace py = pybind11;

struct Array {
  std::shared_ptr<void> owner;  ///< keeps `data` alive
  void* data = nullptr;
  std::vector<std::int64_t> shape;  ///< C-contiguous
  DLDataType dtype{kDLUInt, 8, 1};
  DLDevice device{kDLCPU, 0};
  /// A cudaEvent_t recorded after the last write to `data` (null: complete when made).
  std::shared_ptr<void> ready;
  /// The cache's block behind `data` when it is one (`owner` holds it too), whose consumers'
  /// streams are noted on it.
  std::shared_ptr<DeviceMemory> memory;

  std::size_t size() const;    ///< elements
  std::size_t nbytes() const;  ///< bytes
};

template <typename T>
DLDataType dl_type() {
  if constexpr (std::is_floating_point_v<T>) return {kDLFloat, sizeof(T) * 8, 1};
  if constexpr (std::is_signed_v<T>) return {kDLInt, sizeof(T) * 8, 1};
  return {kDLUInt, sizeof(T) * 8, 1};
}

/// A host array that owns `values` (moved into a shared owner, so no copy is made).
template <typename Container>
Array host_array(Container&& values, std::vector<std::int64_t> shape) {
  using T = typename std::remove_cvref_t<Container>::value_type;
  auto owner = std::make_shared<std::remove_cvref_t<Container>>(std::forward<Container>(values));
  Array a;
  a.data = owner->data();
  a.owner = owner;
  a.shape = std::move(shape);
  a.dtype = dl_type<T>();
  return a;
}

/// "int16", "float32", ... as NumPy names the DLPack type.
std::string dtype_name(DLDataType t);

/// An input of bytes: bytes, bytearray, memoryview, a NumPy array, any DLPack array (on the host
/// or, where `device_ok`, on a GPU), or a path (str or os.PathLike, mapped read-only).
struct InputBytes {
  std::span<const std::uint8_t> bytes;
  DLDevice device{kDLCPU, 0};
  std::string name;            ///< the path, for messages; empty otherwise
  std::shared_ptr<void> keep;  ///< whatever holds the bytes
};
InputBytes input_bytes(py::handle src, bool device_ok);

/// A regular file mapped read-only once and kept (sigpu._sigpu.MappedFile), taken by input_bytes
/// like its path. A loader drawing clips from a corpus holds these, so that a batch neither opens
/// nor maps its files again, nor faults in pages it touched before. Its descriptor is closed
/// once mapped: a loader of many files holds mappings, not descriptors.
struct MappedFile {
  explicit MappedFile(std::string path);
  std::string name;
  std::shared_ptr<const std::uint8_t> data;  ///< unmaps when the last user lets go
  std::size_t size = 0;
};

/// A typed, C-contiguous host view of an array input (NumPy array, DLPack array, buffer, or a
/// sequence of numbers): GPU arrays are copied to the host, after the producer's stream.
struct HostView {
  const void* data = nullptr;
  std::vector<std::int64_t> shape;
  DLDataType dtype{};
  std::shared_ptr<void> keep;
  std::size_t size() const;
  template <typename T>
  std::span<const T> as() const {
    return {static_cast<const T*>(data), size()};
  }
};
/// Reads `src` as a host array (without a copy when it is one already); anything else that
/// NumPy takes (a list of numbers) is converted to `fallback`.
HostView host_view(py::handle src, DLDataType fallback);

/// A device index from "cuda", "cuda:N" or an int; -1 for "cpu".
struct Placement {
  bool cuda = false;
  int index = 0;
};
/// Parses device= ("auto", "cpu", "cuda", "cuda:N"); "auto" is cuda when a device is visible.
Placement parse_device(const std::string& device);

// ---- CUDA helpers (they throw sigpu::Error in builds without CUDA) ----------------------------

/// Copies host memory into `dst` after its previous users and waits for the copy (on a stream
/// of its own, not the device).
void copy_to_device(DeviceMemory& dst, const void* src, std::size_t bytes);
/// Copies device to host and waits for the copy.
void copy_to_host(void* dst, const void* src, std::size_t bytes, int device);
/// A device array filled from host memory by a copy on the extension's stream: consumers wait
/// for it through the array's event.
Array device_array(const void* src, std::size_t bytes, std::vector<std::int64_t> shape,
                   DLDataType dtype, int device);

/// A device array of `rows` rows of `row_bytes` each, `pitch` bytes apart in device memory that
/// `owner` keeps, complete: a view when the rows follow each other, else a copy on the device
/// (sigpu arrays are C-contiguous), made before it returns.
Array device_rows(std::shared_ptr<void> owner, const void* data, std::size_t pitch,
                  std::size_t row_bytes, std::int64_t rows, DLDataType dtype);

void bind_array(py::module_& m);

}  // namespace sigpu::python
