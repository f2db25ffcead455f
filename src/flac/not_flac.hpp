// The one message for bytes that are not FLAC, shared by the whole-file and streaming parsers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace sigpu::flac {

/// Throws for bytes that start, at `pos`, neither a FLAC stream nor a frame: UnsupportedError
/// naming an Ogg container (FLAC in Ogg), InputError otherwise.
[[noreturn]] void throw_not_flac(std::span<const std::uint8_t> bytes, std::size_t pos);

}  // namespace sigpu::flac
