// The MD5 that STREAMINFO stores: of the coded integers, interleaved, little-endian, each in
// (bps + 7) / 8 bytes.
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>

#include <sigpu/flac.hpp>

#include "core/md5.hpp"

namespace sigpu::flac {

/// Hashes a Pcm in pieces, in interleaved sample order, so hashing can follow the output as it
/// arrives. Precondition: the Pcm's format is lossless for its bit depth (see lossless_for).
class PcmMd5 {
 public:
  /// The samples are at `data` (by default the Pcm's own bytes), in the Pcm's shape.
  explicit PcmMd5(const Pcm& pcm, const std::uint8_t* data = nullptr)
      : pcm_(&pcm), data_(data ? data : pcm.bytes.data()) {}
  /// Hashes all of `block`, the next piece of the same stream (same format and bit depth), and
  /// makes it the Pcm that update() reads.
  void update_all(const Pcm& block) {
    pcm_ = &block;
    data_ = block.bytes.data();
    update(0, block.samples * block.channels);
  }
  /// Values [first, first + count) in interleaved order (value = one sample of one channel).
  void update(std::uint64_t first, std::uint64_t count);
  std::array<std::uint8_t, 16> finish() { return md5_.finish(); }

 private:
  const Pcm* pcm_;
  const std::uint8_t* data_;
  Md5 md5_;
};

/// The MD5 of a whole Pcm, its samples at `data` (by default its own bytes).
std::array<std::uint8_t, 16> pcm_md5(const Pcm& pcm, const std::uint8_t* data = nullptr);

/// Hashes output on a thread of its own as it lands in host memory (landed() gives how far), so
/// that the serial MD5 runs beside the copies instead of after them. `pcm` gives the shape, `data`
/// the samples.
class FollowingMd5 {
 public:
  FollowingMd5(const Pcm& pcm, const std::uint8_t* data);
  ~FollowingMd5();
  FollowingMd5(const FollowingMd5&) = delete;
  FollowingMd5& operator=(const FollowingMd5&) = delete;

  /// The output's bytes [0, end_byte) are in place.
  void landed(std::size_t end_byte);
  std::array<std::uint8_t, 16> finish();

 private:
  void run();

  Pcm shape_;  ///< the output's shape, without bytes: the hasher outlives the producer's Pcm
  PcmMd5 md5_;
  std::size_t bytes_per_value_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::uint64_t landed_ = 0;
  bool closing_ = false;
  std::thread thread_;
};

}  // namespace sigpu::flac
