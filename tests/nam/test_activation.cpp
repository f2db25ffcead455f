// sigpu's own tanh (activation.hpp), used by the CPU and the GPU instead of libm's tanhf:
// its error over the whole float range that matters, against double-precision tanh.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "nam/activation.hpp"

namespace nam = sigpu::nam;

TEST(NamActivation, FastTanhIsWithinTwoTenthsOfAMillionthOfTanh) {
  double worst = 0, worst_at = 0;
  for (double x = -20; x <= 20; x += 1.0 / 4096) {
    const double e = std::abs(nam::fast_tanh(static_cast<float>(x)) -
                              std::tanh(static_cast<double>(static_cast<float>(x))));
    if (e > worst) worst = e, worst_at = x;
  }
  std::printf("[ NamActivation ] fast_tanh max |error| %.3g at x = %.4f\n", worst, worst_at);
  EXPECT_LT(worst, 2e-7);
  EXPECT_EQ(nam::fast_tanh(0.0f), 0.0f);
  // Beyond |x| = 9 the value stays at tanh(9) in float: 1 - 2^-24, one step below 1.
  EXPECT_EQ(nam::fast_tanh(100.0f), nam::fast_tanh(9.0f));
  EXPECT_NEAR(nam::fast_tanh(100.0f), 1.0, 6e-8);
  EXPECT_NEAR(nam::fast_tanh(-1e30f), -1.0, 6e-8);
  EXPECT_NEAR(nam::fast_tanh(std::numeric_limits<float>::infinity()), 1.0, 6e-8);
}

TEST(NamActivation, SigmoidAndOthersMatchTheirDefinitions) {
  for (double x = -12; x <= 12; x += 1.0 / 256) {
    const float f = static_cast<float>(x);
    const double s = 1 / (1 + std::exp(-static_cast<double>(f)));
    EXPECT_NEAR(nam::sigmoid(f), s, 2e-7) << x;
    EXPECT_NEAR(nam::activate(nam::Activation::silu, f), f * s, 3e-6) << x;
    EXPECT_FLOAT_EQ(nam::activate(nam::Activation::relu, f), f > 0 ? f : 0.0f);
    EXPECT_FLOAT_EQ(nam::activate(nam::Activation::hardtanh, f),
                    std::fmax(-1.0f, std::fmin(1.0f, f)));
    const double hs = f <= -3 ? 0 : (f >= 3 ? f : f * (f + 3) / 6);
    EXPECT_NEAR(nam::activate(nam::Activation::hardswish, f), hs, 2e-6) << x;
  }
}
