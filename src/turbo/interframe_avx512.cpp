// The inter-frame decoder (interframe_lanes.hpp) in AVX-512 vectors (F and BW): for int8 LLRs 64
// blocks in saturating 8-bit lanes or 32 in 16-bit lanes, for int16 LLRs 16 blocks in 32-bit
// lanes. The same ops as
// interframe_avx2.cpp on twice the lanes; the narrowing conversions (vpmovs*) saturate as AVX2's
// packs do, and keep the lanes in order, so no permute follows them.
#include <algorithm>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include <sigpu/turbo.hpp>

#include "turbo/interframe_isa.hpp"
#include "turbo/plan.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// GCC 12's AVX-512 conversions start from _mm512_undefined_epi32(), which its own
// -W(maybe-)uninitialized flags once they are inlined (GCC bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>

// Only the algorithm and the ops below are built for AVX-512 (the headers above are not):
// interframe.cpp calls them after asking the CPU.
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw")
#endif

#include "turbo/interframe_lanes.hpp"

namespace sigpu::turbo {
namespace {

/// 64 lanes of 8 bits, saturating: the metrics of int8 LLRs in saturating_decoder.hpp's
/// arithmetic.
struct Avx512Lanes8 {
  using Llr = std::int8_t;
  using Lane = std::int8_t;
  using V = __m512i;
  static constexpr int kLanes = 64;
  static constexpr int kNeg = -128;
  static constexpr int kMax = 127;
  static constexpr int kNormalise = 1;
  static constexpr int kIn = 63;  // saturating_decoder.hpp's bound
  static V zero() { return _mm512_setzero_si512(); }
  static V set1(int x) { return _mm512_set1_epi8(static_cast<char>(x)); }
  static V add(V a, V b) { return _mm512_adds_epi8(a, b); }
  static V sub(V a, V b) { return _mm512_subs_epi8(a, b); }
  static V max(V a, V b) { return _mm512_max_epi8(a, b); }
  static V load(const Lane* p) { return _mm512_loadu_si512(p); }
  static void store(Lane* p, V x) { _mm512_storeu_si512(p, x); }
  static V widen(const Llr* p) { return load(p); }
  static void narrow(Llr* p, V x) { store(p, x); }
  static V bound(V x) { return _mm512_max_epi8(_mm512_min_epi8(x, set1(kIn)), set1(-kIn)); }
  static V extrinsic(V le, int q) {
    const V qq = _mm512_set1_epi16(static_cast<short>(q));
    const V lo = _mm512_srai_epi16(
        _mm512_mullo_epi16(_mm512_cvtepi8_epi16(_mm512_castsi512_si256(le)), qq), 4);
    const V hi = _mm512_srai_epi16(
        _mm512_mullo_epi16(_mm512_cvtepi8_epi16(_mm512_extracti64x4_epi64(le, 1)), qq), 4);
    const V v = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtsepi16_epi8(lo)),
                                   _mm512_cvtsepi16_epi8(hi), 1);
    return _mm512_max_epi8(v, set1(-kMax));
  }
};

/// 32 lanes of 16 bits: the metrics of int8 LLRs, exact.
struct Avx512Lanes16 {
  using Llr = std::int8_t;
  using Lane = std::int16_t;
  using V = __m512i;
  static constexpr int kLanes = 32;
  static constexpr int kNeg = -8192;  // an unreachable state: loses every max to a reachable one
  static constexpr int kMax = 127;
  static constexpr int kNormalise = 8;
  static V bound(V x) { return x; }
  static V zero() { return _mm512_setzero_si512(); }
  static V set1(int x) { return _mm512_set1_epi16(static_cast<short>(x)); }
  static V add(V a, V b) { return _mm512_add_epi16(a, b); }
  static V sub(V a, V b) { return _mm512_sub_epi16(a, b); }
  static V max(V a, V b) { return _mm512_max_epi16(a, b); }
  static V load(const Lane* p) { return _mm512_loadu_si512(p); }
  static void store(Lane* p, V x) { _mm512_storeu_si512(p, x); }
  static V widen(const Llr* p) {
    return _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static void narrow(Llr* p, V x) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtsepi16_epi8(x));
  }
  static V extrinsic(V le, int q) {
    const V qq = _mm512_set1_epi32(q);
    const V lo = _mm512_srai_epi32(
        _mm512_mullo_epi32(_mm512_cvtepi16_epi32(_mm512_castsi512_si256(le)), qq), 4);
    const V hi = _mm512_srai_epi32(
        _mm512_mullo_epi32(_mm512_cvtepi16_epi32(_mm512_extracti64x4_epi64(le, 1)), qq), 4);
    const V v = _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtsepi32_epi16(lo)),
                                   _mm512_cvtsepi32_epi16(hi), 1);
    return _mm512_max_epi16(_mm512_min_epi16(v, set1(kMax)), set1(-kMax));
  }
};

/// 16 lanes of 32 bits: the metrics of int16 LLRs, the scalar decoder's own width.
struct Avx512Lanes32 {
  using Llr = std::int16_t;
  using Lane = std::int32_t;
  using V = __m512i;
  static constexpr int kLanes = 16;
  static constexpr int kNeg = -(1 << 24);
  static constexpr int kMax = 32767;
  static constexpr int kNormalise = 8;
  static V bound(V x) { return x; }
  static V zero() { return _mm512_setzero_si512(); }
  static V set1(int x) { return _mm512_set1_epi32(x); }
  static V add(V a, V b) { return _mm512_add_epi32(a, b); }
  static V sub(V a, V b) { return _mm512_sub_epi32(a, b); }
  static V max(V a, V b) { return _mm512_max_epi32(a, b); }
  static V load(const Lane* p) { return _mm512_loadu_si512(p); }
  static void store(Lane* p, V x) { _mm512_storeu_si512(p, x); }
  static V widen(const Llr* p) {
    return _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static void narrow(Llr* p, V x) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtsepi32_epi16(x));
  }
  static V extrinsic(V le, int q) {
    const V v = _mm512_srai_epi32(_mm512_mullo_epi32(le, _mm512_set1_epi32(q)), 4);
    return _mm512_max_epi32(_mm512_min_epi32(v, set1(kMax)), set1(-kMax));
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
IsaKernels avx512_kernels() {
  return {{Avx512Lanes16::kLanes, &decode_group<Avx512Lanes16>},
          {Avx512Lanes8::kLanes, &decode_group<Avx512Lanes8>},
          {Avx512Lanes32::kLanes, &decode_group<Avx512Lanes32>}};
}
}  // namespace sigpu::turbo

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#else

namespace sigpu::turbo {
IsaKernels avx512_kernels() {
  return {};
}
}  // namespace sigpu::turbo

#endif
