// The inter-frame decoder (interframe_lanes.hpp) in AVX2 vectors: for int8 LLRs 32 blocks in
// saturating 8-bit lanes or 16 in 16-bit lanes, for int16 LLRs 8 blocks in 32-bit lanes.
#include <algorithm>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include <sigpu/turbo.hpp>

#include "turbo/interframe_isa.hpp"
#include "turbo/plan.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

// Only the algorithm and the ops below are built for AVX2 (the headers above are not):
// interframe.cpp calls them after asking the CPU.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif

#include "turbo/interframe_lanes.hpp"

namespace sigpu::turbo {
namespace {

/// 32 lanes of 8 bits, saturating: the metrics of int8 LLRs in saturating_decoder.hpp's arithmetic.
struct Avx2Lanes8 {
  using Llr = std::int8_t;
  using Lane = std::int8_t;
  using V = __m256i;
  static constexpr int kLanes = 32;
  static constexpr int kNeg = -128;
  static constexpr int kMax = 127;
  static constexpr int kNormalise = 1;
  static constexpr int kIn = 63;  // saturating_decoder.hpp's bound
  static V zero() { return _mm256_setzero_si256(); }
  static V set1(int x) { return _mm256_set1_epi8(static_cast<char>(x)); }
  static V add(V a, V b) { return _mm256_adds_epi8(a, b); }
  static V sub(V a, V b) { return _mm256_subs_epi8(a, b); }
  static V max(V a, V b) { return _mm256_max_epi8(a, b); }
  static V load(const Lane* p) { return _mm256_loadu_si256(reinterpret_cast<const V*>(p)); }
  static void store(Lane* p, V x) { _mm256_storeu_si256(reinterpret_cast<V*>(p), x); }
  static V widen(const Llr* p) { return load(p); }
  static void narrow(Llr* p, V x) { store(p, x); }
  static V bound(V x) { return _mm256_max_epi8(_mm256_min_epi8(x, set1(kIn)), set1(-kIn)); }
  static V extrinsic(V le, int q) {
    const V qq = _mm256_set1_epi16(static_cast<short>(q));
    const V lo = _mm256_srai_epi16(
        _mm256_mullo_epi16(_mm256_cvtepi8_epi16(_mm256_castsi256_si128(le)), qq), 4);
    const V hi = _mm256_srai_epi16(
        _mm256_mullo_epi16(_mm256_cvtepi8_epi16(_mm256_extracti128_si256(le, 1)), qq), 4);
    // packs works within each 128-bit half: the permute puts lo's 16 lanes before hi's.
    const V v = _mm256_permute4x64_epi64(_mm256_packs_epi16(lo, hi), 0xD8);
    return _mm256_max_epi8(v, set1(-kMax));
  }
};

/// 16 lanes of 16 bits: the metrics of int8 LLRs, exact.
struct Avx2Lanes16 {
  using Llr = std::int8_t;
  using Lane = std::int16_t;
  using V = __m256i;
  static constexpr int kLanes = 16;
  static constexpr int kNeg = -8192;  // an unreachable state: loses every max to a reachable one
  static constexpr int kMax = 127;
  static constexpr int kNormalise = 8;
  static V bound(V x) { return x; }
  static V zero() { return _mm256_setzero_si256(); }
  static V set1(int x) { return _mm256_set1_epi16(static_cast<short>(x)); }
  static V add(V a, V b) { return _mm256_add_epi16(a, b); }
  static V sub(V a, V b) { return _mm256_sub_epi16(a, b); }
  static V max(V a, V b) { return _mm256_max_epi16(a, b); }
  static V load(const Lane* p) { return _mm256_loadu_si256(reinterpret_cast<const V*>(p)); }
  static void store(Lane* p, V x) { _mm256_storeu_si256(reinterpret_cast<V*>(p), x); }
  static V widen(const Llr* p) {
    return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static void narrow(Llr* p, V x) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm_packs_epi16(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1)));
  }
  static V extrinsic(V le, int q) {
    const V qq = _mm256_set1_epi32(q);
    const V lo = _mm256_srai_epi32(
        _mm256_mullo_epi32(_mm256_cvtepi16_epi32(_mm256_castsi256_si128(le)), qq), 4);
    const V hi = _mm256_srai_epi32(
        _mm256_mullo_epi32(_mm256_cvtepi16_epi32(_mm256_extracti128_si256(le, 1)), qq), 4);
    // packs works within each 128-bit half: the permute puts lo's 8 lanes before hi's.
    const V v = _mm256_permute4x64_epi64(_mm256_packs_epi32(lo, hi), 0xD8);
    return _mm256_max_epi16(_mm256_min_epi16(v, set1(kMax)), set1(-kMax));
  }
};

/// 8 lanes of 32 bits: the metrics of int16 LLRs, the scalar decoder's own width.
struct Avx2Lanes32 {
  using Llr = std::int16_t;
  using Lane = std::int32_t;
  using V = __m256i;
  static constexpr int kLanes = 8;
  static constexpr int kNeg = -(1 << 24);
  static constexpr int kMax = 32767;
  static constexpr int kNormalise = 8;
  static V bound(V x) { return x; }
  static V zero() { return _mm256_setzero_si256(); }
  static V set1(int x) { return _mm256_set1_epi32(x); }
  static V add(V a, V b) { return _mm256_add_epi32(a, b); }
  static V sub(V a, V b) { return _mm256_sub_epi32(a, b); }
  static V max(V a, V b) { return _mm256_max_epi32(a, b); }
  static V load(const Lane* p) { return _mm256_loadu_si256(reinterpret_cast<const V*>(p)); }
  static void store(Lane* p, V x) { _mm256_storeu_si256(reinterpret_cast<V*>(p), x); }
  static V widen(const Llr* p) {
    return _mm256_cvtepi16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
  static void narrow(Llr* p, V x) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm_packs_epi32(_mm256_castsi256_si128(x), _mm256_extracti128_si256(x, 1)));
  }
  static V extrinsic(V le, int q) {
    const V v = _mm256_srai_epi32(_mm256_mullo_epi32(le, _mm256_set1_epi32(q)), 4);
    return _mm256_max_epi32(_mm256_min_epi32(v, set1(kMax)), set1(-kMax));
  }
};

}  // namespace
}  // namespace sigpu::turbo

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

namespace sigpu::turbo {
IsaKernels avx2_kernels() {
  return {{Avx2Lanes16::kLanes, &decode_group<Avx2Lanes16>},
          {Avx2Lanes8::kLanes, &decode_group<Avx2Lanes8>},
          {Avx2Lanes32::kLanes, &decode_group<Avx2Lanes32>}};
}
}  // namespace sigpu::turbo

#else

namespace sigpu::turbo {
IsaKernels avx2_kernels() {
  return {};
}
}  // namespace sigpu::turbo

#endif
