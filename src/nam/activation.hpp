// The activations, written once for the CPU and the GPU. tanh (and sigmoid through it) uses
// its own exp: libm's tanhf was over half the CPU time and does not vectorise. Its relative error
// is below 2e-7 (tests/nam/test_activation.cpp), and the GPU runs the very same formula, so the
// backends differ only by the order of their sums.
#pragma once

#include <math.h>

#include <cstdint>
#include <cstring>

#include <sigpu/nam.hpp>

#include "core/hd.hpp"

namespace sigpu::nam {

/// e^x for 0 <= x <= 20: 2^n e^r with |r| <= ln2 / 2 and Cephes' expf polynomial.
SIGPU_HD SIGPU_FORCEINLINE float exp_small(float x) {
  const int n = static_cast<int>(x * 1.44269504f + 0.5f);
  const float fn = static_cast<float>(n);
  const float r = (x - fn * 0.693359375f) + fn * 2.12194440e-4f;
  const float p = ((((((1.9875691500e-4f * r + 1.3981999507e-3f) * r + 8.3334519073e-3f) * r +
                      4.1665795894e-2f) *
                         r +
                     1.6666665459e-1f) *
                        r +
                    5.0000001201e-1f) *
                   (r * r)) +
                  r + 1.0f;
  const std::int32_t bits = (n + 127) << 23;
#ifdef __CUDA_ARCH__
  return p * __int_as_float(bits);
#else
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
#endif
}

/// min(a, hi) for a >= 0 (or NaN: gives hi). On the host through the bits (non-negative floats
/// order like integers): a float compare would keep GCC from vectorising the loop
/// (-ftrapping-math), and fminf is a libm call.
SIGPU_HD SIGPU_FORCEINLINE float min_nonnegative(float a, float hi) {
#ifdef __CUDA_ARCH__
  return fminf(a, hi);
#else
  std::int32_t ai, hi_i;
  std::memcpy(&ai, &a, sizeof ai);
  std::memcpy(&hi_i, &hi, sizeof hi_i);
  const std::int32_t m = ai < hi_i ? ai : hi_i;
  float r;
  std::memcpy(&r, &m, sizeof r);
  return r;
#endif
}

/// a < limit ? p : q for a >= 0 (or NaN: q). On the host through the bits and a mask: with a
/// float compare or a select GCC branches and no longer vectorises the loop.
SIGPU_HD SIGPU_FORCEINLINE float below_nonnegative_select(float a, float limit, float p, float q) {
#ifdef __CUDA_ARCH__
  return a < limit ? p : q;
#else
  std::int32_t ai, li, pi, qi;
  std::memcpy(&ai, &a, sizeof ai);
  std::memcpy(&li, &limit, sizeof li);
  std::memcpy(&pi, &p, sizeof pi);
  std::memcpy(&qi, &q, sizeof qi);
  const std::int32_t mask = -static_cast<std::int32_t>(ai < li);
  const std::int32_t r = (pi & mask) | (qi & ~mask);
  float f;
  std::memcpy(&f, &r, sizeof f);
  return f;
#endif
}

/// tanh(x) with a relative error below 2e-7 everywhere. For |x| < 0.625 Cephes' tanhf odd
/// polynomial: 1 - 2 / (e^{2|x|} + 1) cancels there and loses all relative precision as x goes
/// to 0. Above, sign(x) (1 - 2 / (e^{2|x|} + 1)) with |x| clamped at 9, where tanh is 1 - 2^-24
/// in float. Both are computed and one is picked.
SIGPU_HD SIGPU_FORCEINLINE float fast_tanh(float x) {
  const float a = min_nonnegative(fabsf(x), 9.0f);
  const float z = a * a;
  const float near_zero =
      ((((-5.70498872745e-3f * z + 2.06390887954e-2f) * z - 5.37397155531e-2f) * z +
        1.33314422036e-1f) *
           z -
       3.33332819422e-1f) *
          z * a +
      a;
  const float far = 1.0f - 2.0f / (exp_small(2.0f * a) + 1.0f);
  return copysignf(below_nonnegative_select(a, 0.625f, near_zero, far), x);
}

SIGPU_HD SIGPU_FORCEINLINE float sigmoid(float x) {
  return 0.5f + 0.5f * fast_tanh(0.5f * x);
}

/// NeuralAmpModelerCore's "Fasttanh": a rational approximation a model may ask for by name;
/// run as written, since the model was trained with it.
SIGPU_HD SIGPU_FORCEINLINE float nam_fast_tanh(float x) {
  const float ax = fabsf(x), x2 = x * x;
  return (x *
          (2.45550750702956f + 2.45550750702956f * ax +
           (0.893229853513558f + 0.821226666969744f * ax) * x2) /
          (2.44506634652299f + (2.44506634652299f + x2) * fabsf(x + 0.814642734961073f * x * ax)));
}

SIGPU_HD SIGPU_FORCEINLINE float leaky_hardtanh(float x, float lo, float hi, float lo_slope,
                                                float hi_slope) {
  return x < lo ? (x - lo) * lo_slope + lo : x > hi ? (x - hi) * hi_slope + hi : x;
}

SIGPU_HD SIGPU_FORCEINLINE float activate(Activation a, float x) {
  switch (a) {
    case Activation::tanh:
      return fast_tanh(x);
    case Activation::hardtanh:
      return fminf(fmaxf(x, -1.0f), 1.0f);
    case Activation::relu:
      return fmaxf(x, 0.0f);
    case Activation::leaky_relu:
      return x > 0.0f ? x : 0.01f * x;
    case Activation::sigmoid:
      return sigmoid(x);
    case Activation::silu:
      return x * sigmoid(x);
    case Activation::hardswish:
      return x * fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) * (1.0f / 6.0f);
    case Activation::fast_tanh:
      return nam_fast_tanh(x);
    case Activation::prelu:
      return x > 0.0f ? x : 0.01f * x;
    case Activation::leaky_hardtanh:
      return leaky_hardtanh(x, -1.0f, 1.0f, 0.01f, 0.01f);
    case Activation::softsign:
      return x / (1.0f + fabsf(x));
  }
  return x;
}

/// The activations with parameters on plain numbers, for host and device: `slope` is LeakyReLU's
/// or PReLU's (channel's) negative slope, lo..hi and their slopes LeakyHardtanh's. Sigmoid and
/// SiLU as NeuralAmpModelerCore writes them, 1 / (1 + e^-x): accurate in relative terms for
/// negative x too, where 0.5 + 0.5 tanh(x / 2) cancels (A2 gates and blends with them).
SIGPU_HD SIGPU_FORCEINLINE float activate(Activation kind, float x, float slope, float lo, float hi,
                                          float lo_slope, float hi_slope) {
  switch (kind) {
    case Activation::leaky_relu:
    case Activation::prelu:
      return x > 0.0f ? x : slope * x;
    case Activation::leaky_hardtanh:
      return leaky_hardtanh(x, lo, hi, lo_slope, hi_slope);
    case Activation::sigmoid:
      return 1.0f / (1.0f + expf(-x));
    case Activation::silu:
      return x * (1.0f / (1.0f + expf(-x)));
    default:
      return activate(kind, x);
  }
}

/// An activation with its parameters, for channel c (PReLU's per-channel slopes).
inline float activate(const ActivationSpec& a, float x, int c) {
  const std::size_t n = a.negative_slopes.size();
  const float slope = a.kind == Activation::prelu && n
                          ? a.negative_slopes[static_cast<std::size_t>(c) % n]
                          : a.negative_slope;
  return activate(a.kind, x, slope, a.min_val, a.max_val, a.min_slope, a.max_slope);
}

}  // namespace sigpu::nam
