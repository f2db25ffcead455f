// What may come before a FLAC stream's first frame, read the same way by the whole-file parser
// (metadata.cpp) and the streaming one (stream_decoder.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace sigpu::flac {

/// The ID3v2 tag's whole length (header, body, footer) from its first 10 bytes, 0 when they are
/// not an ID3v2 header. Throws InputError for a size that is not syncsafe.
std::size_t id3v2_tag_bytes(std::span<const std::uint8_t> header);

/// The most junk skipped before a stream: data with no marker or frame that soon is not FLAC
/// (libFLAC would search it to the end; /dev/zero would never end).
inline constexpr std::size_t kMaxLeadingJunk = std::size_t(1) << 20;

/// Where a stream starts in bytes that have neither a fLaC marker nor a frame at `pos`: the first
/// fLaC marker or frame that decodes (CRC-16 included) in the kMaxLeadingJunk bytes from it, as
/// libFLAC and `flac -F` skip junk until they find one; nothing if there is neither.
std::optional<std::size_t> find_stream_start(std::span<const std::uint8_t> bytes, std::size_t pos);

/// Throws for bytes that start, at `pos`, neither a FLAC stream nor a frame: UnsupportedError
/// naming an Ogg container (FLAC in Ogg), InputError otherwise.
[[noreturn]] void throw_not_flac(std::span<const std::uint8_t> bytes, std::size_t pos);

}  // namespace sigpu::flac
