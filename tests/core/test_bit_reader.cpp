#include "core/bit_reader.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace sigpu {
namespace {

// A plain reference: bit i of the stream is bit (7 - i % 8) of byte i / 8.
struct SlowBits {
  const std::vector<std::uint8_t>& d;
  std::uint64_t pos = 0;
  std::uint64_t read(unsigned n) {
    std::uint64_t v = 0;
    for (unsigned k = 0; k < n; ++k, ++pos) {
      const unsigned bit = pos / 8 < d.size() ? (d[pos / 8] >> (7 - pos % 8)) & 1 : 0;
      v = (v << 1) | bit;
    }
    return v;
  }
};

TEST(BitReader, MatchesBitByBitReferenceOnRandomReads) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::uint8_t> data(1 + rng() % 64);
    for (auto& b : data) b = static_cast<std::uint8_t>(rng());
    const std::size_t start = rng() % data.size();
    BitReader br(data.data(), data.size(), start);
    SlowBits ref{data, start * 8};
    while (ref.pos < data.size() * 8 + 40) {
      const unsigned op = rng() % 4;
      if (op == 0) {
        const unsigned n = rng() % 33;
        ASSERT_EQ(br.read(n), ref.read(n)) << "trial " << trial;
      } else if (op == 1) {
        const unsigned n = 1 + rng() % 64;
        const std::uint64_t raw = ref.read(n);
        const std::int64_t expect =
            n == 64 ? std::int64_t(raw) : (std::int64_t(raw << (64 - n)) >> (64 - n));
        ASSERT_EQ(br.read_signed64(n), expect);
      } else if (op == 2) {
        std::uint32_t zeros = 0;
        while (ref.pos < data.size() * 8 + 64 && ref.read(1) == 0) ++zeros;
        const std::uint32_t got = br.read_unary();
        if (ref.pos <= data.size() * 8)
          ASSERT_EQ(got, zeros);
        else
          break;  // ran off the end: only overrun() is specified
      } else {
        ref.pos = (ref.pos + 7) / 8 * 8;
        br.align_to_byte();
      }
      ASSERT_EQ(br.bit_position(), ref.pos);
      ASSERT_EQ(br.overrun(), ref.pos > data.size() * 8);
    }
  }
}

TEST(BitReader, NeverReadsPastTheEndAndReportsOverrun) {
  // An exactly sized heap buffer: ASan would catch any read beyond it.
  auto* data = new std::uint8_t[3]{0xFF, 0x00, 0x01};
  BitReader br(data, 3, 1);
  EXPECT_EQ(br.read(16), 0x0001u);
  EXPECT_FALSE(br.overrun());
  EXPECT_EQ(br.read(8), 0u);
  EXPECT_TRUE(br.overrun());
  br.read_unary();  // only zeros remain: must stop, not loop or read out of bounds
  EXPECT_TRUE(br.overrun());
  delete[] data;
}

TEST(BitReader, SignedReadsSignExtend) {
  const std::vector<std::uint8_t> data{0b10110000, 0x80, 0, 0, 0, 0};
  BitReader br(data.data(), data.size());
  EXPECT_EQ(br.read_signed(4), -5);
  EXPECT_EQ(br.read_signed(0), 0);
  br.align_to_byte();
  EXPECT_EQ(br.read_signed(32), INT32_MIN);
}

}  // namespace
}  // namespace sigpu
