// Pieces of the public glue shared by the CPU entry points and the CUDA decoder.
#pragma once

#include <string>

#include "flac/backends.hpp"

namespace sigpu::flac {

/// Moves a backend's output into `d`, sorts the damage list, applies stop_on_damage and checks
/// the MD5 (when asked, possible and the stream is undamaged).
void finish_decode(Decoded& d, DecodeOutput&& r, const DecodeOptions& o, bool check_md5);

/// Reads a whole file; errors name the path.
ByteBuffer read_file(const std::string& path);

}  // namespace sigpu::flac
