// Splitting a raw ProRes stream (frames concatenated, each a 32-bit big-endian size and the
// tag 'icpf') into frames, resynchronising at the next tag where a size field is bad.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <sigpu/prores.hpp>

namespace sigpu::prores {

/// The smallest frame: the 8-byte box and a 20-byte frame header.
inline constexpr std::uint64_t kMinRawFrame = 28;

/// True when bytes 4..7 of `b` (at least 8 bytes) are 'icpf'.
bool has_icpf_tag(std::span<const std::uint8_t> b);
/// True when bytes 4..7 name a QuickTime atom that starts MOV files ('ftyp', 'moov', ...).
bool looks_like_mov(std::span<const std::uint8_t> b);

class RawSplitter {
 public:
  /// Copies up to dst.size() bytes from an offset; returns how many (short only at the end).
  using Read = std::function<std::size_t(std::uint64_t, std::span<std::uint8_t>)>;
  /// Called with an offset below which the splitter needs no more bytes (streams drop them).
  using Release = std::function<void(std::uint64_t)>;

  RawSplitter(Read read, Release release = {})
      : read_(std::move(read)), release_(std::move(release)) {}

  /// The next frame, or none at the end of the input. Bytes skipped to reach it are appended
  /// to `skipped` (merged with the previous entry when adjacent), labelled `frame_number`.
  std::optional<Clip::Span> next(std::uint64_t frame_number, std::vector<Damage>& skipped);

 private:
  /// The first frame start q >= from whose tag is in place; sets `end` to where the input ended
  /// when there is none. `release` lets a stream drop what was scanned.
  std::optional<std::uint64_t> find_tag(std::uint64_t from, std::uint64_t& end, bool release);
  /// Records pos_..stop as skipped and moves there.
  void skip_to(std::uint64_t stop, std::uint64_t frame_number, std::vector<Damage>& skipped,
               const std::string& why);
  /// Skips from pos_ to the next tag at or after `from`; false when the input ended first.
  bool resync(std::uint64_t from, std::uint64_t frame_number, std::vector<Damage>& skipped,
              const std::string& why);

  Read read_;
  Release release_;
  std::uint64_t pos_ = 0;
};

}  // namespace sigpu::prores
