#include "core/cuda/staging.hpp"

#include <algorithm>
#include <cstring>

namespace sigpu::cuda {
namespace {

void parallel_copy(void* dst, const void* src, std::size_t n, ThreadPool& pool) {
  constexpr std::size_t kPiece = std::size_t{1} << 20;
  pool.parallel_for((n + kPiece - 1) / kPiece, [&](std::size_t b, std::size_t e) {
    const std::size_t lo = b * kPiece, hi = std::min(n, e * kPiece);
    std::memcpy(static_cast<char*>(dst) + lo, static_cast<const char*>(src) + lo, hi - lo);
  });
}

}  // namespace

Stager::Stager(std::size_t chunk_bytes) : chunk_(chunk_bytes) {
  for (auto& e : done_) SIGPU_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
}

Stager::~Stager() {
  for (auto& e : done_) cudaEventDestroy(e);
}

void Stager::upload(void* d_dst, const void* h_src, std::size_t n, cudaStream_t stream,
                    ThreadPool& pool) {
  for (std::size_t off = 0, c = 0; off < n; off += chunk_, ++c) {
    const std::size_t len = std::min(chunk_, n - off), b = c & 1;
    buffer_[b].reserve(chunk_);
    if (c >= 2) SIGPU_CUDA_CHECK(cudaEventSynchronize(done_[b]));  // its previous DMA is done
    parallel_copy(buffer_[b].get(), static_cast<const char*>(h_src) + off, len, pool);
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(d_dst) + off, buffer_[b].get(), len,
                                     cudaMemcpyHostToDevice, stream));
    SIGPU_CUDA_CHECK(cudaEventRecord(done_[b], stream));
  }
}

void Stager::download(void* h_dst, const void* d_src, std::size_t n, cudaStream_t stream,
                      ThreadPool& pool,
                      const std::function<void(std::size_t, std::size_t)>& on_chunk) {
  const std::size_t chunks = (n + chunk_ - 1) / chunk_;
  auto land = [&](std::size_t c) {  // waits for chunk c's DMA, then copies it out of its buffer
    const std::size_t off = c * chunk_, len = std::min(chunk_, n - off), b = c & 1;
    SIGPU_CUDA_CHECK(cudaEventSynchronize(done_[b]));
    parallel_copy(static_cast<char*>(h_dst) + off, buffer_[b].get(), len, pool);
    if (on_chunk) on_chunk(off, len);
  };
  for (std::size_t c = 0; c < chunks; ++c) {
    const std::size_t off = c * chunk_, len = std::min(chunk_, n - off), b = c & 1;
    buffer_[b].reserve(chunk_);
    // Buffer b last held chunk c - 2, already copied out by land(c - 2) below.
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(buffer_[b].get(), static_cast<const char*>(d_src) + off, len,
                                     cudaMemcpyDeviceToHost, stream));
    SIGPU_CUDA_CHECK(cudaEventRecord(done_[b], stream));
    if (c >= 1) land(c - 1);  // overlaps the DMA of chunk c
  }
  if (chunks) land(chunks - 1);
}

}  // namespace sigpu::cuda
