// The CUDA filters against the CPU reference: the hand-computed cases, random pictures of every
// configuration (bit-identical), the filter switches, and the device-resident asynchronous API.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include <sigpu/hevc_filter.hpp>

#include "hevc_filter/check.hpp"

#ifdef SIGPU_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace hf = sigpu::hevc_filter;
using sigpu::Backend;
using sigpu::test::SyntheticOptions;
using sigpu::test::SyntheticPicture;

namespace {

bool have_gpu() {
  return !sigpu::cuda_devices().empty();
}

SyntheticPicture filtered(SyntheticPicture p, Backend b) {
  hf::filter_picture(p.info, p.planes(), b);
  return p;
}

}  // namespace

TEST(HevcFilterGpu, HandCases) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  for (auto& h : sigpu::test::hand_cases()) sigpu::test::check_hand_case(h, Backend::cuda);
}

TEST(HevcFilterGpu, RandomPicturesMatchCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  hf::CudaFilter gpu;
  std::vector<SyntheticOptions> configs = sigpu::test::random_configs();
  // Larger pictures with realistic side information.
  SyntheticOptions big = sigpu::test::all_intra_options(1920, 1080, 8);
  big.inter = 0.3;
  big.no_filter = 0.02;
  big.max_offset_div2 = 6;
  big.slices = 3;
  big.tile_cols = 3;
  big.tile_rows = 2;
  big.across_tiles = false;
  big.seed = 1000;
  configs.push_back(big);
  big.bit_depth = 10;
  big.log2_ctb = 5;
  big.max_log2_cu = 5;
  big.seed = 1001;
  configs.push_back(big);
  for (const SyntheticOptions& o : configs) {
    SCOPED_TRACE("seed " + std::to_string(o.seed) + " " + std::to_string(o.width) + "x" +
                 std::to_string(o.height) + " bd " + std::to_string(o.bit_depth));
    const auto original = sigpu::test::make_synthetic_picture(o);
    const auto cpu = filtered(original, Backend::cpu);
    auto g = original;
    gpu.filter(g.info, g.planes());
    EXPECT_EQ(sigpu::test::first_difference(cpu, g), "identical");
  }
}

#ifdef SIGPU_HAVE_CUDA
// filter_device returns before the GPU is done; the side information may change at once, and
// consecutive pictures of different sizes on one instance each come out right.
TEST(HevcFilterGpu, DeviceResidentAsync) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  hf::CudaFilter gpu;
  std::vector<SyntheticPicture> pics, want;
  std::vector<std::uint16_t*> mem;
  std::vector<hf::Planes> dev;
  for (int k = 0; k < 3; ++k) {
    SyntheticOptions o;
    o.width = 64 * (3 + 2 * k);
    o.height = 8 * (11 + 3 * k);
    o.log2_ctb = 4 + k;
    o.max_log2_cu = o.log2_ctb;
    o.bit_depth = k == 1 ? 10 : 8;
    o.sao = k != 1;  // deblocking in place
    o.seed = 77 + std::uint64_t(k);
    pics.push_back(sigpu::test::make_synthetic_picture(o));
    want.push_back(filtered(pics.back(), Backend::cpu));
  }
  for (std::size_t k = 0; k < pics.size(); ++k) {
    auto& p = pics[k];
    // After the first picture, rows are 3 samples longer than the width: neither 8-byte aligned
    // nor a multiple of 4, so the kernels take their sample-by-sample paths.
    const int pad = k ? 3 : 0;
    hf::Planes d;
    for (int c = 0; c < 3; ++c) {
      const int w = c ? p.info.width / 2 : p.info.width, h = c ? p.info.height / 2 : p.info.height;
      std::uint16_t* m = nullptr;
      ASSERT_EQ(cudaMalloc(&m, std::size_t(w + pad) * h * 2), cudaSuccess);
      ASSERT_EQ(cudaMemcpy2D(m, std::size_t(w + pad) * 2, p.samples[c].data(), std::size_t(w) * 2,
                             std::size_t(w) * 2, h, cudaMemcpyHostToDevice),
                cudaSuccess);
      mem.push_back(m);
      d.data[c] = m;
      d.stride[c] = w + pad;
    }
    dev.push_back(d);
    gpu.filter_device(p.info, d);
    // The call has staged what it needs: spoil the side information before the GPU finishes.
    for (auto& b : p.info.blocks) b.qp_y = 51;
    p.info.sao_params.assign(p.info.sao_params.size(), {});
  }
  gpu.synchronize();
  for (std::size_t k = 0; k < pics.size(); ++k) {
    for (int c = 0; c < 3; ++c) {
      const int w = c ? pics[k].info.width / 2 : pics[k].info.width;
      const int h = c ? pics[k].info.height / 2 : pics[k].info.height;
      ASSERT_EQ(cudaMemcpy2D(pics[k].samples[c].data(), std::size_t(w) * 2, dev[k].data[c],
                             std::size_t(dev[k].stride[c]) * 2, std::size_t(w) * 2, h,
                             cudaMemcpyDeviceToHost),
                cudaSuccess);
    }
    EXPECT_EQ(sigpu::test::first_difference(want[k], pics[k]), "identical") << "picture " << k;
  }
  for (auto* m : mem) cudaFree(m);
}

// stage() on one thread, filter_staged() on another instance's stream: the planes of
// filter_device, from side information checked once; stage() refuses what filter refuses.
TEST(HevcFilterGpu, StagedSideInformation) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  SyntheticOptions o = sigpu::test::all_intra_options(704, 272, 10);
  o.inter = 0.4;
  o.seed = 4242;
  const auto original = sigpu::test::make_synthetic_picture(o);
  const auto want = filtered(original, Backend::cpu);
  auto p = original;
  void* pinned = nullptr;
  ASSERT_EQ(cudaMallocHost(&pinned, hf::CudaFilter::staged_bytes(p.info)), cudaSuccess);
  std::thread([&] { hf::CudaFilter::stage(p.info, pinned); }).join();
  p.info = {};  // filter_staged reads only what stage() wrote
  hf::Planes d;
  std::vector<std::uint16_t*> mem;
  for (int c = 0; c < 3; ++c) {
    const int w = c ? o.width / 2 : o.width, h = c ? o.height / 2 : o.height;
    std::uint16_t* m = nullptr;
    ASSERT_EQ(cudaMalloc(&m, std::size_t(w) * h * 2), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(m, p.samples[c].data(), std::size_t(w) * h * 2, cudaMemcpyHostToDevice),
              cudaSuccess);
    mem.push_back(m);
    d.data[c] = m;
    d.stride[c] = w;
  }
  hf::CudaFilter gpu;
  gpu.filter_staged(pinned, d);
  gpu.synchronize();
  for (int c = 0; c < 3; ++c)
    ASSERT_EQ(
        cudaMemcpy(p.samples[c].data(), d.data[c], p.samples[c].size() * 2, cudaMemcpyDeviceToHost),
        cudaSuccess);
  EXPECT_EQ(sigpu::test::first_difference(want, p), "identical");
  auto bad = original;
  bad.info.blocks[5].qp_y = 99;
  EXPECT_THROW(hf::CudaFilter::stage(bad.info, pinned), sigpu::Error);
  for (auto* m : mem) cudaFree(m);
  cudaFreeHost(pinned);
}
#endif
