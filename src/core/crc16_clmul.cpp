// CRC-16 (poly 0x8005, MSB first) of long runs by carry-less multiplication: the message is
// read as a polynomial sixteen bytes at a time and folded into a 128-bit remainder, which
// the byte tables then finish. The frame search takes the CRC of every byte of a file, and
// the tables alone read about one byte a cycle.
#include "core/crc.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace sigpu {
namespace {

/// x^n mod P(x), P = x^16 + 0x8005.
constexpr std::uint64_t x_pow_mod(unsigned n) {
  std::uint32_t r = 1;
  for (unsigned i = 0; i < n; ++i) {
    r <<= 1;
    if (r & 0x10000) r ^= 0x18005;
  }
  return r;
}

#if defined(__x86_64__)
/// Sixteen bytes as a polynomial: byte 0 the highest-degree byte.
__attribute__((target("pclmul,ssse3"))) inline __m128i load_block(const std::uint8_t* p) {
  const __m128i reverse = _mm_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  return _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)), reverse);
}

/// a * x^(128 * n) + b, reduced to 128 bits, with k = (x^(128 * n + 64), x^(128 * n)) mod P:
/// with a = H * x^64 + L both products stay under 80 bits.
__attribute__((target("pclmul,ssse3"))) inline __m128i fold_in(__m128i a, __m128i k, __m128i b) {
  return _mm_xor_si128(
      _mm_xor_si128(_mm_clmulepi64_si128(a, k, 0x11), _mm_clmulepi64_si128(a, k, 0x00)), b);
}

__attribute__((target("pclmul,ssse3"))) std::uint16_t fold(std::uint16_t crc, const std::uint8_t* p,
                                                           std::size_t blocks) {
  constexpr std::uint64_t k1hi = x_pow_mod(192), k1lo = x_pow_mod(128);
  constexpr std::uint64_t k4hi = x_pow_mod(576), k4lo = x_pow_mod(512);
  const __m128i k1 = _mm_set_epi64x(k1hi, k1lo), k4 = _mm_set_epi64x(k4hi, k4lo);
  // The register's value enters as the message's first sixteen bits.
  __m128i a = _mm_xor_si128(load_block(p),
                            _mm_set_epi64x(static_cast<long long>(std::uint64_t{crc} << 48), 0));
  std::size_t i = 1;
  if (blocks >= 8) {
    // Four remainders of every fourth block, so that four multiplications are in flight.
    __m128i b = load_block(p + 16), c = load_block(p + 32), d = load_block(p + 48);
    for (i = 4; i + 4 <= blocks; i += 4) {
      a = fold_in(a, k4, load_block(p + 16 * i));
      b = fold_in(b, k4, load_block(p + 16 * (i + 1)));
      c = fold_in(c, k4, load_block(p + 16 * (i + 2)));
      d = fold_in(d, k4, load_block(p + 16 * (i + 3)));
    }
    a = fold_in(fold_in(fold_in(a, k1, b), k1, c), k1, d);
  }
  for (; i < blocks; ++i) a = fold_in(a, k1, load_block(p + 16 * i));
  // The CRC of the remainder's sixteen bytes, from a zero register, is the register now.
  alignas(16) std::uint8_t bytes[16];
  _mm_store_si128(reinterpret_cast<__m128i*>(bytes), a);
  std::uint16_t r = 0;
  for (int i = 15; i >= 0; --i) r = crc16_byte(r, bytes[i], kCrcTables.crc16);
  return r;
}

bool has_clmul() {
  static const bool yes = __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("ssse3");
  return yes;
}
#endif

}  // namespace

std::uint16_t crc16_update_long(std::uint16_t crc, const std::uint8_t* p, std::size_t n) {
#if defined(__x86_64__)
  if (n >= 32 && has_clmul()) {
    const std::size_t blocks = n / 16;
    crc = fold(crc, p, blocks);
    p += blocks * 16;
    n -= blocks * 16;
  }
#endif
  return crc16_update_table(crc, p, n);
}

}  // namespace sigpu
