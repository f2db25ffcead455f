// Measures the bounds a GPU decoder is held against, in the same process run as the benchmark:
// PCIe host<->device bandwidth (pinned and pageable host memory), HBM device-to-device copy
// bandwidth, and what several devices move together (probe_together). Timed with CUDA events, after
// a warm-up copy; the median of `reps` copies.
//
//   auto bw = sigpu::bench::probe_bandwidth(0);   // std::nullopt without CUDA or a device
//   if (bw) std::printf("%s\n", bw->summary().c_str());
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#ifdef SIGPU_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace sigpu::bench {

struct Bandwidth {
  std::size_t bytes = 0;                      ///< size of each copy
  double h2d_pinned = 0, d2h_pinned = 0;      ///< GB/s (1e9 bytes/s)
  double h2d_pageable = 0, d2h_pageable = 0;  ///< GB/s, from pre-touched malloc'd memory
  double d2d = 0;  ///< GB/s of HBM traffic: a device-to-device copy counts its bytes twice
                   ///< (read + write), as CUDA's bandwidthTest does
  std::string summary() const {
    char buf[400];
    std::snprintf(
        buf, sizeof buf,
        "PCIe pinned H2D %.1f GB/s, D2H %.1f GB/s; pageable H2D %.1f GB/s, D2H %.1f GB/s; "
        "HBM device copy %.0f GB/s (read+write); %zu MB copies, median",
        h2d_pinned, d2h_pinned, h2d_pageable, d2h_pageable, d2d, bytes >> 20);
    return buf;
  }
};

/// What several devices move together, pinned (GB/s of bytes over all of them): their links
/// share the host's memory and PCIe root ports, so n devices need not move n times one.
struct Together {
  double h2d = 0, d2h = 0;  ///< every device copying up (or down) at once
  double both = 0;          ///< every device copying up and down at once, both counted
};

#ifdef SIGPU_HAVE_CUDA

namespace detail {
inline void cuda_check(cudaError_t e, const char* call, int line) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("pcie_probe: ") + call + " failed at line " +
                             std::to_string(line) + ": " + cudaGetErrorString(e));
}
#define SIGPU_PROBE_CHECK(call) ::sigpu::bench::detail::cuda_check((call), #call, __LINE__)

// Median GB/s of `reps` copies of `bytes` (each counted `traffic` times), after one warm-up.
inline double time_copies(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
                          int reps, double traffic, cudaStream_t stream) {
  cudaEvent_t a, b;
  SIGPU_PROBE_CHECK(cudaEventCreate(&a));
  SIGPU_PROBE_CHECK(cudaEventCreate(&b));
  SIGPU_PROBE_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream));
  SIGPU_PROBE_CHECK(cudaStreamSynchronize(stream));
  std::vector<double> gbs;
  for (int i = 0; i < reps; ++i) {
    SIGPU_PROBE_CHECK(cudaEventRecord(a, stream));
    SIGPU_PROBE_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, stream));
    SIGPU_PROBE_CHECK(cudaEventRecord(b, stream));
    SIGPU_PROBE_CHECK(cudaEventSynchronize(b));
    float ms = 0;
    SIGPU_PROBE_CHECK(cudaEventElapsedTime(&ms, a, b));
    gbs.push_back(traffic * static_cast<double>(bytes) / (ms * 1e-3) / 1e9);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(gbs.begin(), gbs.end());
  return gbs[gbs.size() / 2];
}
}  // namespace detail

/// Bandwidths on `device`; std::nullopt when there is no device. Throws std::runtime_error
/// when a CUDA call fails.
inline std::optional<Bandwidth> probe_bandwidth(int device, std::size_t bytes = 256u << 20,
                                                int reps = 7) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || device >= count) {
    cudaGetLastError();
    return std::nullopt;
  }
  SIGPU_PROBE_CHECK(cudaSetDevice(device));
  Bandwidth bw;
  bw.bytes = bytes;
  void* pinned = nullptr;
  void *d_a = nullptr, *d_b = nullptr;
  cudaStream_t stream = nullptr;
  std::vector<unsigned char> pageable(bytes, 1);  // touched, so no page faults are timed
  SIGPU_PROBE_CHECK(cudaMallocHost(&pinned, bytes));
  try {
    SIGPU_PROBE_CHECK(cudaMalloc(&d_a, bytes));
    SIGPU_PROBE_CHECK(cudaMalloc(&d_b, bytes));
    SIGPU_PROBE_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    std::fill_n(static_cast<unsigned char*>(pinned), bytes, 1);
    SIGPU_PROBE_CHECK(cudaMemset(d_a, 2, bytes));
    SIGPU_PROBE_CHECK(cudaMemset(d_b, 3, bytes));
    using detail::time_copies;
    bw.h2d_pinned = time_copies(d_a, pinned, bytes, cudaMemcpyHostToDevice, reps, 1, stream);
    bw.d2h_pinned = time_copies(pinned, d_a, bytes, cudaMemcpyDeviceToHost, reps, 1, stream);
    bw.h2d_pageable =
        time_copies(d_a, pageable.data(), bytes, cudaMemcpyHostToDevice, reps, 1, stream);
    bw.d2h_pageable =
        time_copies(pageable.data(), d_a, bytes, cudaMemcpyDeviceToHost, reps, 1, stream);
    bw.d2d = time_copies(d_b, d_a, bytes, cudaMemcpyDeviceToDevice, reps, 2, stream);
  } catch (...) {
    if (stream) cudaStreamDestroy(stream);
    cudaFree(d_a);
    cudaFree(d_b);
    cudaFreeHost(pinned);
    throw;
  }
  cudaStreamDestroy(stream);
  cudaFree(d_a);
  cudaFree(d_b);
  cudaFreeHost(pinned);
  return bw;
}

/// Each of `devices` copies `bytes` from its own pinned buffer up, down, and up and down at once
/// (two streams), all devices started together; the median of `reps` rounds by the host's clock.
/// std::nullopt without a device. Throws std::runtime_error when a CUDA call fails.
inline std::optional<Together> probe_together(const std::vector<int>& devices,
                                              std::size_t bytes = 256u << 20, int reps = 5) {
  int count = 0;
  if (devices.empty() || cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return std::nullopt;
  }
  struct Side {
    void *up = nullptr, *down = nullptr, *d_up = nullptr, *d_down = nullptr;
    cudaStream_t s[2] = {};
  };
  std::vector<Side> sides(devices.size());
  auto release = [&] {
    for (std::size_t i = 0; i < sides.size(); ++i) {
      cudaSetDevice(devices[i]);
      for (cudaStream_t st : sides[i].s)
        if (st) cudaStreamDestroy(st);
      cudaFree(sides[i].d_up);
      cudaFree(sides[i].d_down);
      cudaFreeHost(sides[i].up);
      cudaFreeHost(sides[i].down);
    }
  };
  // Seconds for a round in which each device copies up (`up`) and/or down (`down`).
  auto round = [&](bool up, bool down) {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < sides.size(); ++i) {
      Side& x = sides[i];
      SIGPU_PROBE_CHECK(cudaSetDevice(devices[i]));
      if (up)
        SIGPU_PROBE_CHECK(cudaMemcpyAsync(x.d_up, x.up, bytes, cudaMemcpyHostToDevice, x.s[0]));
      if (down)
        SIGPU_PROBE_CHECK(cudaMemcpyAsync(x.down, x.d_down, bytes, cudaMemcpyDeviceToHost, x.s[1]));
    }
    for (std::size_t i = 0; i < sides.size(); ++i)
      for (cudaStream_t st : sides[i].s) SIGPU_PROBE_CHECK(cudaStreamSynchronize(st));
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  auto median_rate = [&](bool up, bool down) {
    round(up, down);  // warm-up
    std::vector<double> gbs;
    const double moved = double(bytes) * double(sides.size()) * ((up ? 1 : 0) + (down ? 1 : 0));
    for (int r = 0; r < reps; ++r) gbs.push_back(moved / round(up, down) / 1e9);
    std::sort(gbs.begin(), gbs.end());
    return gbs[gbs.size() / 2];
  };
  Together t;
  try {
    for (std::size_t i = 0; i < sides.size(); ++i) {
      if (devices[i] >= count) throw std::runtime_error("pcie_probe: no such device");
      Side& x = sides[i];
      SIGPU_PROBE_CHECK(cudaSetDevice(devices[i]));
      SIGPU_PROBE_CHECK(cudaMallocHost(&x.up, bytes));
      SIGPU_PROBE_CHECK(cudaMallocHost(&x.down, bytes));
      SIGPU_PROBE_CHECK(cudaMalloc(&x.d_up, bytes));
      SIGPU_PROBE_CHECK(cudaMalloc(&x.d_down, bytes));
      for (cudaStream_t& st : x.s)
        SIGPU_PROBE_CHECK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
      std::fill_n(static_cast<unsigned char*>(x.up), bytes, 1);
      std::fill_n(static_cast<unsigned char*>(x.down), bytes, 1);
      SIGPU_PROBE_CHECK(cudaMemset(x.d_down, 2, bytes));
    }
    t.h2d = median_rate(true, false);
    t.d2h = median_rate(false, true);
    t.both = median_rate(true, true);
  } catch (...) {
    release();
    throw;
  }
  release();
  return t;
}

#undef SIGPU_PROBE_CHECK

#else  // no CUDA in this build

inline std::optional<Together> probe_together(const std::vector<int>& /*devices*/,
                                              std::size_t /*bytes*/ = 0, int /*reps*/ = 0) {
  return std::nullopt;
}

inline std::optional<Bandwidth> probe_bandwidth(int /*device*/, std::size_t /*bytes*/ = 0,
                                                int /*reps*/ = 0) {
  return std::nullopt;
}

#endif

}  // namespace sigpu::bench
