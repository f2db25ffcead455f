// CRC-8 (poly 0x07) and CRC-16 (poly 0x8005), MSB-first, zero initial value, as FLAC uses.
// The tables are built at compile time; device code reads a copy placed in constant or shared
// memory (see core/cuda/crc_tables.cuh), so the update functions take the table explicitly.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "core/hd.hpp"

namespace sigpu {

struct CrcTables {
  std::uint8_t crc8[256];
  std::uint16_t crc16[256];
};

constexpr CrcTables make_crc_tables() {
  CrcTables t{};
  for (unsigned i = 0; i < 256; ++i) {
    unsigned c8 = i;
    unsigned c16 = i << 8;
    for (int b = 0; b < 8; ++b) {
      c8 = (c8 & 0x80) ? ((c8 << 1) ^ 0x07) : (c8 << 1);
      c16 = (c16 & 0x8000) ? ((c16 << 1) ^ 0x8005) : (c16 << 1);
    }
    t.crc8[i] = static_cast<std::uint8_t>(c8);
    t.crc16[i] = static_cast<std::uint16_t>(c16);
  }
  return t;
}

inline constexpr CrcTables kCrcTables = make_crc_tables();

SIGPU_HD inline std::uint8_t crc8_update(std::uint8_t crc, const std::uint8_t* p, std::size_t n,
                                         const std::uint8_t* table) {
  for (std::size_t i = 0; i < n; ++i) crc = table[crc ^ p[i]];
  return crc;
}

SIGPU_HD SIGPU_FORCEINLINE std::uint16_t crc16_byte(std::uint16_t crc, std::uint8_t byte,
                                                    const std::uint16_t* table) {
  return static_cast<std::uint16_t>((crc << 8) ^ table[(crc >> 8) ^ byte]);
}

/// CRC-16 tables for eight bytes at a time (host): slice[k][v] is the CRC of byte v followed by
/// k zero bytes, so the CRC of eight bytes is the XOR of one lookup per byte once the register
/// is folded into the first two.
struct Crc16Slices {
  std::uint16_t slice[8][256];
};

constexpr Crc16Slices make_crc16_slices() {
  Crc16Slices t{};
  for (unsigned v = 0; v < 256; ++v) {
    std::uint16_t c = kCrcTables.crc16[v];
    for (unsigned k = 0; k < 8; ++k) {
      t.slice[k][v] = c;
      c = static_cast<std::uint16_t>((c << 8) ^ kCrcTables.crc16[c >> 8]);  // one zero byte more
    }
  }
  return t;
}

inline constexpr Crc16Slices kCrc16Slices = make_crc16_slices();

/// The CRC-16 of n more bytes, eight at a time through the tables.
inline std::uint16_t crc16_update_table(std::uint16_t crc, const std::uint8_t* p, std::size_t n) {
  const auto& t = kCrc16Slices.slice;
  for (; n >= 8; n -= 8, p += 8)
    crc = static_cast<std::uint16_t>(t[7][p[0] ^ (crc >> 8)] ^ t[6][p[1] ^ (crc & 0xFF)] ^
                                     t[5][p[2]] ^ t[4][p[3]] ^ t[3][p[4]] ^ t[2][p[5]] ^
                                     t[1][p[6]] ^ t[0][p[7]]);
  for (; n; --n, ++p) crc = crc16_byte(crc, *p, kCrcTables.crc16);
  return crc;
}

/// The same for runs of any length, by carry-less multiplication where the CPU has it
/// (crc16_clmul.cpp).
std::uint16_t crc16_update_long(std::uint16_t crc, const std::uint8_t* p, std::size_t n);

/// The CRC-16 of n more bytes on the host (the frame search's CRC of every byte, frame checks).
inline std::uint16_t crc16_update_host(std::uint16_t crc, const std::uint8_t* p, std::size_t n) {
  return n >= 64 ? crc16_update_long(crc, p, n) : crc16_update_table(crc, p, n);
}

/// The CRC-16 of n more bytes: on the device byte by byte through `table` (its copy of
/// kCrcTables.crc16 in constant or shared memory), on the host eight bytes at a time.
SIGPU_HD inline std::uint16_t crc16_update(std::uint16_t crc, const std::uint8_t* p, std::size_t n,
                                           [[maybe_unused]] const std::uint16_t* table) {
#ifdef __CUDA_ARCH__
  for (std::size_t i = 0; i < n; ++i) crc = crc16_byte(crc, p[i], table);
  return crc;
#else
  return crc16_update_host(crc, p, n);
#endif
}

/// Host conveniences over the compile-time tables.
inline std::uint8_t crc8(const std::uint8_t* p, std::size_t n) {
  return crc8_update(0, p, n, kCrcTables.crc8);
}
inline std::uint16_t crc16(const std::uint8_t* p, std::size_t n) {
  return crc16_update_host(0, p, n);
}

}  // namespace sigpu
