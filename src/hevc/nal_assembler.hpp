// An Annex B byte stream arriving in pieces of any size (a start code may be cut across them),
// cut into NAL units as their ends arrive. It holds one NAL unit at a time, refused beyond a
// bound, so memory does not grow with the stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace sigpu::hevc {

class NalAssembler {
 public:
  /// Called with a NAL unit's bytes (header included, trailing zero bytes cut) and the stream
  /// offset of its start code prefix (zero_byte included).
  using OnNal = std::function<void(std::span<const std::uint8_t> nal, std::size_t start_code)>;

  /// A NAL unit longer than max_nal_bytes, or more than max_nal_bytes before the first start
  /// code, makes push() throw InputError naming the byte offset.
  explicit NalAssembler(std::size_t max_nal_bytes) : max_nal_bytes_(max_nal_bytes) {}

  void push(std::span<const std::uint8_t> bytes, const OnNal& on_nal);
  /// Hands on the last NAL unit; bytes() and nal_units() stay until reset().
  void finish(const OnNal& on_nal);
  /// Drops what is held and starts over for a new stream.
  void reset();

  std::size_t bytes() const { return offset_; }  ///< bytes pushed since the stream began
  std::size_t nal_units() const { return nal_units_; }
  std::size_t held() const { return nal_.capacity(); }  ///< bytes of memory held

 private:
  void take(std::span<const std::uint8_t> bytes);
  void end_nal(const OnNal& on_nal);

  std::size_t max_nal_bytes_;
  std::vector<std::uint8_t> nal_;  ///< the NAL unit in progress, trailing zeros not yet added
  bool in_nal_ = false;            ///< a start code has been seen
  std::size_t nal_start_ = 0;      ///< offset of the start code of the NAL unit in progress
  std::size_t zeros_ = 0;          ///< zero bytes ending what has been taken, not in nal_
  std::size_t offset_ = 0;         ///< stream offset of the next byte
  std::size_t nal_units_ = 0;
};

/// The largest NAL unit a decoder limited to `max_luma_samples` accepts: a coded picture of 4:2:0
/// samples stored uncompressed at 16 bits (more than PCM or lossless coding of 12-bit samples
/// takes), plus room for headers; the same bound serves the bytes before the first start code.
std::size_t max_nal_bytes_for(std::int64_t max_luma_samples);

}  // namespace sigpu::hevc
