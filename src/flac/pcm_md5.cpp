#include "flac/pcm_md5.hpp"

#include <cmath>
#include <vector>

#include "core/md5.hpp"

namespace sigpu::flac {
namespace {

std::int32_t coded_value(const Pcm& p, std::uint64_t offset) {
  const unsigned bps = p.bits_per_sample;
  switch (p.format) {
    case SampleFormat::raw32: return p.samples_as<std::int32_t>()[offset];
    case SampleFormat::s32: return p.samples_as<std::int32_t>()[offset] >> (32 - bps);
    case SampleFormat::s16: return p.samples_as<std::int16_t>()[offset] >> (16 - bps);
    case SampleFormat::f32:
      return static_cast<std::int32_t>(std::ldexp(p.samples_as<float>()[offset], static_cast<int>(bps) - 1));
  }
  return 0;
}

}  // namespace

std::array<std::uint8_t, 16> pcm_md5(const Pcm& p) {
  Md5 md5;
  const unsigned width = (p.bits_per_sample + 7) / 8;
  std::vector<std::uint8_t> chunk;
  chunk.reserve(1 << 16);
  const std::uint64_t total = p.samples * p.channels;
  for (std::uint64_t k = 0; k < total; ++k) {
    const std::uint64_t i = k / p.channels, c = k % p.channels;
    const std::uint64_t offset = p.layout == Layout::interleaved ? k : c * p.samples + i;
    const auto v = static_cast<std::uint32_t>(coded_value(p, offset));
    for (unsigned b = 0; b < width; ++b) chunk.push_back(static_cast<std::uint8_t>(v >> (8 * b)));
    if (chunk.size() + 4 > chunk.capacity()) {
      md5.update(chunk.data(), chunk.size());
      chunk.clear();
    }
  }
  md5.update(chunk.data(), chunk.size());
  return md5.finish();
}

}  // namespace sigpu::flac
