// Owning device and pinned-host buffers. Allocation happens when sizes change, not per use:
// reserve() keeps the allocation when it is already large enough.
#pragma once

#include <cstddef>
#include <utility>

#include "core/cuda/check.hpp"

namespace sigpu::cuda {

/// Where a buffer lives: device memory, or page-locked host memory that DMA reads directly.
struct DeviceMemory {
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    SIGPU_CUDA_CHECK(cudaMalloc(&p, bytes));
    return p;
  }
  static void release(void* p) { cudaFree(p); }
};
struct PinnedMemory {
  static void* allocate(std::size_t bytes) {
    void* p = nullptr;
    SIGPU_CUDA_CHECK(cudaMallocHost(&p, bytes));
    return p;
  }
  static void release(void* p) { cudaFreeHost(p); }
};

template <typename T, typename Memory>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(std::size_t n) { reserve(n); }
  ~Buffer() { release(); }
  Buffer(Buffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), capacity_(std::exchange(o.capacity_, 0)) {}
  Buffer& operator=(Buffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(capacity_, o.capacity_);
    return *this;
  }

  /// Ensures room for n elements; contents are not preserved when it grows.
  void reserve(std::size_t n) {
    if (n <= capacity_) return;
    release();
    // A few bytes of tail padding let word-wise readers load the last partial word.
    ptr_ = static_cast<T*>(Memory::allocate(n * sizeof(T) + 16));
    capacity_ = n;
  }
  void release() {
    if (ptr_) Memory::release(ptr_);
    ptr_ = nullptr;
    capacity_ = 0;
  }
  T* get() const { return ptr_; }
  std::size_t capacity() const { return capacity_; }

 private:
  T* ptr_ = nullptr;
  std::size_t capacity_ = 0;
};

template <typename T>
using DeviceBuffer = Buffer<T, DeviceMemory>;
template <typename T>
using PinnedBuffer = Buffer<T, PinnedMemory>;

/// An owned stream; one per decoder instance. Or, made from a caller's cudaStream_t (passed as
/// void* through headers without CUDA), that stream, borrowed: a stage then queues its work
/// behind the caller's other work on it, with no events between them.
class Stream {
 public:
  Stream() { SIGPU_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  /// Borrows `given` when not null, else owns a new stream.
  explicit Stream(void* given) : s_(static_cast<cudaStream_t>(given)), owned_(!given) {
    if (owned_) SIGPU_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking));
  }
  ~Stream() {
    if (s_ && owned_) cudaStreamDestroy(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void synchronize() const { SIGPU_CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
  bool owned_ = true;
};

/// Times device work on a stream with events.
/// An owned event for ordering one stream after another's work (no timing).
class Event {
 public:
  Event() { SIGPU_CUDA_CHECK(cudaEventCreateWithFlags(&e_, cudaEventDisableTiming)); }
  ~Event() {
    if (e_) cudaEventDestroy(e_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(cudaStream_t s) { SIGPU_CUDA_CHECK(cudaEventRecord(e_, s)); }
  /// Work queued on `s` from now on waits for the work before record().
  void wait_in(cudaStream_t s) const { SIGPU_CUDA_CHECK(cudaStreamWaitEvent(s, e_, 0)); }
  /// Waits on the host for the work before record().
  void synchronize() const { SIGPU_CUDA_CHECK(cudaEventSynchronize(e_)); }

 private:
  cudaEvent_t e_ = nullptr;
};

class EventTimer {
 public:
  EventTimer() {
    SIGPU_CUDA_CHECK(cudaEventCreate(&start_));
    SIGPU_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  void start(cudaStream_t s) { SIGPU_CUDA_CHECK(cudaEventRecord(start_, s)); }
  /// Records the stop event, waits for it and returns the elapsed seconds.
  double stop(cudaStream_t s) {
    SIGPU_CUDA_CHECK(cudaEventRecord(stop_, s));
    SIGPU_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    SIGPU_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms / 1000.0;
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

}  // namespace sigpu::cuda
