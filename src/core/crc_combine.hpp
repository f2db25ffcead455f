// CRC-16 arithmetic for combining: with R(n) the CRC-16 of the first n bytes of a buffer,
// CRC(bytes a..b) = R(b) xor shift(R(a), b - a), where shift multiplies by x^(8(b-a)) modulo
// the polynomial. That turns "does the CRC over this span come out zero" into an O(log n) test
// once R is known at the span ends, however long the span.
#pragma once

#include <cstdint>

namespace sigpu {

class Crc16Shift {
 public:
  Crc16Shift() {
    pow_[0] = 0x0100;  // x^8
    for (int k = 1; k < 64; ++k) pow_[k] = mulmod(pow_[k - 1], pow_[k - 1]);
  }
  /// crc * x^(8 * bytes) mod P.
  std::uint16_t shift(std::uint16_t crc, std::uint64_t bytes) const {
    for (int k = 0; bytes && crc; ++k, bytes >>= 1)
      if (bytes & 1) crc = mulmod(crc, pow_[k]);
    return crc;
  }

 private:
  static std::uint16_t mulmod(std::uint16_t a, std::uint16_t b) {
    std::uint32_t p = 0;
    for (int i = 0; i < 16; ++i)
      if ((b >> i) & 1) p ^= std::uint32_t(a) << i;
    for (int i = 30; i >= 16; --i)
      if ((p >> i) & 1) p ^= 0x18005u << (i - 16);
    return static_cast<std::uint16_t>(p);
  }
  std::uint16_t pow_[64];
};

}  // namespace sigpu
