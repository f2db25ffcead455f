// What may come before a FLAC stream's first frame, read the same way by the whole-file parser
// (metadata.cpp) and the streaming one (stream_decoder.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace sigpu::flac {

/// The ID3v2 tag's whole length (header, body, footer) from its first 10 bytes, 0 when they are
/// not an ID3v2 header. Throws InputError for a size that is not syncsafe.
std::size_t id3v2_tag_bytes(std::span<const std::uint8_t> header);

/// Throws for bytes that start, at `pos`, neither a FLAC stream nor a frame: UnsupportedError
/// naming an Ogg container (FLAC in Ogg), InputError otherwise.
[[noreturn]] void throw_not_flac(std::span<const std::uint8_t> bytes, std::size_t pos);

}  // namespace sigpu::flac
