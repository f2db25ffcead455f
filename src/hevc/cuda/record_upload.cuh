// A GPU stage's per-picture arrays (records, tables) staged side by side in pinned memory and
// uploaded in one copy on the stage's stream, each at a 256-byte-aligned offset.
#pragma once

#include <cstring>
#include <span>
#include <vector>

#include "core/cuda/buffer.hpp"

namespace sigpu::hevc::cuda {

/// One array to upload: `bytes` from `host` (nothing when 0).
struct HostArray {
  const void* host;
  std::size_t bytes;
};

/// The bytes of a vector, as a HostArray.
template <typename V>
HostArray host_array(const V& v) {
  return {v.data(), v.size() * sizeof(v[0])};
}

class RecordUpload {
 public:
  RecordUpload() {
    // Blocking, not spinning: the caller's cores parse beside the upload.
    SIGPU_CUDA_CHECK(
        cudaEventCreateWithFlags(&staged_, cudaEventDisableTiming | cudaEventBlockingSync));
  }
  ~RecordUpload() { cudaEventDestroy(staged_); }
  RecordUpload(const RecordUpload&) = delete;
  RecordUpload& operator=(const RecordUpload&) = delete;

  /// Queues the upload of `arrays` on `stream`; at(k) is then array k's device copy.
  void upload(std::span<const HostArray> arrays, cudaStream_t stream) {
    at_.resize(arrays.size());
    std::size_t total = 0;
    for (std::size_t k = 0; k < arrays.size(); ++k) {
      at_[k] = total;
      total += (arrays[k].bytes + 255) & ~std::size_t(255);
    }
    // The previous picture's upload may still be reading the staging buffer.
    SIGPU_CUDA_CHECK(cudaEventSynchronize(staged_));
    staging_.reserve(total);
    device_.reserve(total);
    for (std::size_t k = 0; k < arrays.size(); ++k)
      if (arrays[k].bytes) std::memcpy(staging_.get() + at_[k], arrays[k].host, arrays[k].bytes);
    SIGPU_CUDA_CHECK(
        cudaMemcpyAsync(device_.get(), staging_.get(), total, cudaMemcpyHostToDevice, stream));
    SIGPU_CUDA_CHECK(cudaEventRecord(staged_, stream));
  }

  /// Array k of the last upload, in device memory, as T.
  template <typename T = std::uint8_t>
  const T* at(std::size_t k) const {
    return reinterpret_cast<const T*>(device_.get() + at_[k]);
  }

 private:
  cudaEvent_t staged_{};
  sigpu::cuda::PinnedBuffer<std::uint8_t> staging_;
  sigpu::cuda::DeviceBuffer<std::uint8_t> device_;
  std::vector<std::size_t> at_;
};

}  // namespace sigpu::hevc::cuda
