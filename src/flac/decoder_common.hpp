// Pieces of the public glue shared by the CPU entry points and the CUDA decoder.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "flac/backends.hpp"

namespace sigpu::flac {

/// Moves a backend's output into `d`, sorts the damage list, applies stop_on_damage and checks
/// the MD5 (when asked, possible and the stream is undamaged). A backend that hashed the output
/// while it arrived passes the digest in `computed`; one that left the PCM in the caller's memory
/// instead of pcm.bytes passes where it is in `pcm_at`, and it is hashed there.
void finish_decode(Decoded& d, DecodeOutput&& r, const DecodeOptions& o, bool check_md5,
                   const std::array<std::uint8_t, 16>* computed = nullptr,
                   const std::uint8_t* pcm_at = nullptr);

/// Whether damage cost audio: any damage but bytes after the last frame (kAfterLastFrame), after
/// which the PCM is whole and its MD5 is still checked.
bool audio_damaged(const std::vector<Damage>& damage);

/// Whether finish_decode will want an MD5 of this output.
bool md5_wanted(const Stream& stream, const DecodeOptions& o, const Pcm& shape);

/// Reads a whole file; errors name the path.
ByteBuffer read_file(const std::string& path);

}  // namespace sigpu::flac
