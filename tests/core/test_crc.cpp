#include "core/crc.hpp"

#include <gtest/gtest.h>

#include <string>

namespace sigpu {
namespace {

// Check values from the CRC catalogue: CRC-8 (poly 0x07) and CRC-16/UMTS (poly 0x8005,
// no reflection), both over "123456789".
TEST(Crc, CatalogueCheckValues) {
  const std::string s = "123456789";
  const auto* p = reinterpret_cast<const std::uint8_t*>(s.data());
  EXPECT_EQ(crc8(p, s.size()), 0xF4);
  EXPECT_EQ(crc16(p, s.size()), 0xFEE8);
}

TEST(Crc, AppendingTheCrcGivesZero) {
  std::uint8_t buf[11] = {'1', '2', '3', '4', '5', '6', '7', '8', '9'};
  const std::uint16_t c = crc16(buf, 9);
  buf[9] = c >> 8;
  buf[10] = c & 0xFF;
  EXPECT_EQ(crc16(buf, 11), 0);
}

}  // namespace
}  // namespace sigpu

#include "core/crc_combine.hpp"

#include <random>
#include <vector>

namespace sigpu {
namespace {

/// CRC-16 (poly 0x8005, MSB first) one bit at a time, from the definition.
std::uint16_t crc16_bit_serial(std::uint16_t crc, const std::uint8_t* p, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    crc ^= static_cast<std::uint16_t>(p[i] << 8);
    for (int b = 0; b < 8; ++b)
      crc = static_cast<std::uint16_t>(crc & 0x8000 ? (crc << 1) ^ 0x8005 : crc << 1);
  }
  return crc;
}

// Every host path (tables; carry-less multiplication, which the CPU running the tests has on
// x86-64) against the definition, at random offsets, lengths and starting registers.
TEST(Crc, HostCrc16MatchesBitSerial) {
  std::mt19937 rng(9);
  std::vector<std::uint8_t> d(5000);
  for (auto& b : d) b = static_cast<std::uint8_t>(rng());
  for (int t = 0; t < 1500; ++t) {
    const std::size_t a = rng() % d.size();
    const std::size_t n =
        t < 1000 ? rng() % std::min<std::size_t>(300, d.size() - a + 1) : rng() % (d.size() - a);
    const auto start = static_cast<std::uint16_t>(rng());
    const std::uint16_t want = crc16_bit_serial(start, d.data() + a, n);
    ASSERT_EQ(crc16_update_host(start, d.data() + a, n), want) << a << " + " << n;
    ASSERT_EQ(crc16_update_table(start, d.data() + a, n), want) << a << " + " << n;
    ASSERT_EQ(crc16_update_long(start, d.data() + a, n), want) << a << " + " << n;
  }
}

TEST(Crc, SpanCrcFromPrefixesMatchesDirectComputation) {
  std::mt19937 rng(5);
  std::vector<std::uint8_t> d(100000);
  for (auto& b : d) b = static_cast<std::uint8_t>(rng());
  const Crc16Shift shift;
  for (int t = 0; t < 200; ++t) {
    std::size_t a = rng() % d.size(), b = rng() % d.size();
    if (a > b) std::swap(a, b);
    const std::uint16_t ra = crc16(d.data(), a), rb = crc16(d.data(), b);
    ASSERT_EQ(static_cast<std::uint16_t>(rb ^ shift.shift(ra, b - a)), crc16(d.data() + a, b - a));
  }
}

}  // namespace
}  // namespace sigpu
