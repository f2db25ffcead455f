// ProRes test clips made at test time by FFmpeg's encoders (prores_ks, prores_aw), with
// FFmpeg's own decoding of each as the reference, cached under
// ${SIGPU_CACHE:-~/.cache/sigpu}/prores-clips. The GPU machine's bundle carries the MOVs alone
// in SIGPU_DATA_DIR/prores-clips (find_clip).
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <sigpu/prores.hpp>

namespace sigpu::prores::testing {

struct ClipSpec {
  std::string name;
  std::string source;  ///< lavfi source, e.g. "testsrc2=size=320x180:rate=25"
  int frames = 2;
  std::string encode;  ///< encoder arguments, e.g. "-c:v prores_ks -profile:v 3"
  std::string filter;  ///< optional -vf chain (before encoding)
};

/// GoogleTest prints a clip by its name.
void PrintTo(const ClipSpec& spec, std::ostream* os);

/// The clips every backend is checked on: all profiles of both encoders, alpha 8/16,
/// interlaced both field orders, quantiser extremes, every slice size, odd and tiny sizes.
const std::vector<ClipSpec>& standard_clips();

/// The cache folder where clips and references are made.
std::filesystem::path clip_dir();
bool have_ffmpeg();

/// The MOV for a spec, generated when missing (with its reference). Empty path on failure.
std::filesystem::path clip_path(const ClipSpec& spec);
/// The MOV alone (no reference needed), made when missing: for tests that compare backends
/// (the GPU machine has the MOVs in its bundle but no ffmpeg).
std::filesystem::path find_clip(const ClipSpec& spec);
/// FFmpeg's decoding of the clip: raw planar frames, in FFmpeg's native pixel format, and
/// that format's name.
std::vector<std::uint8_t> reference(const ClipSpec& spec, std::string& pix_fmt);

std::vector<std::uint8_t> read_file(const std::filesystem::path& p);
/// A copy of frame `i`'s bytes (file-backed clips read frames into a caller's buffer).
std::vector<std::uint8_t> frame_bytes(const Clip& clip, std::size_t i);

}  // namespace sigpu::prores::testing
