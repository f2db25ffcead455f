#include "io/sample_bytes.hpp"

#include <bit>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace sigpu::io {

void narrow_samples(const std::uint16_t* in, std::size_t n, std::uint8_t* out) {
  std::size_t i = 0;
#if defined(__SSE2__)
  // The mask keeps the low bytes, so the saturating pack never saturates.
  const __m128i low = _mm_set1_epi16(0xFF);
  for (; i + 16 <= n; i += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i + 8));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i),
                     _mm_packus_epi16(_mm_and_si128(a, low), _mm_and_si128(b, low)));
  }
#endif
  for (; i < n; ++i) out[i] = static_cast<std::uint8_t>(in[i]);
}

void samples_le16(const std::uint16_t* in, std::size_t n, std::uint8_t* out) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(out, in, n * 2);
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      out[2 * i] = static_cast<std::uint8_t>(in[i] & 0xFF);
      out[2 * i + 1] = static_cast<std::uint8_t>(in[i] >> 8);
    }
  }
}

}  // namespace sigpu::io
