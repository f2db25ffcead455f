// sigpu Apple ProRes decoding (SMPTE RDD 36): every profile (Proxy, LT, 422, HQ, 4444,
// 4444 XQ), alpha, interlaced, on the CPU or the GPU, bit-exact with FFmpeg's decoder.
//
//   auto clip = sigpu::prores::open_file("clip.mov");       // MOV/QuickTime or raw 'icpf' frames
//   for (std::size_t i = 0; i < clip.frames.size(); i += 16) {  // memory stays O(batch)
//     auto out = sigpu::prores::decode(clip, {.backend = sigpu::Backend::cuda}, i, 16);
//     for (auto& d : out.report.damage) std::cerr << d.message() << "\n";
//     std::span<const std::uint16_t> y = out.frames[0].plane(0);
//   }
//
// Frames come out planar, little-endian 16-bit words, in FFmpeg's pixel formats:
// yuv422p10le for the 4:2:2 profiles, yuv444p12le (yuva444p12le with alpha) for 4444 and 4444 XQ.
// A damaged slice is reported and filled with mid grey (alpha opaque); decoding goes on.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <sigpu/core.hpp>

namespace sigpu::prores {

enum class Chroma { c422, c444 };
enum class Scan { progressive, top_field_first, bottom_field_first };

/// The frame header (RDD 36 section 5.1) of one coded frame.
struct FrameHeader {
  int width = 0, height = 0;
  int version = 0;
  std::string vendor;  ///< four characters, e.g. "fmpg", "apl0"
  Chroma chroma = Chroma::c422;
  Scan scan = Scan::progressive;
  int alpha_info = 0;  ///< 0 none, 1 8-bit, 2 16-bit alpha
  int color_primaries = 0, transfer = 0, matrix = 0;
  bool custom_luma_matrix = false, custom_chroma_matrix = false;
  std::array<std::uint8_t, 64> luma_matrix{}, chroma_matrix{};  ///< raster order
  int header_size = 0;  ///< bytes, from the frame header's first byte
};

/// Parses the 8-byte frame box ('icpf') and the frame header. Throws Error naming the field.
FrameHeader parse_frame_header(std::span<const std::uint8_t> frame);

/// Planar 16-bit output as FFmpeg lays it out: Y, Cb, Cr (and A), each `plane_width(i)` wide.
struct PixelFormat {
  int bit_depth = 10;  ///< 10 for the 4:2:2 FourCCs, 12 for 4444 / 4444 XQ (as FFmpeg)
  Chroma chroma = Chroma::c422;
  bool alpha = false;
  std::string name() const;  ///< FFmpeg's name, e.g. "yuva444p12le"
  int planes() const { return alpha ? 4 : 3; }
};

struct Frame {
  PixelFormat format;
  int width = 0, height = 0;
  Scan scan = Scan::progressive;
  std::vector<std::uint16_t> samples;  ///< every plane, one after the other

  int plane_width(int plane) const;
  std::size_t plane_size(int plane) const;  ///< in samples
  std::span<const std::uint16_t> plane(int plane) const;
  std::span<std::uint16_t> plane(int plane);
};

/// One damaged slice, a frame that could not be decoded at all (slice = -1), or bytes of a raw
/// stream that held no frame and were skipped (`bytes` > 0; `frame` is the frame after them).
struct Damage {
  std::uint64_t frame = 0;
  int picture = 0;  ///< 0, or 1 for the second field of an interlaced frame
  int slice = -1;
  int mb_x = 0, mb_y = 0;
  std::string what;
  std::uint64_t offset = 0;  ///< skipped bytes: where they start in the input
  std::uint64_t bytes = 0;   ///< skipped bytes: how many (0 for slice and frame damage)
  std::string message() const;
};

struct DecodeReport {
  Backend backend = Backend::cpu;
  std::uint64_t frames = 0;
  std::vector<Damage> damage;
  bool ok() const { return damage.empty(); }
};

struct DecodeOptions {
  Backend backend = Backend::automatic;
  /// Output precision: 0 takes it from the FourCC as FFmpeg does (12 for ap4h/ap4x, else 10;
  /// raw frames without a FourCC: 12 for 4:4:4 chroma, else 10). 10 or 12 force it.
  int bit_depth = 0;
  bool stop_on_damage = false;  ///< throw at the first damaged slice instead of concealing it
  int device = 0;               ///< CUDA device index
  int batch = 16;               ///< frames per GPU batch
  /// Refuse frames with more pixels (0: only FFmpeg's limit). A 28-byte frame may claim
  /// 16384x16384; services decoding untrusted files set this.
  std::uint64_t max_pixels = 0;
};

class ClipSource;

/// The coded frames of a clip: a table of where each frame lies, and the bytes behind it,
/// either held in `bytes` or in an open file that decode() reads frame by frame (so a long clip
/// is decoded in memory proportional to the frames of one call). Copies share the file.
struct Clip {
  std::string path;
  std::string container;     ///< "mov" or "raw"
  std::uint32_t fourcc = 0;  ///< e.g. 'apch' as the four bytes read left to right; 0 for raw
  int width = 0, height = 0;
  int fps_num = 0, fps_den = 1;  ///< frame rate when the container states it
  int sar_num = 0, sar_den = 0;  ///< sample aspect ratio when the container states it
  /// The frames' bytes when held in memory (read_raw, RawStream, containers that do not store
  /// frames as they are); empty when the frames are read from `source`.
  std::vector<std::uint8_t> bytes;
  struct Span {
    std::uint64_t offset = 0, size = 0;  ///< in the file, or in `bytes`
  };
  std::vector<Span> frames;
  /// Bytes of a raw stream skipped because they held no frame (a bad size field, junk between
  /// frames), each as Damage with its offset. decode() reports each once, in the call that
  /// decodes the frame after it (or the clip's last frame).
  std::vector<Damage> skipped;
  /// Number of the clip's first frame in its stream: labels damage (RawStream counts on).
  std::uint64_t first_frame = 0;
  /// The open file the frames are read from; null when they are in `bytes`.
  std::shared_ptr<const ClipSource> source;

  /// The bytes of frame `i`: a view of `bytes`, or read from the file into `buffer` (valid
  /// until `buffer` changes). Throws Error when the frame lies outside the bytes or the file.
  std::span<const std::uint8_t> frame(std::size_t i, std::vector<std::uint8_t>& buffer) const;
  /// The bytes of frame `i`, valid as long as the clip (or a copy) lives. From a file, each
  /// frame asked for this way is kept in memory: for looking at a few frames, not decoding.
  std::span<const std::uint8_t> frame(std::size_t i) const;
  /// True when the frames are held in `bytes` rather than read from a file on demand.
  bool in_memory() const { return !source; }
  /// Sum of the frames' sizes.
  std::uint64_t coded_bytes() const;
  std::string fourcc_string() const;
  /// The output precision FFmpeg uses for this clip (see DecodeOptions::bit_depth).
  int bit_depth(const FrameHeader& first) const;
};

/// Splits a raw stream of concatenated frames, each starting with its 32-bit size and 'icpf',
/// held in memory. A frame whose size field is bad (too small, not followed by the next frame's
/// 'icpf' tag) is skipped up to the next tag and listed in Clip::skipped; a last frame cut
/// short is kept (its missing slices are reported when decoding). Throws InputError when the
/// bytes are empty or hold no frame.
Clip read_raw(std::vector<std::uint8_t> bytes, std::string path = {});
/// Reads a QuickTime/MOV file (through libavformat): the first ProRes video track's frames;
/// other tracks are ignored. Frames stay in the file (read on demand) when the container
/// stores them as they are, else (e.g. Matroska) they are held in memory. Throws InputError
/// when the file is not one libavformat reads or has no ProRes track, UnsupportedError when
/// sigpu was built without libavformat.
Clip read_mov(const std::string& path);
/// Raw 'icpf' frames when the file starts with one, else MOV; frames are read on demand.
/// A non-seekable path (a pipe) is read whole into memory when raw, refused when MOV
/// (UnsupportedError); RawStream reads raw frames from a pipe in bounded memory.
/// Throws InputError for a missing, unreadable or empty file, a directory, or no frame.
Clip open_file(const std::string& path);

/// Raw 'icpf' frames read in one pass from a file descriptor (a pipe, stdin, a socket), in
/// memory bounded by the frames of one call; bad size fields are resynchronised on as by
/// read_raw. Each call to next() may run on any thread, one at a time.
class RawStream {
 public:
  /// Reads from `fd` (not closed here); `name` labels errors. Throws InputError when the
  /// input is empty, UnsupportedError when it is a MOV ("MOV needs a seekable file").
  explicit RawStream(int fd, std::string name = "-");
  ~RawStream();
  RawStream(RawStream&&) noexcept;
  RawStream& operator=(RawStream&&) noexcept;

  /// The next frames, at most `max_frames` (0: 1), as a clip holding their bytes, numbered on
  /// from the previous call's (Clip::first_frame); no frames once the input has ended. Throws
  /// InputError when the input ends without having held any frame.
  Clip next(std::size_t max_frames);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// Decodes one coded frame. `frame_number` only labels damage in the report.
Frame decode_frame(std::span<const std::uint8_t> frame, int bit_depth, DecodeReport& report,
                   const DecodeOptions& options = {}, std::uint64_t frame_number = 0);

struct Decoded {
  std::vector<Frame> frames;
  DecodeReport report;
};

class CudaDecoder;

/// Decodes `count` frames of a clip starting at `first` (count 0: to the end), reading only
/// those frames' bytes. With the cuda backend, `gpu` (when given) is used instead of a decoder
/// made for this call, so that repeated calls keep its buffers.
Decoded decode(const Clip& clip, const DecodeOptions& options = {}, std::size_t first = 0,
               std::size_t count = 0, CudaDecoder* gpu = nullptr);

/// Frames of one batch, all of one shape: frame i starts at samples + i * frame_samples, its
/// planes laid out as in Frame::samples. Owned by the decoder, valid until its next call.
struct BatchFrames {
  PixelFormat format;
  int width = 0, height = 0;
  Scan scan = Scan::progressive;
  std::size_t count = 0, frame_samples = 0;
  const std::uint16_t* samples = nullptr;  ///< device memory or pinned host memory
};

/// A GPU decoder that keeps its streams and buffers between calls: variable-length decoding
/// with one thread per slice and component, then dequantisation + IDCT per 8x8 block.
/// Throws Error when the build has no CUDA or no device is present.
class CudaDecoder {
 public:
  explicit CudaDecoder(int device = 0);
  ~CudaDecoder();
  CudaDecoder(CudaDecoder&&) noexcept;
  CudaDecoder& operator=(CudaDecoder&&) noexcept;

  /// Host bytes in, host frames out. Frames of a call may differ in size and format; frames
  /// whose header is unusable are reported and concealed as by the CPU decoders.
  std::vector<Frame> decode(std::span<const std::span<const std::uint8_t>> frames, int bit_depth,
                            DecodeReport& report, std::uint64_t first_frame_number = 0);

  /// Host bytes in, frames in the decoder's pinned host memory: the batch is cut into chunks
  /// whose upload, decoding and download overlap on two streams. All frames must share their
  /// dimensions, chroma format, scan and alpha (throws Error otherwise).
  BatchFrames decode_host(std::span<const std::span<const std::uint8_t>> frames, int bit_depth,
                          DecodeReport& report, std::uint64_t first_frame_number = 0);

  /// Host bytes in, frames left in device memory (same-shape frames, as decode_host).
  BatchFrames decode_device(std::span<const std::span<const std::uint8_t>> frames, int bit_depth,
                            DecodeReport& report, std::uint64_t first_frame_number = 0);

  /// Copies frame `i` of a decode_device result to host memory (frame_samples words).
  void download(const BatchFrames& frames, std::size_t i, std::uint16_t* dst);

  /// Device seconds of the last decode_device call's kernels alone (bytes already on the device
  /// to frames in device memory), by stage, timed with CUDA events on the decoder's stream.
  struct StageSeconds {
    double clear = 0;  ///< zeroing the coefficient, macroblock and status buffers
    double vld = 0;    ///< variable-length decoding (and alpha), one thread per slice component
    double idct = 0;   ///< dequantisation, IDCT and the output samples
    double total() const { return clear + vld + idct; }
  };
  StageSeconds last_kernel_seconds() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace sigpu::prores
