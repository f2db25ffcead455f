// Log-MAP: its max* correction term (written out in map_decoder.hpp so that the CPU and the GPU
// round it alike) against log(1 + e^-d) in double precision, and its error rates against
// max-log-MAP's at equal iterations on the same frames.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <sigpu/turbo.hpp>

#include "turbo/map_decoder.hpp"

namespace turbo = sigpu::turbo;
using sigpu::Backend;

TEST(TurboLogMap, CorrectionTermWithinTwoTenMillionths) {
  double worst = 0, at = 0;
  for (int i = 0; i <= 400'000; ++i) {  // d from 0 to 20, past the cut-off at 16.6
    const float d = static_cast<float>(i) * 5.0e-5f;
    for (float m : {0.0f, -3.5f, 12.25f}) {
      const double want = double(m) + std::log1p(std::exp(-double(d)));
      const double err = std::fabs(double(turbo::add_log_map_correction(m, d)) - want);
      // Beyond the rounding of the sum itself (half an ulp of m + term).
      const double ulp = std::ldexp(0.5, std::ilogb(want == 0 ? 1.0 : want) - 23);
      if (err - ulp > worst) {
        worst = err - ulp;
        at = d;
      }
    }
  }
  EXPECT_LT(worst, 2.0e-7) << "at d = " << at;
  EXPECT_EQ(turbo::add_log_map_correction(1.0f, 0.0f), 1.0f + std::log(2.0f));
}

// Equal iterations, the same frames: log-MAP makes fewer bit and frame errors than max-log-MAP
// with its 0.75 scaling, and fewer again than unscaled max-log-MAP (the textbook ordering; the
// margin at this point is several times the difference between the two max-log variants).
TEST(TurboLogMap, FewerErrorsThanMaxLogAtEqualIterations) {
  turbo::SimOptions s{.K = 512, .max_frames = 300, .batch = 100};
  s.decoder = {.backend = Backend::cpu_parallel, .iterations = 4};
  const double ebn0 = 1.0;
  s.decoder.algorithm = turbo::Algorithm::log_map;
  const auto log_map = turbo::simulate(s, ebn0);
  s.decoder.algorithm = turbo::Algorithm::max_log_map;
  const auto scaled = turbo::simulate(s, ebn0);
  s.decoder.scaling = 1.0f;
  const auto plain = turbo::simulate(s, ebn0);
  EXPECT_GT(log_map.bit_errors, 100u) << "the point must see errors to compare";
  EXPECT_LT(log_map.bit_errors, scaled.bit_errors);
  EXPECT_LT(log_map.frame_errors, scaled.frame_errors);
  EXPECT_LT(scaled.bit_errors, plain.bit_errors);
  std::printf(
      "K 512, 4 iterations, %.1f dB: bit errors log-map %llu, max-log 0.75 %llu, max-log "
      "%llu; frame errors %llu, %llu, %llu of 300\n",
      ebn0, (unsigned long long)log_map.bit_errors, (unsigned long long)scaled.bit_errors,
      (unsigned long long)plain.bit_errors, (unsigned long long)log_map.frame_errors,
      (unsigned long long)scaled.frame_errors, (unsigned long long)plain.frame_errors);
}

// Log-MAP decodes float LLRs only; the transport block API refuses integer ones before its HARQ
// buffer takes the transmission in.
TEST(TurboLogMap, IntegerLlrsAreRefusedBeforeCombining) {
  const turbo::TransportBlockParams p{.A = 1000, .G = 3000, .Q_m = 2};
  const std::vector<std::int8_t> llr(p.G, 5);
  turbo::HarqBuffer<std::int8_t> harq;
  try {
    turbo::decode_transport_block(
        std::span<const std::int8_t>(llr), p, harq,
        {.backend = Backend::cpu, .algorithm = turbo::Algorithm::log_map});
    ADD_FAILURE() << "int8 log-map accepted";
  } catch (const sigpu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("log-map needs float LLRs"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(harq.transmissions, 0);
  EXPECT_TRUE(harq.soft.empty());
}
