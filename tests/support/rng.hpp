// splitmix64: the same numbers on every machine and compiler, unlike std:: distributions.
#pragma once

#include <cstdint>

namespace sigpu::test {

struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) / double(1ull << 53); }  // [0, 1)
  double symmetric() { return 2.0 * uniform() - 1.0; }                    // [-1, 1)
  unsigned below(unsigned n) { return static_cast<unsigned>(next() % n); }
  std::int64_t signed_bits(unsigned bps) { return static_cast<std::int64_t>(next()) >> (64 - bps); }
};

}  // namespace sigpu::test
