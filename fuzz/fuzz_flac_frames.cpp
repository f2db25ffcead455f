// libFuzzer target aimed at the frame decoder. The harness writes a valid "fLaC" marker and
// STREAMINFO chosen by the first bytes of the input, so mutations are spent on frames rather
// than on the metadata parser (fuzz_flac covers that).
//
// Input layout:
//   byte 0  bits 0-2 channels - 1; bit 3 framed mode (below); bits 4-5 sample format;
//           bit 6 planar layout; bit 7 stop at the first damaged frame
//   byte 1  bits per sample: 4 + byte % 29 (4..32)
//   byte 2  bits 0-3 sample rate (table); bits 4-5 STREAMINFO block sizes (table);
//           bit 6 STREAMINFO total samples taken from bytes 3-4, else 0 (unknown)
//   byte 3-4 total samples, little endian
//   rest    raw mode: the frames, as they are.
//           framed mode: chunks of [length lo, length hi, bytes...], each turned into a frame
//           with a sync code, a correct header CRC-8 and a correct CRC-16 appended, so the
//           fuzzer gets past the checksums into the subframe and residual decoders.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "fuzz_common.hpp"

namespace {

std::uint8_t crc8(const std::uint8_t* p, std::size_t n) {
  std::uint8_t c = 0;
  for (std::size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int b = 0; b < 8; ++b)
      c = static_cast<std::uint8_t>((c & 0x80) ? (c << 1) ^ 0x07 : c << 1);
  }
  return c;
}

std::uint16_t crc16(const std::uint8_t* p, std::size_t n) {
  std::uint16_t c = 0;
  for (std::size_t i = 0; i < n; ++i) {
    c ^= static_cast<std::uint16_t>(p[i] << 8);
    for (int b = 0; b < 8; ++b)
      c = static_cast<std::uint16_t>((c & 0x8000) ? (c << 1) ^ 0x8005 : c << 1);
  }
  return c;
}

/// Length of the frame header at p including its CRC-8, or 0 when the coded number is invalid.
std::size_t header_length(const std::uint8_t* p, std::size_t n) {
  if (n < 5) return 0;
  const unsigned first = p[4];
  std::size_t number = 1;
  if (first >= 0x80) {
    if (first == 0xFF || (first & 0xC0) == 0x80) return 0;
    while (first & (0x80u >> number)) ++number;  // leading ones = bytes in the number
  }
  const unsigned bs = p[2] >> 4, sr = p[2] & 15;
  std::size_t len = 4 + number + 1;  // codes, coded number, CRC-8
  if (bs == 6) len += 1;
  if (bs == 7) len += 2;
  if (sr == 12) len += 1;
  if (sr == 13 || sr == 14) len += 2;
  return len <= n ? len : 0;
}

void put_be(std::vector<std::uint8_t>& v, std::uint64_t x, int bytes) {
  for (int i = bytes - 1; i >= 0; --i) v.push_back(static_cast<std::uint8_t>(x >> (8 * i)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  constexpr std::size_t kControl = 5;
  if (size < kControl) return 0;
  constexpr std::array<std::uint32_t, 16> kRates = {8000,  11025, 16000, 22050, 24000,  32000,
                                                    44100, 48000, 88200, 96000, 176400, 192000,
                                                    1,     7350,  65535, 655350};
  constexpr std::array<std::array<std::uint32_t, 2>, 4> kBlockSizes = {
      {{16, 65535}, {4096, 4096}, {192, 4608}, {1152, 1152}}};

  const unsigned channels = (data[0] & 7) + 1;
  const bool framed = data[0] & 8;
  const unsigned bps = 4 + data[1] % 29;
  const std::uint32_t rate = kRates[data[2] & 15];
  const auto block = kBlockSizes[(data[2] >> 4) & 3];
  const std::uint64_t total = (data[2] & 0x40) ? (data[3] | (data[4] << 8)) : 0;

  sigpu::flac::DecodeOptions options;
  options.format = static_cast<sigpu::flac::SampleFormat>((data[0] >> 4) & 3);
  options.layout =
      (data[0] & 0x40) ? sigpu::flac::Layout::planar : sigpu::flac::Layout::interleaved;
  options.stop_on_damage = data[0] & 0x80;

  std::vector<std::uint8_t> file = {'f', 'L', 'a', 'C', 0x80, 0, 0, 34};  // last block, STREAMINFO
  put_be(file, block[0], 2);
  put_be(file, block[1], 2);
  put_be(file, 0, 3);  // min frame size unknown
  put_be(file, 0, 3);  // max frame size unknown
  // sample rate (20) | channels - 1 (3) | bits per sample - 1 (5) | total samples (36)
  const std::uint64_t packed = (std::uint64_t{rate} << 44) | (std::uint64_t{channels - 1} << 41) |
                               (std::uint64_t{bps - 1} << 36) | total;
  put_be(file, packed, 8);
  file.resize(file.size() + 16, 0);  // MD5 not set: nothing to verify

  const std::uint8_t* p = data + kControl;
  std::size_t left = size - kControl;
  if (!framed) {
    file.insert(file.end(), p, p + left);
  } else {
    while (left >= 2) {
      const std::size_t len = std::min<std::size_t>(p[0] | (p[1] << 8), left - 2);
      p += 2;
      left -= 2;
      const std::size_t start = file.size();
      file.insert(file.end(), p, p + len);
      p += len;
      left -= len;
      std::uint8_t* f = file.data() + start;
      if (len >= 2) {
        f[0] = 0xFF;
        f[1] = static_cast<std::uint8_t>(0xF8 | (f[1] & 1));
      }
      if (const std::size_t h = header_length(f, len)) f[h - 1] = crc8(f, h - 1);
      put_be(file, crc16(file.data() + start, len), 2);
    }
  }
  sigpu::fuzz::decode_both_and_compare(file, options);
  return 0;
}
