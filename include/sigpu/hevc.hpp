// sigpu HEVC (H.265) decoding: Main and Main 10 with I, P and B pictures, and the Main Intra /
// Main 10 Intra profiles of the range extensions (what x265 writes for all-intra streams); 4:2:0
// and 4:0:0.
//
//   auto src = sigpu::hevc::Source::open(path);  // .hevc, .mp4, .mkv, .ts, or "-" for stdin
//   sigpu::hevc::Decoder dec({.backend = sigpu::Backend::cpu});
//   auto on_frame = [](const sigpu::hevc::Frame& f) { /* f.planes[0..2], f.hash */ };
//   while (auto chunk = src.read()) dec.push(chunk, on_frame);
//   dec.finish(on_frame);  // throws InputError / UnsupportedError when nothing was decodable
//   for (const auto& p : dec.problems()) std::cerr << p.message << "\n";
//
// The front end parses every picture on the CPU into reconstruction records and the side
// information the in-loop filters need (sigpu::hevc_filter::PictureInfo); the cpu backends
// reconstruct and filter on the CPU, the cuda backend on the GPU. Damaged or unsupported NAL units
// are reported as Problems naming the NAL unit and the syntax element, and decoding goes on with
// the next decodable picture.
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

/// A picture left in device memory (DecodeOptions::frames_on_device): sample (x, y) of plane c
/// at planes[c][y * pitch[c] + x], one std::uint16_t each whatever the bit depth, on the device
/// the decoder runs on, complete when the frame is handed over. The decoder neither writes nor
/// reuses the storage while `owner` holds it: while the sink has the frame, and after, in a
/// frame the sink took, until that frame is destroyed or reused.
struct DeviceFrame {
  const std::uint16_t* planes[3] = {};  ///< null when the frame is on the host
  int pitch[3] = {};                    ///< samples from one row to the next
  std::shared_ptr<const void> owner;
};

/// One decoded picture, cropped to the conformance window, in output order.
struct Frame {
  int width = 0, height = 0;  ///< luma samples after cropping
  int bit_depth_luma = 8, bit_depth_chroma = 8;
  int chroma_format_idc = 1;     ///< 0 monochrome (planes 1 and 2 empty), 1 4:2:0
  int poc = 0;                   ///< picture order count
  std::size_t decode_index = 0;  ///< position in decoding order
  /// Samples on the host, rows of plane_width[c] samples; empty when the frame is on the
  /// device.
  std::vector<std::uint16_t> planes[3];
  int plane_width[3] = {}, plane_height[3] = {};
  DeviceFrame device;     ///< with DecodeOptions::frames_on_device
  bool filtered = false;  ///< deblocking and SAO were applied (or the picture needs neither)
  HashStatus hash = HashStatus::absent;
  std::string hash_kind;  ///< "MD5", "CRC" or "checksum" when a hash was present
};

struct DecodeOptions {
  /// Where the in-loop filters run. The front end (parsing, reconstruction) is on the CPU:
  /// serial for `cpu`, otherwise whole pictures in parallel on the decoder's own worker threads
  /// (one per hardware thread, started by the first decode and kept until the decoder goes).
  Backend backend = Backend::cpu;
  /// With Backend::cuda: reconstruct pictures on the GPU (motion compensation, residuals,
  /// intra prediction, then the filters; the references stay in device memory), the CPU threads
  /// only parsing. Off: the CPU threads reconstruct and the GPU only filters.
  bool reconstruct_on_gpu = true;
  /// With Backend::cuda reconstructing on the GPU: hand each picture over in device memory
  /// (Frame::device) instead of copying it to the host (Frame::planes stay empty); with
  /// check_hash a picture that carries a hash is still copied down, for the check alone. Other
  /// backends refuse it (UsageError).
  bool frames_on_device = false;
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

/// Copies a frame left on the device (Frame::device) into its host planes and lets go of the
/// device storage; a frame already on the host is left as it is. Throws CudaError when the
/// copy fails.
void copy_to_host(Frame& frame);

/// What a Decoder hands each output picture to, on the calling thread. The frame is the
/// decoder's: it may be read, or its contents taken (std::swap with a Frame handed over before
/// and since used up, or moved out); whatever storage is left in it is reused for a later
/// picture, so swapping a spent frame back in costs no allocation and no copy.
using FrameSink = std::function<void(Frame&)>;

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
  /// Throws UnsupportedError for Backend::cuda when no CUDA device is present.
  explicit Decoder(DecodeOptions options = {});
  ~Decoder();
  Decoder(Decoder&&) noexcept;
  Decoder& operator=(Decoder&&) noexcept;

  /// Feeds the next bytes of an Annex B byte stream, split anywhere (a start code may be cut
  /// across calls), and calls on_frame (on the calling thread) for each picture that is ready,
  /// in output order. The decoder holds the NAL unit in progress and the pictures in flight,
  /// not the stream: memory does not grow with the input's length. Damaged or unsupported NAL
  /// units become Problems. Throws InputError, naming the byte offset, when a NAL unit (or the
  /// bytes before the first start code) grows beyond three bytes per luma sample of
  /// DecodeOptions::max_luma_samples plus 1 MiB without a start code; the pictures decoded
  /// before it are output first, and the decoder is ready for a new stream. What on_frame
  /// throws leaves push() (or finish()) as it was thrown, not as a Problem of the stream; the
  /// rest of that call's bytes are not decoded.
  void push(std::span<const std::uint8_t> bytes, const FrameSink& on_frame);
  /// Ends the stream: decodes what is pending, outputs the remaining pictures, and makes the
  /// decoder ready for a new stream (parameter sets are kept). When the stream output no
  /// picture it throws, so that a run that decoded nothing is never taken for success:
  ///   - InputError "empty input" when no bytes were pushed;
  ///   - InputError "no HEVC NAL units found in N bytes" when there was no start code;
  ///   - UnsupportedError naming the first refused feature (a P or B slice, a profile) when
  ///     pictures were found but refused as unsupported;
  ///   - InputError "no decodable HEVC picture ..." when no picture could even be started.
  /// A stream whose pictures were all found but damaged does not throw: problems() says why.
  void finish(const FrameSink& on_frame);
  /// push() of the whole stream, then finish().
  void decode(std::span<const std::uint8_t> stream, const FrameSink& on_frame);

  const std::vector<Problem>& problems() const;
  /// True when the in-loop filters are part of this build.
  static bool filters_available();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// A piece of an Annex B byte stream; false when empty (the end of the input).
struct Chunk : std::span<const std::uint8_t> {
  using std::span<const std::uint8_t>::span;
  Chunk(std::span<const std::uint8_t> s) : std::span<const std::uint8_t>(s) {}
  explicit operator bool() const { return !empty(); }
};

/// An HEVC stream's Annex B bytes, read from a file, a pipe or a container, a chunk at a time
/// (memory does not grow with the input). What it reads is told by the content, not the name:
///   - an Annex B byte stream (a start code at the beginning): read as it is, in 4 MiB chunks;
///   - MPEG-TS (one pass: pipes and stdin too): the first HEVC video stream's packets;
///   - MP4/MOV/Matroska (a seekable file only): the first HEVC video track's samples, their
///     length-prefixed NAL units turned into Annex B, after the VPS/SPS/PPS/SEI arrays of the
///     track's hvcC.
/// Containers are read through libavformat; a build without it reads Annex B only and refuses
/// containers with UnsupportedError. Byte offsets in Problems count the Annex B bytes read().
class Source {
 public:
  /// Opens `path`, or standard input for "-". Throws InputError when the file cannot be opened
  /// or read, or is not of a format above (no video track, MP4/MKV not seekable), and
  /// UnsupportedError when its video is not HEVC ("the video track is h264, not HEVC") or the
  /// build cannot read the container.
  static Source open(const std::string& path);
  /// Reads from an open file descriptor (left open), `name` naming it in messages: Annex B and
  /// MPEG-TS in one pass; MP4/MKV when the descriptor is seekable.
  static Source from_fd(int fd, const std::string& name);

  Source(Source&&) noexcept;
  Source& operator=(Source&&) noexcept;
  ~Source();

  /// The next bytes of the stream, valid until the next call; empty at the end. Throws
  /// InputError when the input cannot be read.
  Chunk read();
  /// "Annex B", "MPEG-TS", or libavformat's name of the container ("mov,mp4,m4a,3gp,3g2,mj2",
  /// "matroska,webm").
  const std::string& format() const;
  /// Damage found in the container (a NAL unit length beyond its packet, a read error), each a
  /// Problem whose nal_index is the packet's number and byte_offset its position in the file.
  const std::vector<Problem>& problems() const;

 private:
  struct Impl;
  explicit Source(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// What `sigpu hevc info` prints: one line per parameter set, picture and slice segment.
struct StreamSummary {
  std::vector<std::string> lines;
  std::vector<Problem> problems;
  std::size_t pictures = 0;
};
/// Summarizes an Annex B byte stream. Throws InputError when it is empty or holds no NAL unit.
StreamSummary summarize(std::span<const std::uint8_t> stream);
/// Summarizes what `source` reads (containers too), a chunk at a time.
StreamSummary summarize(Source& source);

}  // namespace sigpu::hevc
