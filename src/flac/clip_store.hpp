// How decode_clips writes a clip into its batch, host and device alike (the CPU driver and the
// CUDA backend's ClipStoreKernel): decoded samples (raw, interleaved) converted to the batch's
// format, a clip's channels kept or averaged into one, zeros past the stream's end.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include <sigpu/flac.hpp>

#include "core/hd.hpp"
#include "flac/pcm_store.hpp"

namespace sigpu::flac {

/// The batch: `clips` clips of `length` samples of `channels` channels each, clip i at
/// i * length * channels values; planar: (clips, channels, length), else (clips, length,
/// channels). With `mono` (channels 1) a clip's channels are averaged into one.
struct ClipTarget {
  void* data = nullptr;
  SampleFormat format = SampleFormat::f32;
  Layout layout = Layout::planar;
  std::uint32_t channels = 0;
  std::uint64_t length = 0;
  bool mono = false;
};

/// A raw sample of `bps` bits as the batch's format stores it (store_sample's conversion), held
/// exactly in a double.
SIGPU_HD inline double clip_value(SampleFormat format, std::int32_t v, unsigned bps) {
  switch (format) {
    case SampleFormat::s16:
      return s16_sample(v, bps);
    case SampleFormat::f32: {
      const std::uint32_t bits = pcm32_bits(format, v, bps);
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    default:
      return static_cast<std::int32_t>(pcm32_bits(format, v, bps));
  }
}

/// Stores x (a value clip_value gave, or a mean of them: integer formats round half away from
/// zero) at value `at` of the batch.
SIGPU_HD inline void clip_put(const ClipTarget& t, std::uint64_t at, double x) {
  switch (t.format) {
    case SampleFormat::s16:
      static_cast<std::int16_t*>(t.data)[at] = static_cast<std::int16_t>(llround(x));
      break;
    case SampleFormat::f32:
      static_cast<float*>(t.data)[at] = static_cast<float>(x);
      break;
    default:
      static_cast<std::int32_t*>(t.data)[at] = static_cast<std::int32_t>(llround(x));
  }
}

/// Sample `i` of clip `clip`, every channel of the batch, from `frame`: that sample's `channels`
/// raw values of `bps` bits (interleaved), or null past the stream's end (zeros).
SIGPU_HD inline void store_clip_sample(const ClipTarget& t, std::uint64_t clip, std::uint64_t i,
                                       const std::int32_t* frame, unsigned channels,
                                       unsigned bps) {
  const std::uint64_t base = clip * t.length * t.channels;
  auto at = [&](unsigned c) {
    return base + (t.layout == Layout::planar ? c * t.length + i : i * t.channels + c);
  };
  if (!frame) {
    for (unsigned c = 0; c < t.channels; ++c) clip_put(t, at(c), 0);
  } else if (t.mono && channels > 1) {
    double sum = 0;
    for (unsigned c = 0; c < channels; ++c) sum += clip_value(t.format, frame[c], bps);
    clip_put(t, at(0), sum / channels);
  } else {
    for (unsigned c = 0; c < t.channels; ++c) clip_put(t, at(c), clip_value(t.format, frame[c], bps));
  }
}

/// Bytes of one clip in the batch.
inline std::uint64_t clip_bytes(const ClipTarget& t) {
  return t.length * t.channels * pcm_value_bytes(t.format);
}

}  // namespace sigpu::flac
