// CPU partitioned convolution against direct float64 convolution (the issue's -100 dBFS bound).
#include <gtest/gtest.h>

#include <string>

#include <sigpu/convolution.hpp>

#include "convolution/reference.hpp"
#include "convolution/spectral.hpp"

namespace cv = sigpu::convolution;
using sigpu::test::Channels;
using sigpu::test::frames_for;
using sigpu::test::Input;
using sigpu::test::kMaxError;

namespace {

const char* name(Input k) {
  return k == Input::impulse ? "impulse" : k == Input::noise ? "noise" : "music";
}

/// Streams every input kind through a serial convolver and checks it against direct convolution.
void expect_matches_direct(const cv::Config& c, const std::string& what,
                           std::size_t spread = 2048) {
  const std::size_t frames = frames_for(c);
  const auto check = sigpu::test::check_frames(frames, spread);
  for (Input kind : {Input::impulse, Input::noise, Input::music}) {
    cv::CpuConvolver conv(c);
    const Channels in = sigpu::test::make_input(kind, c.inputs, frames, 3);
    const Channels out = sigpu::test::stream_cpu(conv, in);
    const double err = sigpu::test::max_error_vs_direct(c, in, out, check);
    EXPECT_LE(err, kMaxError) << what << ", " << name(kind) << ": " << sigpu::test::dbfs(err)
                              << " dBFS";
  }
}

}  // namespace

TEST(ConvolutionSpectral, RingSlotWrapsBackwards) {
  EXPECT_EQ(cv::ring_slot(5, 0, 8), 5u);
  EXPECT_EQ(cv::ring_slot(5, 5, 8), 0u);
  EXPECT_EQ(cv::ring_slot(5, 6, 8), 7u);
  EXPECT_EQ(cv::ring_slot(0, 7, 8), 1u);
  EXPECT_EQ(cv::ring_slot(0, 0, 1), 0u);
}

TEST(ConvolutionSpectral, ComplexMacAccumulates) {
  float yr = 1, yi = -1;
  cv::complex_mac(yr, yi, 2, 3, 5, -7);  // (2 + 3i)(5 - 7i) = 31 + 1i
  EXPECT_EQ(yr, 32.0f);
  EXPECT_EQ(yi, 0.0f);
}

TEST(ConvolutionCpu, MonoMatchesDirect) {
  for (std::uint32_t B : {16u, 64u, 256u})
    for (std::size_t taps :
         {std::size_t{1}, std::size_t{100}, std::size_t{B}, std::size_t{1000}, std::size_t{4096}})
      expect_matches_direct(sigpu::test::mono_config(B, taps),
                            "mono B = " + std::to_string(B) + " taps = " + std::to_string(taps));
}

TEST(ConvolutionCpu, MonoToStereoMatchesDirect) {
  const cv::Config c{.partition = 32,
                     .inputs = 1,
                     .outputs = 2,
                     .irs = {sigpu::test::make_ir(3000, 1), sigpu::test::make_ir(2345, 2)},
                     .paths = {{0, 0, 0}, {0, 1, 1}}};
  expect_matches_direct(c, "mono to stereo");
}

TEST(ConvolutionCpu, TrueStereoWithDryMatchesDirect) {
  expect_matches_direct(sigpu::test::true_stereo_config(128, 5000), "true stereo");
}

TEST(ConvolutionCpu, SharedIrsAndSummedPathsMatchDirect) {
  // Three inputs into two outputs, one IR used twice, one input feeding both outputs.
  const cv::Config c{.partition = 64,
                     .inputs = 3,
                     .outputs = 2,
                     .irs = {sigpu::test::make_ir(700, 1), sigpu::test::make_ir(65, 2)},
                     .paths = {{0, 0, 0}, {1, 0, 0}, {2, 1, 0}, {2, 0, 1}},
                     .wet = 0.5f};
  expect_matches_direct(c, "shared IRs");
}

TEST(ConvolutionCpu, ManyChannelsMatchDirect) {
  expect_matches_direct(sigpu::test::many_channels_config(16, 12, 10, 20, 23),
                        "12 inputs, 10 outputs, 20 paths");
}

TEST(ConvolutionCpu, OutputWithoutPathsAndUnusedInputMatchDirect) {
  // Output 0 has no path (dry only); input 1 feeds no path (only its dry share reaches out 1).
  const cv::Config c{.partition = 32,
                     .inputs = 2,
                     .outputs = 2,
                     .irs = {sigpu::test::make_ir(300, 5)},
                     .paths = {{0, 0, 1}},
                     .wet = 0.5f,
                     .dry = 0.5f};
  expect_matches_direct(c, "dry-only output");
}

TEST(ConvolutionCpu, LongIrMatchesDirect) {
  expect_matches_direct(sigpu::test::mono_config(512, 65536), "65536 taps", 1024);
}

TEST(ConvolutionCpu, TenSecondIrMatchesDirect) {
  const cv::Config c = sigpu::test::mono_config(1024, cv::kMaxIrTaps);
  const std::size_t frames = frames_for(c);
  cv::CpuConvolver conv(c, 0);
  const Channels in = sigpu::test::make_input(Input::music, 1, frames, 5);
  const Channels out = sigpu::test::stream_cpu(conv, in);
  const double err =
      sigpu::test::max_error_vs_direct(c, in, out, sigpu::test::check_frames(frames, 256));
  EXPECT_LE(err, kMaxError) << sigpu::test::dbfs(err) << " dBFS";
}

TEST(ConvolutionCpu, ParallelIdenticalToSerial) {
  const cv::Config c = sigpu::test::many_channels_config(32, 8, 8, 16, 150);
  const Channels in = sigpu::test::make_input(Input::music, 8, 32 * 100, 9);
  cv::CpuConvolver serial(c, 1), parallel(c, 4);
  EXPECT_EQ(sigpu::test::stream_cpu(serial, in), sigpu::test::stream_cpu(parallel, in));
}

TEST(ConvolutionCpu, StreamingMatchesOneShot) {
  // The same signal as one 8192-frame period and as 256 periods of 32 frames.
  const auto ir = sigpu::test::make_ir(2000, 4);
  const cv::Config small{
      .partition = 32, .inputs = 1, .outputs = 1, .irs = {ir}, .paths = {{0, 0, 0}}};
  cv::Config whole = small;
  whole.partition = 8192;
  Channels in = sigpu::test::make_input(Input::music, 1, 8192, 6);
  std::fill(in[0].begin() + 6000, in[0].end(), 0.0f);
  cv::CpuConvolver streamed(small), one_shot(whole);
  const Channels a = sigpu::test::stream_cpu(streamed, in);
  const Channels b = sigpu::test::stream_cpu(one_shot, in);
  const double diff = sigpu::test::max_abs_diff(a, b);
  EXPECT_LE(diff, kMaxError) << sigpu::test::dbfs(diff) << " dBFS";
  const double err =
      sigpu::test::max_error_vs_direct(small, in, b, sigpu::test::check_frames(8192, 8192));
  EXPECT_LE(err, kMaxError) << sigpu::test::dbfs(err) << " dBFS";
}

TEST(ConvolutionCpu, ResetClearsHistory) {
  const cv::Config c = sigpu::test::true_stereo_config(64, 1500);
  const Channels a = sigpu::test::make_input(Input::noise, 2, 64 * 40, 1);
  const Channels b = sigpu::test::make_input(Input::music, 2, 64 * 40, 2);
  cv::CpuConvolver used(c), fresh(c);
  sigpu::test::stream_cpu(used, a);
  used.reset();
  EXPECT_EQ(sigpu::test::stream_cpu(used, b), sigpu::test::stream_cpu(fresh, b));
}

TEST(ConvolutionCpu, ProcessRejectsWrongSizes) {
  cv::CpuConvolver conv(sigpu::test::true_stereo_config(16, 200));
  std::vector<float> in(32), out(32), small(31);
  EXPECT_NO_THROW(conv.process(in, out));
  EXPECT_THROW(conv.process(small, out), sigpu::Error);
  EXPECT_THROW(conv.process(in, small), sigpu::Error);
}
