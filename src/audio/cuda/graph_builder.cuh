// What the CUDA runner lends each effect kind while it builds a period's CUDA graph: the stream,
// the arena, counted device arrays, and the calls that add kernel nodes and captured child
// graphs. A kind's CUDA processing (effects/*/) adds its groups' nodes through it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "audio/cuda/kernels.cuh"
#include "audio/memory.hpp"
#include "core/cuda/check.hpp"

namespace sigpu::audio::cuda {

/// Device memory counted by the module's allocator hooks.
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t n) : n_(n) {
    if (!n) return;
    SIGPU_CUDA_CHECK(cudaMalloc(&p_, bytes()));
    count_device(static_cast<std::int64_t>(bytes()), 1);
  }
  ~DeviceArray() {
    if (!p_) return;
    cudaFree(p_);
    count_device(-static_cast<std::int64_t>(bytes()), -1);
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  T* get() const { return p_; }
  std::size_t bytes() const { return n_ * sizeof(T); }
  template <typename V>
  void upload(const V& host, cudaStream_t s) {
    if (n_) SIGPU_CUDA_CHECK(cudaMemcpyAsync(p_, host.data(), bytes(), cudaMemcpyHostToDevice, s));
  }
  void zero(cudaStream_t s) {
    if (n_) SIGPU_CUDA_CHECK(cudaMemsetAsync(p_, 0, bytes(), s));
  }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

template <typename V>
auto device_copy(const V& host, cudaStream_t s) {
  DeviceArray<typename V::value_type> d(host.size());
  d.upload(host, s);
  return d;
}

class GraphBuilder {
 public:
  GraphBuilder(cudaGraph_t graph, cudaStream_t stream, float* arena, int period)
      : graph_(graph), stream_(stream), arena_(arena), period_(period) {}
  cudaStream_t stream() const { return stream_; }
  float* arena() const { return arena_; }
  int period() const { return period_; }
  int kernels() const { return kernels_; }

  /// A kernel node running `fn(args)` over `count` threads (a grid-stride loop beyond 4096
  /// blocks) after `deps`. The arguments are copied into the node.
  template <typename Args>
  cudaGraphNode_t add_kernel(void* fn, std::uint32_t count, Args& args,
                             const std::vector<cudaGraphNode_t>& deps) {
    void* argv[1];
    const cudaKernelNodeParams k = launch(fn, count, argv, &args);
    cudaGraphNode_t node;
    SIGPU_CUDA_CHECK(cudaGraphAddKernelNode(&node, graph_, deps.data(), deps.size(), &k));
    ++kernels_;
    return node;
  }

  static cudaKernelNodeParams launch(void* fn, std::uint32_t count, void** argv, void* args) {
    cudaKernelNodeParams k{};
    k.func = fn;
    k.gridDim = dim3(std::min<std::uint32_t>(4096, (count + kBlock - 1) / kBlock));
    k.blockDim = dim3(kBlock);
    argv[0] = args;
    k.kernelParams = argv;
    return k;
  }

  /// What `enqueue` puts on the stream, captured once, as a child graph node after `dep`.
  template <typename Enqueue>
  cudaGraphNode_t add_captured(Enqueue&& enqueue, cudaGraphNode_t dep) {
    cudaGraph_t child = nullptr;
    SIGPU_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue();
    } catch (...) {
      cudaStreamEndCapture(stream_, &child);
      if (child) cudaGraphDestroy(child);
      throw;
    }
    SIGPU_CUDA_CHECK(cudaStreamEndCapture(stream_, &child));
    cudaGraphNode_t node{};
    const cudaError_t err = cudaGraphAddChildGraphNode(&node, graph_, &dep, 1, child);
    cudaGraphDestroy(child);
    SIGPU_CUDA_CHECK(err);
    return node;
  }

  /// One node standing for all of `ends` (itself when there is one).
  cudaGraphNode_t join(const std::vector<cudaGraphNode_t>& ends) {
    if (ends.size() == 1) return ends[0];
    cudaGraphNode_t node{};
    SIGPU_CUDA_CHECK(cudaGraphAddEmptyNode(&node, graph_, ends.data(), ends.size()));
    return node;
  }

 private:
  cudaGraph_t graph_;
  cudaStream_t stream_;
  float* arena_;
  int period_;
  int kernels_ = 0;
};

}  // namespace sigpu::audio::cuda
