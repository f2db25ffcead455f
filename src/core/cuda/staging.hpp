// Host <-> device copies of ordinary (pageable) memory at pinned speed: the data goes through
// two pinned buffers in chunks, the copy between user memory and the pinned buffer is split over
// the thread pool, and it overlaps the DMA of the neighbouring chunk. Splitting over cores also
// spreads the page faults of a freshly allocated destination, which one thread cannot absorb at
// PCIe speed.
#pragma once

#include <cstddef>
#include <functional>
#include <span>

#include "core/cuda/buffer.hpp"
#include "core/thread_pool.hpp"

namespace sigpu::cuda {

/// A run of host bytes that maps onto consecutive device bytes; a null `data` is a gap (skipped
/// on download, zeros on upload).
struct HostPiece {
  void* data = nullptr;
  std::size_t size = 0;
};

class Stager {
 public:
  explicit Stager(std::size_t chunk_bytes = std::size_t{64} << 20);
  ~Stager();
  Stager(const Stager&) = delete;
  Stager& operator=(const Stager&) = delete;

  /// Copies n bytes host -> device; returns when the device copy has been enqueued and the
  /// source may be reused (the last DMA may still run on `stream`).
  void upload(void* d_dst, const void* h_src, std::size_t n, cudaStream_t stream, ThreadPool& pool);

  /// Copies n bytes device -> host, after the work already queued on `stream`. on_chunk(offset,
  /// length) runs on the calling thread as each chunk lands in h_dst, in order.
  void download(void* h_dst, const void* d_src, std::size_t n, cudaStream_t stream,
                ThreadPool& pool,
                const std::function<void(std::size_t, std::size_t)>& on_chunk = {});

  /// The same for many host buffers, one after another on the device: a batch of files moves
  /// in large DMAs and one pool job per chunk instead of a small transfer each.
  void upload(void* d_dst, std::span<const HostPiece> src, cudaStream_t stream, ThreadPool& pool);
  void download(std::span<const HostPiece> dst, const void* d_src, cudaStream_t stream,
                ThreadPool& pool,
                const std::function<void(std::size_t, std::size_t)>& on_chunk = {});

 private:
  std::size_t chunk_;
  PinnedBuffer<unsigned char> buffer_[2];
  cudaEvent_t done_[2]{};
};

}  // namespace sigpu::cuda
