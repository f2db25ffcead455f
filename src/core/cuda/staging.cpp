#include "core/cuda/staging.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace sigpu::cuda {
namespace {

/// Pieces with their offsets in the device range they map onto.
class PieceMap {
 public:
  explicit PieceMap(std::span<const HostPiece> pieces) : pieces_(pieces), at_(pieces.size() + 1) {
    for (std::size_t i = 0; i < pieces.size(); ++i) at_[i + 1] = at_[i] + pieces[i].size;
  }
  std::size_t size() const { return at_.back(); }

  /// Calls fn(host, offset_in_range, length) for each part of device bytes [lo, hi); host is null
  /// in a gap.
  template <typename Fn>
  void each(std::size_t lo, std::size_t hi, Fn fn) const {
    std::size_t i =
        static_cast<std::size_t>(std::upper_bound(at_.begin(), at_.end(), lo) - at_.begin()) - 1;
    for (; lo < hi && i < pieces_.size(); ++i) {
      const std::size_t end = std::min(hi, at_[i + 1]);
      if (end > lo) {
        char* host = static_cast<char*>(pieces_[i].data);
        fn(host ? host + (lo - at_[i]) : nullptr, lo, end - lo);
        lo = end;
      }
    }
  }

 private:
  std::span<const HostPiece> pieces_;
  std::vector<std::size_t> at_;
};

/// Bytes [off, off + len) of the pieces to or from a pinned buffer holding exactly them, split
/// over the pool in pieces of 1 MB (which also spreads a fresh destination's page faults).
void parallel_copy(const PieceMap& map, std::size_t off, std::size_t len, unsigned char* pinned,
                   bool to_pinned, ThreadPool& pool) {
  constexpr std::size_t kPiece = std::size_t{1} << 20;
  pool.parallel_for((len + kPiece - 1) / kPiece, [&](std::size_t b, std::size_t e) {
    map.each(off + b * kPiece, off + std::min(len, e * kPiece),
             [&](char* host, std::size_t at, std::size_t n) {
               unsigned char* p = pinned + (at - off);
               if (to_pinned && host)
                 std::memcpy(p, host, n);
               else if (to_pinned)
                 std::memset(p, 0, n);
               else if (host)
                 std::memcpy(host, p, n);
             });
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
  const HostPiece one{const_cast<void*>(h_src), n};
  upload(d_dst, std::span(&one, 1), stream, pool);
}

void Stager::download(void* h_dst, const void* d_src, std::size_t n, cudaStream_t stream,
                      ThreadPool& pool,
                      const std::function<void(std::size_t, std::size_t)>& on_chunk) {
  const HostPiece one{h_dst, n};
  download(std::span(&one, 1), d_src, stream, pool, on_chunk);
}

void Stager::upload(void* d_dst, std::span<const HostPiece> src, cudaStream_t stream,
                    ThreadPool& pool) {
  const PieceMap map(src);
  const std::size_t n = map.size();
  for (std::size_t off = 0, c = 0; off < n; off += chunk_, ++c) {
    const std::size_t len = std::min(chunk_, n - off), b = c & 1;
    buffer_[b].reserve(std::min(chunk_, n));
    if (c >= 2) SIGPU_CUDA_CHECK(cudaEventSynchronize(done_[b]));  // its previous DMA is done
    parallel_copy(map, off, len, buffer_[b].get(), true, pool);
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(d_dst) + off, buffer_[b].get(), len,
                                     cudaMemcpyHostToDevice, stream));
    SIGPU_CUDA_CHECK(cudaEventRecord(done_[b], stream));
  }
}

void Stager::download(std::span<const HostPiece> dst, const void* d_src, cudaStream_t stream,
                      ThreadPool& pool,
                      const std::function<void(std::size_t, std::size_t)>& on_chunk) {
  const PieceMap map(dst);
  const std::size_t n = map.size();
  const std::size_t chunks = (n + chunk_ - 1) / chunk_;
  auto land = [&](std::size_t c) {  // waits for chunk c's DMA, then copies it out of its buffer
    const std::size_t off = c * chunk_, len = std::min(chunk_, n - off), b = c & 1;
    SIGPU_CUDA_CHECK(cudaEventSynchronize(done_[b]));
    parallel_copy(map, off, len, buffer_[b].get(), false, pool);
    if (on_chunk) on_chunk(off, len);
  };
  for (std::size_t c = 0; c < chunks; ++c) {
    const std::size_t off = c * chunk_, len = std::min(chunk_, n - off), b = c & 1;
    buffer_[b].reserve(std::min(chunk_, n));
    // Buffer b last held chunk c - 2, already copied out by land(c - 2) below.
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(buffer_[b].get(), static_cast<const char*>(d_src) + off, len,
                                     cudaMemcpyDeviceToHost, stream));
    SIGPU_CUDA_CHECK(cudaEventRecord(done_[b], stream));
    if (c >= 1) land(c - 1);  // overlaps the DMA of chunk c
  }
  if (chunks) land(chunks - 1);
}

}  // namespace sigpu::cuda
