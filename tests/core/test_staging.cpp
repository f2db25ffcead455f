// The staged host <-> device copies (core/cuda/staging.hpp): whole buffers and runs of pieces
// with gaps, across chunk boundaries, round-tripped through device memory.
#include <gtest/gtest.h>

#include <sigpu/core.hpp>

#ifdef SIGPU_HAVE_CUDA
#include <cstdint>
#include <vector>

#include "core/cuda/buffer.hpp"
#include "core/cuda/staging.hpp"

namespace sigpu::cuda {
namespace {

class StagingGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  }
};

std::vector<std::uint8_t> pattern(std::size_t n, unsigned seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(i * 131 + seed * 7 + 1);
  return v;
}

TEST_F(StagingGpu, PiecesWithGapsRoundTripAcrossChunks) {
  Stager stager(4096);  // small chunks: pieces straddle them
  ThreadPool& pool = ThreadPool::shared();
  Stream stream;
  // Sizes around the chunk and the 1 MB copy piece, a zero-size piece, gaps between.
  const std::vector<std::size_t> sizes = {1, 4095, 4097, 0, 10000, (1u << 20) + 3, 17};
  std::vector<std::vector<std::uint8_t>> src;
  std::vector<HostPiece> up, down;
  std::vector<std::vector<std::uint8_t>> dst;
  std::size_t total = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    src.push_back(pattern(sizes[i], static_cast<unsigned>(i)));
    dst.emplace_back(sizes[i], 0xEE);
    up.push_back({src.back().data(), sizes[i]});
    up.push_back({nullptr, 3 + i});  // a gap: zeros go up, nothing comes down
    total += sizes[i] + 3 + i;
  }
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    down.push_back({dst[i].data(), sizes[i]});
    down.push_back({nullptr, 3 + i});
  }
  DeviceBuffer<std::uint8_t> d(total);
  stager.upload(d.get(), up, stream.get(), pool);
  std::vector<std::uint8_t> whole(total, 0xCC);
  stager.download(whole.data(), d.get(), total, stream.get(), pool);
  std::size_t at = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    EXPECT_TRUE(std::equal(src[i].begin(), src[i].end(), whole.begin() + at)) << "piece " << i;
    at += sizes[i];
    for (std::size_t g = 0; g < 3 + i; ++g) EXPECT_EQ(whole[at + g], 0) << "gap after " << i;
    at += 3 + i;
  }
  stager.download(down, d.get(), stream.get(), pool);
  for (std::size_t i = 0; i < sizes.size(); ++i) EXPECT_EQ(dst[i], src[i]) << "piece " << i;
}

}  // namespace
}  // namespace sigpu::cuda
#endif
