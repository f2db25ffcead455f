// GPU decoder: strict mode bit-identical to the CPU parallel scheme; loose mode decodes.
#include <gtest/gtest.h>
#include "support/turbo_frames.hpp"

#include <random>
#include <vector>

#include <sigpu/turbo.hpp>

namespace turbo = sigpu::turbo;
using sigpu::Backend;

namespace {

using Frames = sigpu::test::TurboFrames;
using sigpu::test::make_turbo_frames;

}  // namespace

TEST(TurboGpu, StrictModeBitIdenticalToCpuParallel) {
  if (sigpu::cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  for (int K : {40, 1056, 6144}) {
    // Low Eb/N0 and few iterations: many undecided bits, so any difference would show.
    const auto f = make_turbo_frames(std::vector<int>(3, K), 0.2, static_cast<std::uint64_t>(K));
    std::vector<std::int16_t> q16(f.llr.size());
    std::vector<std::int8_t> q8(f.llr.size());
    turbo::quantize(f.llr, 6, std::span<std::int16_t>(q16));
    turbo::quantize(f.llr, 2, std::span<std::int8_t>(q8));
    for (int P : {1, 8, 64, 768, K}) {
      for (int it : {1, 3}) {
        turbo::DecoderOptions o{
            .backend = Backend::cpu_parallel, .iterations = it, .subdecoders = P};
        turbo::DecoderOptions g = o;
        g.backend = Backend::cuda;
        EXPECT_EQ(turbo::decode(f.K, std::span<const float>(f.llr), o).bits,
                  turbo::decode(f.K, std::span<const float>(f.llr), g).bits)
            << "float K = " << K << " P = " << P << " it = " << it;
        EXPECT_EQ(turbo::decode(f.K, std::span<const std::int16_t>(q16), o).bits,
                  turbo::decode(f.K, std::span<const std::int16_t>(q16), g).bits)
            << "int16 K = " << K << " P = " << P << " it = " << it;
        EXPECT_EQ(turbo::decode(f.K, std::span<const std::int8_t>(q8), o).bits,
                  turbo::decode(f.K, std::span<const std::int8_t>(q8), g).bits)
            << "int8 K = " << K << " P = " << P << " it = " << it;
      }
    }
  }
}

TEST(TurboGpu, MixedSizesInOneLaunch) {
  if (sigpu::cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  const auto f = make_turbo_frames({40, 6144, 1056, 512, 6144, 2112}, 0.5, 9);
  turbo::DecoderOptions o{.backend = Backend::cpu_parallel, .subdecoders = 64};
  turbo::DecoderOptions g = o;
  g.backend = Backend::cuda;
  EXPECT_EQ(turbo::decode(f.K, std::span<const float>(f.llr), o).bits,
            turbo::decode(f.K, std::span<const float>(f.llr), g).bits);
}

TEST(TurboGpu, LooseModeDecodesAtHighSnr) {
  if (sigpu::cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  const auto f = make_turbo_frames(std::vector<int>(16, 6144), 2.0, 4);
  for (int P : {64, 768}) {
    const turbo::DecoderOptions g{
        .backend = Backend::cuda, .iterations = 8, .subdecoders = P, .sync = turbo::Sync::loose};
    const auto r = turbo::decode(f.K, std::span<const float>(f.llr), g);
    std::size_t e = 0;
    for (std::size_t i = 0; i < r.bits.size(); ++i) e += r.bits[i] != f.info[i];
    EXPECT_EQ(e, 0u) << "P = " << P;
  }
}
