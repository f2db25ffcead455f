// sigpu HEVC (H.265) decoding of intra pictures: Main, Main 10 and the Main Intra / Main 10
// Intra profiles of the range extensions (what x265 writes for all-intra streams), 4:2:0.
//
//   sigpu::hevc::Decoder dec({.backend = sigpu::Backend::cpu});
//   dec.decode(bytes, [](const sigpu::hevc::Frame& f) { /* f.planes[0..2], f.hash */ });
//   for (const auto& p : dec.problems()) std::cerr << p.message << "\n";
//
// The front end parses and reconstructs every picture on the CPU and records the side
// information the in-loop filters need (sigpu::hevc_filter::PictureInfo); the filters then run
// on the chosen backend. Damaged or unsupported NAL units are reported as Problems naming the
// NAL unit and the syntax element, and decoding goes on with the next decodable picture.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <sigpu/core.hpp>

namespace sigpu::hevc {

/// Result of checking a picture against its decoded picture hash SEI (D.3.19).
enum class HashStatus {
  absent,      ///< the picture carries no hash
  matched,     ///< every component matched
  mismatched,  ///< at least one component differed
  unchecked,   ///< a hash is present but was not checked: DecodeOptions::check_hash is off,
               ///< or the picture is not the filtered one it describes (the unfiltered
               ///< reconstruction was asked for or no filter was available)
};

/// One decoded picture, cropped to the conformance window, in output order.
struct Frame {
  int width = 0, height = 0;  ///< luma samples after cropping
  int bit_depth_luma = 8, bit_depth_chroma = 8;
  int chroma_format_idc = 1;     ///< 0 monochrome (planes 1 and 2 empty), 1 4:2:0
  int poc = 0;                   ///< picture order count
  std::size_t decode_index = 0;  ///< position in decoding order
  /// Samples, one std::uint16_t each whatever the bit depth, rows of plane_width[c] samples.
  std::vector<std::uint16_t> planes[3];
  int plane_width[3] = {}, plane_height[3] = {};
  bool filtered = false;  ///< deblocking and SAO were applied (or the picture needs neither)
  HashStatus hash = HashStatus::absent;
  std::string hash_kind;  ///< "MD5", "CRC" or "checksum" when a hash was present
};

struct DecodeOptions {
  /// Where the in-loop filters run. The front end (parsing, reconstruction) is on the CPU:
  /// serial for `cpu`, otherwise whole pictures in parallel on the decoder's own worker threads
  /// (one per hardware thread, started by the first decode and kept until the decoder goes).
  Backend backend = Backend::cpu;
  /// Output the reconstruction before deblocking and SAO.
  bool unfiltered = false;
  /// Check every picture against its decoded picture hash SEI (Frame::hash, and a Problem on a
  /// mismatch). Off, hashes are reported as unchecked and the hashing's CPU time (MD5 of every
  /// sample: a fifth of the CPU work per picture under the cuda backend) is saved; FFmpeg,
  /// for one, checks only when asked (`-err_detect crccheck`).
  bool check_hash = true;
  /// Pictures with more luma samples are refused (default: MaxLumaPs of level 6.2).
  std::int64_t max_luma_samples = 35'651'584;
};

/// A NAL unit that could not be decoded (or a picture hash that did not match).
struct Problem {
  std::size_t nal_index = 0;    ///< position of the NAL unit in the stream, from 0
  int nal_type = -1;            ///< nal_unit_type, -1 when unknown
  std::size_t byte_offset = 0;  ///< offset of its start code prefix in the stream
  std::string message;          ///< names the NAL unit and the syntax element
};

/// Decodes Annex B byte streams. Not thread-safe; one instance per stream.
class Decoder {
 public:
  explicit Decoder(DecodeOptions options = {});
  ~Decoder();
  Decoder(Decoder&&) noexcept;
  Decoder& operator=(Decoder&&) noexcept;

  /// Decodes a whole byte stream and calls on_frame (on the calling thread) for each picture in
  /// output order. Never throws for bad input: each damaged unit becomes a Problem.
  void decode(std::span<const std::uint8_t> stream,
              const std::function<void(const Frame&)>& on_frame);

  const std::vector<Problem>& problems() const;
  /// True when the in-loop filters are part of this build.
  static bool filters_available();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// What `sigpu hevc info` prints: one line per parameter set, picture and slice segment.
struct StreamSummary {
  std::vector<std::string> lines;
  std::vector<Problem> problems;
  std::size_t pictures = 0;
};
StreamSummary summarize(std::span<const std::uint8_t> stream);

}  // namespace sigpu::hevc
