// HEVC in-loop filters (deblocking + SAO) per picture, side by side in one run: the CPU filter
// on one core (the serial reference) and on all cores, and the CUDA filter with the planes
// already in device memory. Pictures are synthetic with realistic All-Intra side information:
// CUs of 8..64, QP 22..37, SAO on about 80% of the CTBs of each component, 4:2:0. Every GPU
// result is checked bit-identical to the CPU reference; a mismatch prints loudly and exits 1.
//
//   hevc_filter_bench [--reps N] [--sizes 1080p,4k] [--bit-depth 8|10] [--no-cpu] [--no-gpu]
//
// GPU columns, each the median (and min..max) of N runs after a warm-up:
//   kernels   both launches with the side information already on the device (CUDA events)
//   +upload   filter_device: validation, packing into pinned memory, the side-information copy
//             and both launches, wall time to synchronize
//   deblock   the deblocking launch alone (the same picture with SAO off)
// The HBM copy bandwidth measured in the same run gives the floor: deblocking reads and writes
// every sample once, SAO once more.
#include <sigpu/core.hpp>
#include <sigpu/hevc_filter.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/timer.hpp"
#include "hevc_filter/synthetic.hpp"

#ifdef SIGPU_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace hf = sigpu::hevc_filter;

namespace {

struct Stats {
  double median = 0, min = 0, max = 0;
};

Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

/// Times fn (in ms) reps times after one warm-up; prepare runs untimed before each call.
template <typename Prepare, typename Fn>
Stats time_cpu(int reps, Prepare prepare, Fn fn) {
  std::vector<double> ms;
  for (int r = 0; r <= reps; ++r) {
    prepare();
    sigpu::Stopwatch w;
    fn();
    if (r) ms.push_back(w.seconds() * 1e3);
  }
  return stats(ms);
}

#ifdef SIGPU_HAVE_CUDA
#define CHECK(call)                                                                                \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) throw sigpu::Error(std::string(#call) + ": " + cudaGetErrorString(e_)); \
  } while (0)

struct GpuRow {
  Stats kernels, with_upload, deblock;
  double copy_gbs = 0;
  bool same = false;
};

GpuRow run_gpu(const sigpu::test::SyntheticPicture& pic, const sigpu::test::SyntheticPicture& want,
               int reps) {
  GpuRow row;
  hf::CudaFilter gpu;
  auto st = static_cast<cudaStream_t>(gpu.stream());
  std::size_t bytes[3] = {}, total = 0;
  for (int c = 0; c < 3; ++c) total += bytes[c] = pic.samples[c].size() * 2;
  std::uint16_t *work = nullptr, *pristine = nullptr;
  CHECK(cudaMalloc(&work, total));
  CHECK(cudaMalloc(&pristine, total));
  hf::Planes d;
  std::size_t off = 0;
  for (int c = 0; c < 3; ++c) {
    CHECK(cudaMemcpy(reinterpret_cast<char*>(pristine) + off, pic.samples[c].data(), bytes[c],
                     cudaMemcpyHostToDevice));
    d.data[c] = reinterpret_cast<std::uint16_t*>(reinterpret_cast<char*>(work) + off);
    d.stride[c] = c ? pic.info.width / 2 : pic.info.width;
    off += bytes[c];
  }
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  auto restore = [&] {
    CHECK(cudaMemcpyAsync(work, pristine, total, cudaMemcpyDeviceToDevice, st));
  };
  auto time_kernels = [&](const hf::PictureInfo& info) {
    gpu.upload(info);
    std::vector<double> ms;
    for (int r = 0; r <= reps; ++r) {
      restore();
      CHECK(cudaEventRecord(a, st));
      gpu.run(d);
      CHECK(cudaEventRecord(b, st));
      CHECK(cudaEventSynchronize(b));
      float t = 0;
      CHECK(cudaEventElapsedTime(&t, a, b));
      if (r) ms.push_back(t);
    }
    return stats(ms);
  };
  row.kernels = time_kernels(pic.info);
  // The last run left the filtered picture in `work`.
  sigpu::test::SyntheticPicture got = pic;
  off = 0;
  for (int c = 0; c < 3; ++c) {
    CHECK(cudaMemcpy(got.samples[c].data(), reinterpret_cast<char*>(work) + off, bytes[c],
                     cudaMemcpyDeviceToHost));
    off += bytes[c];
  }
  row.same = true;
  for (int c = 0; c < 3; ++c) row.same = row.same && got.samples[c] == want.samples[c];

  std::vector<double> ms;
  for (int r = 0; r <= reps; ++r) {
    restore();
    gpu.synchronize();
    sigpu::Stopwatch w;
    gpu.filter_device(pic.info, d);
    gpu.synchronize();
    if (r) ms.push_back(w.seconds() * 1e3);
  }
  row.with_upload = stats(ms);

  hf::PictureInfo no_sao = pic.info;
  no_sao.sao = false;
  row.deblock = time_kernels(no_sao);

  // HBM copy bandwidth: read + write of the picture.
  ms.clear();
  for (int r = 0; r <= reps; ++r) {
    CHECK(cudaEventRecord(a, st));
    restore();
    CHECK(cudaEventRecord(b, st));
    CHECK(cudaEventSynchronize(b));
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, a, b));
    if (r) ms.push_back(t);
  }
  row.copy_gbs = 2.0 * double(total) / (stats(ms).median * 1e-3) / 1e9;
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  cudaFree(work);
  cudaFree(pristine);
  return row;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  int reps = 20, bit_depth = 8;
  bool cpu = true, gpu = true;
  std::vector<std::string> sizes{"1080p", "4k"};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--reps" && i + 1 < argc) {
      reps = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--bit-depth" && i + 1 < argc) {
      bit_depth = std::atoi(argv[++i]);
    } else if (arg == "--sizes" && i + 1 < argc) {
      sizes.clear();
      std::string list = argv[++i];
      for (std::size_t p = 0; p <= list.size();) {
        const std::size_t q = std::min(list.find(',', p), list.size());
        sizes.push_back(list.substr(p, q - p));
        p = q + 1;
      }
    } else if (arg == "--no-cpu") {
      cpu = false;
    } else if (arg == "--no-gpu") {
      gpu = false;
    } else {
      std::fprintf(stderr,
                   "usage: hevc_filter_bench [--reps N] [--sizes 1080p,4k] [--bit-depth 8|10] "
                   "[--no-cpu] [--no-gpu]\n");
      return 2;
    }
  }
  const auto devices = sigpu::cuda_devices();
  if (gpu && devices.empty()) {
    std::printf("no CUDA device: CPU only\n");
    gpu = false;
  }
  std::printf(
      "HEVC deblocking + SAO per picture, %d-bit 4:2:0, All-Intra synthetic side info "
      "(CU 8..64, QP 22..37, SAO on ~80%% of CTBs), %d reps\n",
      bit_depth, reps);
  std::printf("GPU: %s; CPU: %u hardware threads\n",
              devices.empty() ? "none" : devices[0].name.c_str(),
              std::thread::hardware_concurrency());
  std::printf("%-6s | %9s %9s | %9s %19s %9s %9s | %8s %8s | %5s %7s\n", "size", "cpu 1c ms",
              "cpu all", "gpu ms", "(min..max)", "+upload", "deblock", "x 1core", "x all", "same",
              "HBM%");
  int status = 0;
  try {
    for (const std::string& size : sizes) {
      int w = 0, h = 0;
      if (size == "1080p") {
        w = 1920;
        h = 1080;
      } else if (size == "4k") {
        w = 3840;
        h = 2160;
      } else {
        std::fprintf(stderr, "hevc_filter_bench: unknown size %s (1080p or 4k)\n", size.c_str());
        return 2;
      }
      const auto pic =
          sigpu::test::make_synthetic_picture(sigpu::test::all_intra_options(w, h, bit_depth));
      auto want = pic, work = pic;
      hf::filter_picture(want.info, want.planes(), sigpu::Backend::cpu);
      Stats c1{}, cn{};
      auto restore = [&] {
        for (int c = 0; c < 3; ++c) work.samples[c] = pic.samples[c];
      };
      if (cpu) {
        c1 = time_cpu(std::max(1, reps / 4), restore,
                      [&] { hf::filter_picture(work.info, work.planes(), sigpu::Backend::cpu); });
        cn = time_cpu(reps, restore, [&] {
          hf::filter_picture(work.info, work.planes(), sigpu::Backend::cpu_parallel);
        });
        for (int c = 0; c < 3; ++c)
          if (work.samples[c] != want.samples[c]) {
            std::printf("MISMATCH: cpu-parallel differs from cpu at %s\n", size.c_str());
            status = 1;
          }
      }
      if (!gpu) {
        std::printf("%-6s | %9.2f %9.2f |\n", size.c_str(), c1.median, cn.median);
        continue;
      }
#ifdef SIGPU_HAVE_CUDA
      const GpuRow g = run_gpu(pic, want, reps);
      std::size_t bytes = 0;
      for (int c = 0; c < 3; ++c) bytes += pic.samples[c].size() * 2;
      // Floor: deblocking reads + writes each sample, SAO reads + writes it again.
      const double floor_ms = 4.0 * double(bytes) / (g.copy_gbs * 1e9) * 1e3;
      std::printf(
          "%-6s | %9.2f %9.2f | %9.3f %8.3f..%-8.3f %9.3f %9.3f | %8.1f %8.1f | %5s %6.0f%%\n",
          size.c_str(), c1.median, cn.median, g.kernels.median, g.kernels.min, g.kernels.max,
          g.with_upload.median, g.deblock.median, cpu ? c1.median / g.kernels.median : 0.0,
          cpu ? cn.median / g.kernels.median : 0.0, g.same ? "yes" : "NO",
          100.0 * floor_ms / g.kernels.median);
      if (!g.same) {
        std::printf("MISMATCH: cuda differs from the cpu reference at %s\n", size.c_str());
        status = 1;
      }
#endif
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hevc_filter_bench: %s\n", e.what());
    return 1;
  }
  return status;
}
