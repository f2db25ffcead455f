#include "flac/pcm_md5.hpp"

#include <cmath>
#include <cstring>

#include "flac/pcm_store.hpp"

namespace sigpu::flac {
namespace {

/// Packs samples [first, first + count) of the interleaved order into little-endian bytes of
/// `width` bytes each. Get(offset) gives the coded integer at a buffer offset.
template <typename Get>
std::size_t pack(const Pcm& p, std::uint64_t first, std::size_t count, unsigned width, Get get,
                 std::uint8_t* out) {
  std::uint8_t* o = out;
  for (std::uint64_t k = first; k < first + count; ++k) {
    std::uint64_t offset = k;
    if (p.layout == Layout::planar) offset = (k % p.channels) * p.samples + k / p.channels;
    const auto v = static_cast<std::uint32_t>(get(offset));
    for (unsigned b = 0; b < width; ++b) *o++ = static_cast<std::uint8_t>(v >> (8 * b));
  }
  return static_cast<std::size_t>(o - out);
}

template <typename Get>
void hash_range(const Pcm& p, Md5& md5, std::uint64_t first, std::uint64_t count, Get get) {
  const unsigned width = (p.bits_per_sample + 7) / 8;
  constexpr std::size_t kSamples = 1 << 14;
  std::uint8_t chunk[kSamples * 4];
  for (std::uint64_t k = first; k < first + count; k += kSamples) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(kSamples, first + count - k));
    md5.update(chunk, pack(p, k, n, width, get, chunk));
  }
}

}  // namespace

void PcmMd5::update(std::uint64_t first, std::uint64_t count) {
  const Pcm& p = *pcm_;
  const unsigned bps = p.bits_per_sample;
  // 16-bit audio decoded to interleaved s16 is already the hashed byte layout (little-endian
  // hosts).
  if (p.format == SampleFormat::s16 && bps == 16 && p.layout == Layout::interleaved) {
    md5_.update(data_ + first * 2, count * 2);
    return;
  }
  const auto* i32 = reinterpret_cast<const std::int32_t*>(data_);
  const auto* i16 = reinterpret_cast<const std::int16_t*>(data_);
  const auto* f32 = reinterpret_cast<const float*>(data_);
  switch (p.format) {
    case SampleFormat::raw32:
      hash_range(p, md5_, first, count, [&](std::uint64_t o) { return i32[o]; });
      break;
    case SampleFormat::s32:
      hash_range(p, md5_, first, count, [&](std::uint64_t o) { return i32[o] >> (32 - bps); });
      break;
    case SampleFormat::s16:
      hash_range(p, md5_, first, count, [&](std::uint64_t o) { return i16[o] >> (16 - bps); });
      break;
    case SampleFormat::f32:
      hash_range(p, md5_, first, count, [&](std::uint64_t o) {
        return static_cast<std::int32_t>(std::ldexp(f32[o], static_cast<int>(bps) - 1));
      });
      break;
  }
}

std::array<std::uint8_t, 16> pcm_md5(const Pcm& p, const std::uint8_t* data) {
  PcmMd5 h(p, data);
  h.update(0, p.samples * p.channels);
  return h.finish();
}

FollowingMd5::FollowingMd5(const Pcm& pcm, const std::uint8_t* data)
    : shape_(pcm_shape(pcm, pcm.samples)),
      md5_(shape_, data),
      bytes_per_value_(bytes_per_sample(pcm.format)) {
  thread_ = std::thread([this] { run(); });
}

FollowingMd5::~FollowingMd5() {
  if (thread_.joinable()) finish();
}

void FollowingMd5::landed(std::size_t end_byte) {
  {
    std::lock_guard lock(mutex_);
    landed_ = end_byte / bytes_per_value_;
  }
  cv_.notify_one();
}

std::array<std::uint8_t, 16> FollowingMd5::finish() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  cv_.notify_one();
  thread_.join();
  return md5_.finish();
}

void FollowingMd5::run() {
  std::uint64_t done = 0;
  for (;;) {
    std::uint64_t upto;
    bool closing;
    {
      std::unique_lock lock(mutex_);
      cv_.wait(lock, [&] { return landed_ > done || closing_; });
      upto = landed_;
      closing = closing_;
    }
    if (upto > done) md5_.update(done, upto - done);
    done = upto;
    if (closing) return;
  }
}

}  // namespace sigpu::flac
