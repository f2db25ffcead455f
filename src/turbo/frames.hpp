// The information bits of the frames that simulate() and benchmark() decode.
#pragma once

#include <cstdint>
#include <random>
#include <span>

#include <sigpu/turbo.hpp>

namespace sigpu::turbo {

/// Random bits seeded by (seed, frame); with_crc: the last 24 are the CRC24B of the others, so
/// that early termination can stop on them.
inline void random_frame(std::uint64_t seed, std::uint64_t frame, bool with_crc,
                         std::span<std::uint8_t> bits) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + frame);
  const std::size_t data = with_crc ? bits.size() - 24 : bits.size();
  for (std::size_t k = 0; k < data; ++k) bits[k] = static_cast<std::uint8_t>(rng() & 1u);
  if (!with_crc) return;
  const std::uint32_t crc = crc24b(bits.first(data));
  for (int i = 0; i < 24; ++i) bits[data + i] = (crc >> (23 - i)) & 1u;
}

}  // namespace sigpu::turbo
