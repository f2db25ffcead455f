// MSB-first bit writer for tests that build FLAC bit streams by hand (Rice partitions, residual
// sections).
#pragma once

#include <cstdint>
#include <vector>

namespace sigpu::test {

struct BitWriter {
  std::vector<std::uint8_t> bytes;
  std::uint64_t bits = 0;
  void put(std::uint64_t v, unsigned n) {
    for (unsigned i = n; i-- > 0;) {
      if (bits % 8 == 0) bytes.push_back(0);
      if ((v >> i) & 1) bytes.back() |= std::uint8_t(0x80 >> (bits % 8));
      ++bits;
    }
  }
  void zeros(std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i) put(0, 1);
  }
};

}  // namespace sigpu::test
