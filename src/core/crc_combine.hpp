// CRC-16 arithmetic for combining: with R(n) the CRC-16 of the first n bytes of a buffer,
// CRC(bytes a..b) = R(b) xor shift(R(a), b - a), where shift multiplies by x^(8(b-a)) modulo
// the polynomial. That turns "does the CRC over this span come out zero" into an O(log n) test
// once R is known at the span ends, however long the span. The same linearity lets the 32 lanes
// of a warp each take every 32nd word of a span and combine their CRCs (Crc16Words).
#pragma once

#include <cstdint>

#include "core/crc.hpp"
#include "core/hd.hpp"

namespace sigpu {

/// a * b modulo the CRC-16 polynomial x^16 + x^15 + x^2 + 1, carry-less.
SIGPU_HD constexpr std::uint16_t crc16_mulmod(std::uint16_t a, std::uint16_t b) {
  std::uint32_t p = 0;
  for (int i = 0; i < 16; ++i)
    if ((b >> i) & 1) p ^= std::uint32_t(a) << i;
  for (int i = 30; i >= 16; --i)
    if ((p >> i) & 1) p ^= 0x18005u << (i - 16);
  return static_cast<std::uint16_t>(p);
}

class Crc16Shift {
 public:
  constexpr Crc16Shift() {
    pow_[0] = 0x0100;  // x^8
    for (int k = 1; k < 64; ++k) pow_[k] = crc16_mulmod(pow_[k - 1], pow_[k - 1]);
  }
  /// crc * x^(8 * bytes) mod P.
  SIGPU_HD constexpr std::uint16_t shift(std::uint16_t crc, std::uint64_t bytes) const {
    for (int k = 0; bytes && crc; ++k, bytes >>= 1)
      if (bytes & 1) crc = crc16_mulmod(crc, pow_[k]);
    return crc;
  }

 private:
  std::uint16_t pow_[64] = {};
};

/// What a warp needs to take the CRC-16 of a span 4 bytes per lane at a time: lane L reads the
/// span's words L, L + 32, ... (so each load of the warp is 128 consecutive bytes) and folds
/// each into its sum after moving the sum past the 128 bytes between (`skip`); the 32 sums are
/// then combined pairwise, the left one moved past its right neighbour's words (`level`).
struct alignas(4) Crc16Words {
  std::uint16_t byte[4][256];  ///< the first four rows of kCrc16Slices (core/crc.hpp)
  std::uint16_t skip[2][256];  ///< times x^(8 * 128), of the sum's high byte and low byte
  std::uint16_t level[5];      ///< x^(32 * 2^t): past 2^t lanes' last words
  std::uint16_t unpad[4];      ///< x^(-8z): takes back z zero bytes appended to a span
  Crc16Shift shift;
};

constexpr Crc16Words make_crc16_words() {
  Crc16Words w{};
  const Crc16Shift& s = w.shift;
  const std::uint16_t past_128 = s.shift(1, 128);
  for (unsigned v = 0; v < 256; ++v) {
    for (unsigned k = 0; k < 4; ++k) w.byte[k][v] = kCrc16Slices.slice[k][v];
    w.skip[0][v] = crc16_mulmod(static_cast<std::uint16_t>(v << 8), past_128);
    w.skip[1][v] = crc16_mulmod(static_cast<std::uint16_t>(v), past_128);
  }
  for (unsigned t = 0; t < 5; ++t) w.level[t] = s.shift(1, 4u << t);
  // x^8 has an order dividing 2^15 - 1 (the polynomial is (x + 1)(x^15 + x + 1), the latter
  // irreducible), so x^(8 * (32767 - z)) is x^(-8z); the assertion below checks it.
  for (unsigned z = 0; z < 4; ++z) w.unpad[z] = s.shift(1, 32767 - z);
  return w;
}

inline constexpr Crc16Words kCrc16Words = make_crc16_words();

/// The slices are CRCs moved past zero bytes, as the shift moves them.
constexpr bool slices_are_shifts() {
  for (unsigned k = 0; k < 8; ++k)
    for (unsigned v = 0; v < 256; ++v)
      if (kCrc16Slices.slice[k][v] != kCrc16Words.shift.shift(kCrcTables.crc16[v], k)) return false;
  return true;
}
static_assert(slices_are_shifts());
static_assert(crc16_mulmod(kCrc16Words.unpad[1], 0x0100) == 1 &&
              crc16_mulmod(kCrc16Words.unpad[3], kCrc16Words.shift.shift(1, 3)) == 1);

}  // namespace sigpu
