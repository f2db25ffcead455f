// Writing decoded samples straight into their final place and format (host and device).
#pragma once

#include <cstdint>
#include <cstring>

#include <sigpu/flac.hpp>

#include "core/hd.hpp"

namespace sigpu::flac {

/// A Pcm of `p`'s format, layout and stream parameters with `samples` samples and no bytes.
inline Pcm pcm_shape(const Pcm& p, std::uint64_t samples) {
  Pcm s;
  s.format = p.format;
  s.layout = p.layout;
  s.sample_rate = p.sample_rate;
  s.channels = p.channels;
  s.bits_per_sample = p.bits_per_sample;
  s.samples = samples;
  return s;
}

struct PcmTarget {
  void* data = nullptr;
  SampleFormat format = SampleFormat::raw32;
  Layout layout = Layout::interleaved;
  std::uint32_t channels = 0, bits_per_sample = 0;
  std::uint64_t samples = 0;  ///< per channel, the whole output
};

SIGPU_HD inline std::uint64_t pcm_offset(const PcmTarget& t, std::uint64_t index,
                                         unsigned channel) {
  return t.layout == Layout::interleaved ? index * t.channels + channel
                                         : channel * t.samples + index;
}

/// Bytes of one stored value (bytes_per_sample, for host and device).
SIGPU_HD inline unsigned pcm_value_bytes(SampleFormat f) {
  return f == SampleFormat::s16 ? 2 : 4;
}

/// A sample of `bps` bits as s16, full scale.
SIGPU_HD SIGPU_FORCEINLINE std::int16_t s16_sample(std::int32_t v, unsigned bps) {
  return static_cast<std::int16_t>(
      bps >= 16 ? v >> (bps - 16)
                : static_cast<std::int32_t>(static_cast<std::uint32_t>(v) << (16 - bps)));
}

/// A sample of `bps` bits as the 32 bits a 32-bit format (raw32, s32, f32) stores, full scale.
SIGPU_HD SIGPU_FORCEINLINE std::uint32_t pcm32_bits(SampleFormat format, std::int32_t v,
                                                    unsigned bps) {
  switch (format) {
    case SampleFormat::s32:
      return static_cast<std::uint32_t>(v) << (32 - bps);
    case SampleFormat::f32: {
      const float f = static_cast<float>(v) * (1.0f / static_cast<float>(1ull << (bps - 1)));
      std::uint32_t bits;
      std::memcpy(&bits, &f, 4);
      return bits;
    }
    default:
      return static_cast<std::uint32_t>(v);
  }
}

/// Full-scale conversions: s16/s32 shift to the target width, f32 divides by 2^(bps-1).
SIGPU_HD SIGPU_FORCEINLINE void store_sample(const PcmTarget& t, std::uint64_t index,
                                             unsigned channel, std::int32_t v) {
  const std::uint64_t o = pcm_offset(t, index, channel);
  if (t.format == SampleFormat::s16)
    static_cast<std::int16_t*>(t.data)[o] = s16_sample(v, t.bits_per_sample);
  else
    static_cast<std::uint32_t*>(t.data)[o] = pcm32_bits(t.format, v, t.bits_per_sample);
}

/// True when the original coded integers can be recovered exactly from this format.
inline bool lossless_for(SampleFormat f, unsigned bps) {
  switch (f) {
    case SampleFormat::raw32:
    case SampleFormat::s32:
      return true;
    case SampleFormat::s16:
      return bps <= 16;
    case SampleFormat::f32:
      return bps <= 24;
  }
  return false;
}

}  // namespace sigpu::flac
