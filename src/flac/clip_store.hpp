// How decode_clips writes a clip into its batch, host and device alike (the CPU driver and the
// CUDA backend's ClipStoreKernel): decoded samples (raw, interleaved) converted to the batch's
// format, a clip's channels kept or averaged into one, zeros past the stream's end.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

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

/// A raw sample of `bps` bits as format F stores it (store_sample's conversion), held exactly
/// in a double.
template <SampleFormat F>
SIGPU_HD SIGPU_FORCEINLINE double clip_value(std::int32_t v, unsigned bps) {
  if constexpr (F == SampleFormat::s16) {
    return s16_sample(v, bps);
  } else if constexpr (F == SampleFormat::f32) {
    const std::uint32_t bits = pcm32_bits(F, v, bps);
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  } else {
    return static_cast<std::int32_t>(pcm32_bits(F, v, bps));
  }
}

/// Stores x (a value clip_value gave, or a mean of them: integer formats round half away from
/// zero) as value `at` of a batch of format F.
template <SampleFormat F>
SIGPU_HD SIGPU_FORCEINLINE void clip_put(void* data, std::uint64_t at, double x) {
  if constexpr (F == SampleFormat::s16)
    static_cast<std::int16_t*>(data)[at] = static_cast<std::int16_t>(llround(x));
  else if constexpr (F == SampleFormat::f32)
    static_cast<float*>(data)[at] = static_cast<float>(x);
  else
    static_cast<std::int32_t*>(data)[at] = static_cast<std::int32_t>(llround(x));
}

/// Sample `i` of clip `clip`, every channel of the batch (of format F), from `frame`: that
/// sample's `channels` raw values of `bps` bits (interleaved), or null past the stream's end
/// (zeros).
template <SampleFormat F>
SIGPU_HD SIGPU_FORCEINLINE void store_clip_sample(const ClipTarget& t, std::uint64_t clip,
                                                  std::uint64_t i, const std::int32_t* frame,
                                                  unsigned channels, unsigned bps) {
  const std::uint64_t base = clip * t.length * t.channels;
  auto at = [&](unsigned c) {
    return base + (t.layout == Layout::planar ? c * t.length + i : i * t.channels + c);
  };
  if (!frame) {
    for (unsigned c = 0; c < t.channels; ++c) clip_put<F>(t.data, at(c), 0);
  } else if (t.mono && channels > 1) {
    double sum = 0;
    for (unsigned c = 0; c < channels; ++c) sum += clip_value<F>(frame[c], bps);
    clip_put<F>(t.data, at(0), sum / channels);
  } else {
    for (unsigned c = 0; c < t.channels; ++c)
      clip_put<F>(t.data, at(c), clip_value<F>(frame[c], bps));
  }
}

/// Calls fn(std::integral_constant<SampleFormat, f>{}): the format chosen once, outside the
/// loops over samples.
template <typename Fn>
void with_clip_format(SampleFormat f, Fn&& fn) {
  switch (f) {
    case SampleFormat::s16:
      fn(std::integral_constant<SampleFormat, SampleFormat::s16>{});
      break;
    case SampleFormat::s32:
      fn(std::integral_constant<SampleFormat, SampleFormat::s32>{});
      break;
    case SampleFormat::f32:
      fn(std::integral_constant<SampleFormat, SampleFormat::f32>{});
      break;
    default:
      fn(std::integral_constant<SampleFormat, SampleFormat::raw32>{});
  }
}

/// Bytes of one clip in the batch.
inline std::uint64_t clip_bytes(const ClipTarget& t) {
  return t.length * t.channels * pcm_value_bytes(t.format);
}

}  // namespace sigpu::flac
