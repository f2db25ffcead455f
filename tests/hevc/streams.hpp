// HEVC test streams made at test time by x265 (all-intra, --keyint 1, with picture hashes, unless
// a spec's arguments set another --keyint), with FFmpeg's decoding of each as the reference,
// cached under ${SIGPU_CACHE:-~/.cache/sigpu}/hevc-streams.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <sigpu/hevc.hpp>

namespace sigpu::hevc::testing {

struct StreamSpec {
  std::string name;
  std::string source;  ///< lavfi source, e.g. "testsrc2=size=64x64:rate=25"
  int frames = 2;
  int bit_depth = 8;
  std::string x265;    ///< extra x265 arguments
  std::string filter;  ///< optional -vf chain before encoding
  bool mono = false;   ///< 4:0:0 (x265 --input-csp i400)
  /// True when the stream uses deblocking or SAO (its MD5 holds only after the filters).
  bool filtered() const {
    return x265.find("--no-deblock") == std::string::npos ||
           x265.find("--no-sao") == std::string::npos;
  }
};

/// The streams every test runs on: 8 and 10 bit, CTU 16/32/64, QP 0..51, SAO and deblocking
/// on/off/offsets, slices, WPP on/off, lossless, transform skip, scaling lists, chroma QP
/// offsets, small quantization groups, odd sizes, MD5 and checksum hashes.
const std::vector<StreamSpec>& standard_streams();

/// Inter-coded streams (P and B pictures) across x265's settings: presets, B-frames and pyramid,
/// weighted prediction, several references, AMP, TMVP off, merge candidates, open GOP,
/// constrained intra prediction, 8 and 10 bit, CTU sizes and slices; small pictures.
const std::vector<StreamSpec>& inter_streams();

bool have_tools();  ///< x265 and ffmpeg are on PATH

/// $SIGPU_DATA_DIR/<name> when it exists (the GPU machine's bundle), else
/// ${SIGPU_CACHE:-~/.cache/sigpu}/<name>.
std::filesystem::path data_dir(const std::string& name);

/// The .hevc of a spec, generated when missing (with FFmpeg's raw decoding next to it as
/// <name>.ref). Empty path when the tools are missing or encoding failed.
std::filesystem::path stream_path(const StreamSpec& spec);
std::vector<std::uint8_t> reference(const StreamSpec& spec);
/// True when FFmpeg's own check of the stream's MD5 SEI passed, so its output is an oracle.
bool ffmpeg_verified(const StreamSpec& spec);
std::vector<std::uint8_t> read_file(const std::filesystem::path& p);
/// Encodes raw y4m from a lavfi source with x265 into `out` (no cache, no reference).
bool encode(const std::string& source, int frames, int bit_depth, const std::string& x265_args,
            const std::filesystem::path& out);
/// FFmpeg's name of the raw format the decoder's output matches.
std::string pix_fmt(int bit_depth, bool mono);

/// A decode's frames as FFmpeg's rawvideo writes them (samples above 8 bits as two bytes, little
/// endian), the frames without their planes, and the decoder's problems.
struct RawDecode {
  std::vector<std::uint8_t> bytes;
  std::vector<Frame> frames;
  std::vector<Problem> problems;
  void add(const Frame& f);  ///< as a frame callback
};
/// The problems' messages, one a line (for a test's failure message).
std::string problems_text(const std::vector<Problem>& ps);

}  // namespace sigpu::hevc::testing
