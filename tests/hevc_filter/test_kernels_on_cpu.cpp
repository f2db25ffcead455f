// The CUDA kernels, run on the CPU under cuda_emulation.hpp, against the CPU reference: the
// hand cases and random pictures, with planes the kernels may move 8 bytes at a time and planes
// they must walk sample by sample.
#include "support/cuda_emulation.hpp"
// (the emulation first)
#include "hevc_filter/cuda/kernels.cuh"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "hevc_filter/check.hpp"

namespace hf = sigpu::hevc_filter;
namespace kernels = sigpu::hevc_filter::cuda;

namespace {

using sigpu::test::emulation::Barriers;

/// A launch of the kernels' own grid and block shapes under the emulation.
template <typename F>
void launch(kernels::Shape grid, kernels::Shape block, Barriers barriers, F kernel) {
  sigpu::test::emulation::launch({grid.x, grid.y, grid.z}, {block.x, block.y, block.z}, barriers,
                                 kernel);
}

// CudaFilter::Impl::run's sequence, on host memory: deblocking in place without SAO; else
// deblocking into a padded copy (or a plain copy when deblocking is off) and SAO back.
void emulated_filter(const hf::PictureInfo& info, const hf::Planes& d) {
  const hf::Geometry g = hf::make_geometry(info);
  const std::vector<hf::CtbParams> ctbs = hf::make_ctb_params(info, g);
  const hf::SideInfo s{info.blocks.data(), info.motion.empty() ? nullptr : info.motion.data(),
                       ctbs.data()};
  const bool vec = kernels::aligned8(d, g.planes);
  const auto grid = kernels::deblock_grid(g);
  if (!g.sao) {
    if (g.deblocking)
      launch(grid, kernels::kDeblockBlock, Barriers::block,
             [&] { kernels::deblock_kernel(g, s, d, d, vec, vec); });
    return;
  }
  // 16-byte aligned rows, as cudaMalloc gives; poisoned, so a read of a sample nobody wrote
  // shows up as a difference.
  std::vector<std::uint16_t> copy[3];
  hf::Planes tmp;
  for (int c = 0; c < g.planes; ++c) {
    tmp.stride[c] = kernels::scratch_stride(g.plane_width(c));
    copy[c].assign(std::size_t(tmp.stride[c]) * g.plane_height(c) + 8, 0xdead);
    tmp.data[c] =
        copy[c].data() + (8 - reinterpret_cast<std::uintptr_t>(copy[c].data()) % 16 / 2) % 8;
    if (!g.deblocking)
      for (int y = 0; y < g.plane_height(c); ++y)
        std::memcpy(tmp.data[c] + y * tmp.stride[c], d.data[c] + y * d.stride[c],
                    std::size_t(g.plane_width(c)) * 2);
  }
  if (g.deblocking)
    launch(grid, kernels::kDeblockBlock, Barriers::block,
           [&] { kernels::deblock_kernel(g, s, d, tmp, vec, true); });
  launch(kernels::sao_grid(g), kernels::kSaoBlock, Barriers::none,
         [&] { kernels::sao_kernel(g, s, tmp, d); });
}

// Filters a copy of `pic` in planes whose rows are `pad` samples longer than the picture,
// starting `shift` samples into their buffer, and checks it against the CPU reference.
void check(const sigpu::test::TestPicture& pic, int pad, int shift) {
  SCOPED_TRACE("pad " + std::to_string(pad) + " shift " + std::to_string(shift));
  auto want = pic, got = pic;
  hf::filter_picture(want.info, want.planes(), sigpu::Backend::cpu);
  std::vector<std::uint16_t> buffer[3];
  hf::Planes d;
  for (int c = 0; c < 3; ++c) {
    if (pic.samples[c].empty()) continue;
    const int w = pic.plane_width(c), h = int(pic.samples[c].size()) / w;
    buffer[c].assign(std::size_t(w + pad) * h + 8, 0x5555);
    d.data[c] = buffer[c].data() + shift;
    d.stride[c] = w + pad;
    for (int y = 0; y < h; ++y)
      std::memcpy(d.data[c] + y * d.stride[c], pic.samples[c].data() + std::size_t(y) * w,
                  std::size_t(w) * 2);
  }
  emulated_filter(pic.info, d);
  for (int c = 0; c < 3; ++c) {
    if (pic.samples[c].empty()) continue;
    const int w = pic.plane_width(c), h = int(pic.samples[c].size()) / w;
    for (int y = 0; y < h; ++y)
      std::memcpy(got.samples[c].data() + std::size_t(y) * w, d.data[c] + y * d.stride[c],
                  std::size_t(w) * 2);
  }
  EXPECT_EQ(sigpu::test::first_difference(want, got), "identical");
}

}  // namespace

TEST(HevcFilterKernelsOnCpu, HandCases) {
  for (const auto& h : sigpu::test::hand_cases()) {
    SCOPED_TRACE(h.name);
    check(h.pic, 0, 0);  // 8-byte pieces
    check(h.pic, 3, 1);  // sample by sample
  }
}

TEST(HevcFilterKernelsOnCpu, RandomPictures) {
  // The emulation is slow: 8 of the 12 random pictures (8 and 10 bit, 4:2:0 and mono, CTB
  // 16/32/64) and the two with a filter switched off.
  const auto all = sigpu::test::random_configs();
  std::vector<sigpu::test::SyntheticOptions> configs(all.begin(), all.begin() + 8);
  configs.insert(configs.end(), all.end() - 2, all.end());
  for (const auto& o : configs) {
    SCOPED_TRACE("seed " + std::to_string(o.seed));
    const auto pic = sigpu::test::make_synthetic_picture(o);
    check(pic, 0, 0);
    check(pic, 3, 1);
  }
}
