// The WaveNet layer pass built for AVX2 + FMA (eight floats per vector, fused multiply-add),
// used when the CPU reports both. Headers with code are included before the target switch so
// that only this file's own functions are built for AVX2.
#include "nam/activation.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#endif
#define SIGPU_NAM_ISA avx2_build
#define SIGPU_NAM_VEC 8
#include "nam/cpu_wavenet_layer.hpp"

namespace sigpu::nam {
LayerFn avx2_pick_impl(int channels, int zc) {
  return avx2_build::pick_layer(channels, zc);
}
}  // namespace sigpu::nam

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

namespace sigpu::nam {
LayerFn avx2::pick(int channels, int zc) {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return nullptr;
  return avx2_pick_impl(channels, zc);
}
}  // namespace sigpu::nam

#else
#include "nam/cpu_wavenet_layer.hpp"

namespace sigpu::nam {
LayerFn avx2::pick(int, int) {
  return nullptr;
}
}  // namespace sigpu::nam
#endif
