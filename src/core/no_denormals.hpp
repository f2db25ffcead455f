// Denormal (subnormal) floats cost a microcode assist per operation on x86: a recursive filter
// or an envelope decaying towards zero can make a period ten to a hundred times slower. Real-time
// paths therefore flush them to zero, as audio hosts do (JUCE's ScopedNoDenormals): FTZ and DAZ
// on x86, FZ on AArch64, for the calling thread while the scope lives.
#pragma once

#include <cstdint>

#if defined(__x86_64__) || defined(_M_X64) || defined(__SSE__)
#include <xmmintrin.h>
#endif

namespace sigpu {

class ScopedNoDenormals {
 public:
  ScopedNoDenormals() noexcept {
#if defined(__x86_64__) || defined(_M_X64) || defined(__SSE__)
    saved_ = _mm_getcsr();
    _mm_setcsr(static_cast<unsigned>(saved_) | kFtz | kDaz);
#elif defined(__aarch64__)
    saved_ = __builtin_aarch64_get_fpcr64();
    __builtin_aarch64_set_fpcr64(saved_ | kFz);
#endif
  }
  ~ScopedNoDenormals() {
#if defined(__x86_64__) || defined(_M_X64) || defined(__SSE__)
    _mm_setcsr(static_cast<unsigned>(saved_));
#elif defined(__aarch64__)
    __builtin_aarch64_set_fpcr64(saved_);
#endif
  }
  ScopedNoDenormals(const ScopedNoDenormals&) = delete;
  ScopedNoDenormals& operator=(const ScopedNoDenormals&) = delete;

 private:
  static constexpr std::uint64_t kFtz = 0x8000, kDaz = 0x0040;  // MXCSR bits
  static constexpr std::uint64_t kFz = std::uint64_t{1} << 24;  // FPCR bit
  std::uint64_t saved_ = 0;
};

}  // namespace sigpu
