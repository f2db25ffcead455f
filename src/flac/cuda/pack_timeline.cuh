// SIGPU_TRACE=1 for batches: when each pack's stages ran on the device, from events read once
// the batch is done, so that tracing does not serialise the copies and kernels it measures.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <utility>
#include <vector>

#include "core/cuda/check.hpp"
#include "core/timer.hpp"

namespace sigpu::flac::cuda {

class PackTimeline {
 public:
  /// A pack's stage boundaries: its upload starts, its upload (and spread) ends, its decode
  /// ends, its download starts, its download ends.
  enum Mark { kUpStart, kUpEnd, kDecodeEnd, kDownStart, kDownEnd, kMarks };

  /// Records nothing unless `on`; else the origin on `s`, before the batch's first work.
  PackTimeline(bool on, cudaStream_t s) : on_(on) {
    if (on_) origin_ = record(s);
  }
  ~PackTimeline() {
    if (origin_) cudaEventDestroy(origin_);
    for (auto& p : packs_)
      for (cudaEvent_t e : p)
        if (e) cudaEventDestroy(e);
  }
  PackTimeline(const PackTimeline&) = delete;
  PackTimeline& operator=(const PackTimeline&) = delete;

  void mark(std::size_t pack, Mark m, cudaStream_t s) {
    if (!on_) return;
    if (packs_.size() <= pack) {
      packs_.resize(pack + 1);
      host_.resize(pack + 1);
    }
    packs_[pack][m] = record(s);
    host_[pack][m] = static_cast<float>(clock_.seconds() * 1e3);
  }

  /// Per pack its stages in ms from the origin, then how long uploads, downloads and both at
  /// once kept the device's copy engines busy. Call once all marked work is done.
  void print(std::FILE* f) const {
    if (!on_) return;
    std::vector<std::pair<float, float>> up, down;
    for (std::size_t k = 0; k < packs_.size(); ++k) {
      std::array<float, kMarks> t{};
      for (int m = 0; m < kMarks; ++m) t[m] = at(packs_[k][m]);
      const auto& h = host_[k];
      std::fprintf(f,
                   "sigpu cuda pack %zu: up %.2f-%.2f, decoded %.2f, down %.2f-%.2f ms (queued "
                   "by the host at %.2f-%.2f, %.2f, %.2f-%.2f)\n",
                   k, t[kUpStart], t[kUpEnd], t[kDecodeEnd], t[kDownStart], t[kDownEnd],
                   h[kUpStart], h[kUpEnd], h[kDecodeEnd], h[kDownStart], h[kDownEnd]);
      up.emplace_back(t[kUpStart], t[kUpEnd]);
      down.emplace_back(t[kDownStart], t[kDownEnd]);
    }
    const float u = busy(up, {}), d = busy(down, {}), both = busy(up, down);
    std::fprintf(f, "sigpu cuda packs: uploading %.1f ms, downloading %.1f ms, both %.1f ms\n", u,
                 d, both);
  }

 private:
  static cudaEvent_t record(cudaStream_t s) {
    cudaEvent_t e = nullptr;
    SIGPU_CUDA_CHECK(cudaEventCreate(&e));
    SIGPU_CUDA_CHECK(cudaEventRecord(e, s));
    return e;
  }
  float at(cudaEvent_t e) const {
    float ms = 0;
    if (e) SIGPU_CUDA_CHECK(cudaEventElapsedTime(&ms, origin_, e));
    return ms;
  }
  /// The time covered by `a`'s intervals, or, with `b`, by both a's and b's.
  static float busy(std::vector<std::pair<float, float>> a,
                    std::vector<std::pair<float, float>> b) {
    auto merged = [](std::vector<std::pair<float, float>> v) {
      std::sort(v.begin(), v.end());
      std::vector<std::pair<float, float>> out;
      for (auto [s, e] : v) {
        if (e <= s) continue;
        if (!out.empty() && s <= out.back().second)
          out.back().second = std::max(out.back().second, e);
        else
          out.emplace_back(s, e);
      }
      return out;
    };
    a = merged(std::move(a));
    float total = 0;
    if (b.empty()) {
      for (auto [s, e] : a) total += e - s;
      return total;
    }
    for (auto [s, e] : merged(std::move(b)))
      for (auto [p, q] : a) total += std::max(0.f, std::min(e, q) - std::max(s, p));
    return total;
  }

  bool on_;
  cudaEvent_t origin_ = nullptr;
  Stopwatch clock_;  ///< the host's time, from about the origin's
  std::vector<std::array<cudaEvent_t, kMarks>> packs_;
  std::vector<std::array<float, kMarks>> host_;
};

}  // namespace sigpu::flac::cuda
