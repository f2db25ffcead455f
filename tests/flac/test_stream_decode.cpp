// The CUDA streaming path (DecodeOptions::device_memory_budget): files many times the budget
// decode to exactly what the whole-file path gives (bytes, damage, MD5), in every format and
// layout, with variable block sizes and damage, and the device memory held stays within the
// budget. Runs on the GPU machine (label `gpu`); skips cleanly without a device.
#include <gtest/gtest.h>

#include <sigpu/flac.hpp>

#include <string>
#include <vector>

#include "support/libflac_oracle.hpp"
#include "support/signals.hpp"
#include "support/twin.hpp"
#include "support/var_encoder.hpp"

#ifdef SIGPU_HAVE_CUDA
#include "flac/cuda/decode_path.hpp"
#endif

namespace sigpu::flac {
namespace {

namespace twin = test::twin;

#ifdef SIGPU_HAVE_CUDA
class FlacStreamGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
    cuda::set_output_fill(twin::kPoison);  // a sample a chunk forgets shows up
  }
  void TearDown() override { cuda::set_output_fill(0); }
};

void expect_streams_like_whole(CudaDecoder& gpu, std::span<const std::uint8_t> f,
                               std::uint64_t budget, const std::string& what,
                               SampleFormat fmt = SampleFormat::raw32,
                               Layout layout = Layout::interleaved) {
  SCOPED_TRACE(what);
  const Decoded whole = gpu.decode(f, {.format = fmt, .layout = layout});
  const Decoded streamed =
      gpu.decode(f, {.format = fmt, .layout = layout, .device_memory_budget = budget});
  EXPECT_EQ(streamed.pcm.samples, whole.pcm.samples);
  EXPECT_TRUE(twin::equal(whole.pcm.bytes, streamed.pcm.bytes)) << "PCM differs";
  EXPECT_EQ(streamed.report.md5, whole.report.md5);
  ASSERT_EQ(streamed.report.damage.size(), whole.report.damage.size());
  for (std::size_t d = 0; d < whole.report.damage.size(); ++d)
    EXPECT_EQ(streamed.report.damage[d].message(), whole.report.damage[d].message());
  EXPECT_LE(cuda::streaming_device_bytes(), budget) << "device memory over the budget";
  EXPECT_GT(std::uint64_t(whole.pcm.bytes.size()), 3 * budget) << "should take many chunks";
}

TEST_F(FlacStreamGpu, LongFileThroughASmallBudget) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  const auto pcm = test::make_signal(test::Signal::music, 2, 16, 48000 * 120, 5);
  test::LibflacEncoderOptions o;
  o.level = 8;
  const auto f = test::encode_with_libflac(pcm, 2, 16, 48000, o);
  CudaDecoder gpu;
  const std::uint64_t budget = 2u << 20;
  expect_streams_like_whole(gpu, f, budget, "2 min, 2 MB budget");
  const Decoded d = gpu.decode(f, {.device_memory_budget = budget});
  EXPECT_EQ(d.report.md5, Md5Check::match);
  expect_streams_like_whole(gpu, f, budget, "s16 planar", SampleFormat::s16, Layout::planar);
  expect_streams_like_whole(gpu, f, budget, "f32", SampleFormat::f32);
}

TEST_F(FlacStreamGpu, VariableBlocksDepthsAndDamage) {
  CudaDecoder gpu;
  for (unsigned bps : {8u, 24u, 32u}) {
    test::VarEncoderOptions o;
    o.bits_per_sample = bps;
    o.channels = 2;
    o.max_block = 9000;
    o.stereo = test::VarStereo::cycle;
    o.seed = bps;
    const auto pcm = test::make_signal(test::Signal::music, 2, bps, 1000000, bps);
    auto f = test::var_encode(pcm, o);
    const std::uint64_t budget = 2u << 20;  // room for the largest frame in each slot
    expect_streams_like_whole(gpu, f, budget, "var " + std::to_string(bps));
    for (std::size_t p = f.size() / 3; p < f.size() / 3 + 30; ++p) f[p] ^= 0x3C;
    expect_streams_like_whole(gpu, f, budget, "damaged var " + std::to_string(bps));
  }
}
#endif

}  // namespace
}  // namespace sigpu::flac
