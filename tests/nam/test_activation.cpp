// sigpu's own tanh (activation.hpp), used by the CPU and the GPU instead of libm's tanhf:
// its absolute error over the whole float range that matters and its relative error near 0 and
// beyond, against double and long double tanh.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <utility>

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

// Relative, so that small inputs count too: 1 - 2 / (e^{2|x|} + 1) alone is off by 100% near 0
// and by 1e-4 at x = 1e-3. Each range in 2^21 steps, both signs, against long double.
TEST(NamActivation, FastTanhIsWithinTwoTenthsOfAMillionthOfTanhRelative) {
  for (const auto& [lo, hi] :
       {std::pair{-1e-6, 1e-6}, std::pair{1e-3, 1.0}, std::pair{1.0, 20.0}}) {
    constexpr int kSteps = 1 << 21;
    double worst = 0, worst_at = 0;
    for (int i = 0; i <= kSteps; ++i) {
      const float x = static_cast<float>(lo + (hi - lo) * i / kSteps);
      if (x == 0.0f) continue;
      for (const float s : {x, -x}) {
        const long double t = std::tanh(static_cast<long double>(s));
        const double e = static_cast<double>(std::fabs((nam::fast_tanh(s) - t) / t));
        if (e > worst) worst = e, worst_at = s;
      }
    }
    std::printf("[ NamActivation ] fast_tanh on [%g, %g]: max relative error %.3g at x = %.9g\n",
                lo, hi, worst, worst_at);
    EXPECT_LT(worst, 2e-7) << "on [" << lo << ", " << hi << "] at x = " << worst_at;
  }
  EXPECT_EQ(nam::fast_tanh(1e-30f), 1e-30f);
  EXPECT_EQ(nam::fast_tanh(-0.0f), 0.0f);
  EXPECT_TRUE(std::signbit(nam::fast_tanh(-0.0f)));
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

// Every activation a model may name, with parameters, against its definition in double:
// relative error near zero (|x| from 1e-6 to 1, both signs) and absolute error out to 12.
TEST(NamActivation, EveryActivationRelativeNearZeroAgainstDouble) {
  using nam::Activation;
  nam::ActivationSpec leaky{.kind = Activation::leaky_relu, .negative_slope = 0.2f};
  nam::ActivationSpec prelu{.kind = Activation::prelu, .negative_slopes = {0.04f, 0.5f}};
  nam::ActivationSpec lht{.kind = Activation::leaky_hardtanh,
                          .min_val = -0.5f,
                          .max_val = 0.9f,
                          .min_slope = 0.1f,
                          .max_slope = 0.02f};
  const auto sig = [](double x) { return 1 / (1 + std::exp(-x)); };
  const auto nam_fast_tanh = [](double x) {  // NeuralAmpModelerCore's formula, in double
    const double ax = std::fabs(x), x2 = x * x;
    return x *
           (2.45550750702956 + 2.45550750702956 * ax +
            (0.893229853513558 + 0.821226666969744 * ax) * x2) /
           (2.44506634652299 + (2.44506634652299 + x2) * std::fabs(x + 0.814642734961073 * x * ax));
  };
  struct Case {
    const char* name;
    nam::ActivationSpec spec;
    int channel;
    std::function<double(double)> exact;
  };
  const Case cases[] = {
      {"Tanh", {.kind = Activation::tanh}, 0, [](double x) { return std::tanh(x); }},
      {"Fasttanh", {.kind = Activation::fast_tanh}, 0, nam_fast_tanh},
      {"Sigmoid", {.kind = Activation::sigmoid}, 0, sig},
      {"SiLU", {.kind = Activation::silu}, 0, [&](double x) { return x * sig(x); }},
      {"Softsign",
       {.kind = Activation::softsign},
       0,
       [](double x) { return x / (1 + std::fabs(x)); }},
      {"Hardswish",
       {.kind = Activation::hardswish},
       0,
       [](double x) { return x <= -3 ? 0 : (x >= 3 ? x : x * (x + 3) / 6); }},
      {"LeakyReLU(0.2)", leaky, 0,
       [](double x) { return x > 0 ? x : static_cast<double>(0.2f) * x; }},
      {"PReLU ch1", prelu, 1, [](double x) { return x > 0 ? x : static_cast<double>(0.5f) * x; }},
      {"LeakyHardtanh", lht, 0,
       [](double x) {
         return x < -0.5 ? (x + 0.5) * static_cast<double>(0.1f) - 0.5
                         : (x > static_cast<double>(0.9f)
                                ? (x - static_cast<double>(0.9f)) * static_cast<double>(0.02f) +
                                      static_cast<double>(0.9f)
                                : x);
       }},
  };
  for (const Case& c : cases) {
    double rel = 0, rel_at = 0, abs_err = 0;
    for (double e = -6; e <= 0; e += 1.0 / 1024)
      for (const double sign : {1.0, -1.0}) {
        const float x = static_cast<float>(sign * std::pow(10.0, e));
        const double want = c.exact(x);
        if (want == 0) continue;
        const double r = std::abs((nam::activate(c.spec, x, c.channel) - want) / want);
        if (r > rel) rel = r, rel_at = x;
      }
    for (double x = -12; x <= 12; x += 1.0 / 256) {
      const float f = static_cast<float>(x);
      abs_err = std::max(abs_err, std::abs(nam::activate(c.spec, f, c.channel) - c.exact(f)));
    }
    std::printf("[ NamActivation ] %-15s relative near 0: %.3g (x = %.3g), absolute: %.3g\n",
                c.name, rel, rel_at, abs_err);
    EXPECT_LT(rel, 1e-6) << c.name << " at x = " << rel_at;
    EXPECT_LT(abs_err, 2e-6) << c.name;
  }
}
