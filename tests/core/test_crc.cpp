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
