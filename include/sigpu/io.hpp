// sigpu I/O: how every command reads its input and writes its output, for programs that want to
// behave the same way.
//
//   sigpu::io::Input in("song.flac");                  // or "-" for stdin
//   sigpu::io::Output out("song.wav", {.force = false, .inputs = {&in}});
//   sigpu::io::PcmWriter wav(out, sigpu::io::pcm_format("", out.path()), shape, total_samples);
//   for (...) wav.append(block);
//   wav.finish();                                      // header patched, file renamed into place
//
// An Output is written under a hidden temporary name in the destination's folder and renamed
// when finish()/commit() succeeds; destroyed before that (an exception, a failed decode) it
// removes the temporary file, and install_interrupt_cleanup() does the same on SIGINT/SIGTERM.
// So a file under the asked-for name is always complete. Nothing here is thread-safe: one
// thread per Input or Output.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <sigpu/core.hpp>

namespace sigpu::io {

// ---- input ---------------------------------------------------------------------------------

/// A file to read: a path, or "-" for standard input. Regular files can be mapped or read at
/// any offset; stdin, pipes and devices are read once, in order.
class Input {
 public:
  /// Opens `path` ("-": stdin). Throws InputError when it is missing, a directory or unreadable.
  explicit Input(std::string path);
  ~Input();
  Input(Input&&) noexcept;
  Input& operator=(Input&&) noexcept;

  /// The path as given ("-" for stdin).
  const std::string& path() const { return path_; }
  /// For messages: the path, or "stdin".
  std::string name() const { return path_ == "-" ? "stdin" : path_; }
  /// A regular file: size() is its length, map() and read_at() work.
  bool seekable() const { return seekable_; }
  /// The length of a regular file; 0 for streams.
  std::uint64_t size() const { return size_; }

  /// Reads the next bytes into `buffer`, as many as are there up to its size; 0 at the end.
  /// Throws InputError naming the file on a read error.
  std::size_t read(std::span<std::uint8_t> buffer);
  /// Reads at an offset without moving the sequential position (regular files only).
  std::size_t read_at(std::uint64_t offset, std::span<std::uint8_t> buffer);
  /// The whole file mapped read-only: only the pages touched are read. Regular files only:
  /// throws UsageError for a stream ("needs a seekable file").
  std::span<const std::uint8_t> map();
  /// The whole input in memory: mapped for a regular file, read for a stream. A stream longer
  /// than `max_bytes` is refused with InputError.
  std::span<const std::uint8_t> all(std::uint64_t max_bytes);

  /// True when `path` names this same file (the same device and inode).
  bool same_file_as(const std::string& path) const;

 private:
  std::string path_;
  int fd_ = -1;
  bool seekable_ = false;
  std::uint64_t size_ = 0;
  std::uint64_t device_ = 0, inode_ = 0;
  const std::uint8_t* map_ = nullptr;
  std::vector<std::uint8_t> slurped_;
};

// ---- output --------------------------------------------------------------------------------

struct OutputOptions {
  bool force = false;                  ///< replace an existing file
  std::vector<const Input*> inputs{};  ///< files the output must never be
};

/// A file to write: a path, "-" for standard output, or an existing device or pipe (e.g.
/// /dev/null), which is written directly. The constructor checks everything that can be
/// checked before work starts: the output is not one of the inputs, it does not exist unless
/// `force`, its folder exists and is writable (UsageError or OutputError otherwise).
class Output {
 public:
  Output(std::string path, const OutputOptions& options = {});
  /// Removes the temporary file unless commit() ran.
  ~Output();
  Output(const Output&) = delete;
  Output& operator=(const Output&) = delete;

  const std::string& path() const { return path_; }
  /// For messages: the path, or "stdout".
  std::string name() const { return path_ == "-" ? "stdout" : path_; }
  /// Whether seek() works (a regular file, temporary or direct).
  bool seekable() const { return seekable_; }

  /// Throws OutputError naming the file (a full disk, a closed pipe).
  void write(std::span<const std::uint8_t> bytes);
  void write(std::string_view text);
  /// Rewrites from `offset` (for headers whose sizes are known at the end).
  void seek(std::uint64_t offset);
  /// The path a writer of its own (a library that opens files by name) should write to: the
  /// temporary file, or the named device. stdout has none (UsageError).
  const std::string& staging_path() const;
  /// Flushes and moves the temporary file to its name. Without force, a file that appeared
  /// there meanwhile is not replaced (OutputError).
  void commit();

 private:
  void flush();

  std::string path_, temp_;
  int fd_ = -1;
  bool owns_fd_ = false, seekable_ = false, force_ = false, committed_ = false;
  std::vector<std::uint8_t> buffer_;
};

/// Removes the temporary files of unfinished Outputs when SIGINT, SIGTERM or SIGHUP arrives,
/// then dies of the signal as if not caught (the shell then reports 128 + its number).
void install_interrupt_cleanup();

// ---- formats -------------------------------------------------------------------------------

enum class PcmFormat { wav, raw, npy };
enum class PictureFormat { yuv, y4m, png, npy };

/// The format `format` names ("wav", ...), else the one `path`'s extension names; "-" (stdout)
/// or an existing device or pipe (/dev/null) without either is WAV. Throws UsageError naming both
/// when neither tells, or they disagree.
PcmFormat pcm_format(std::string_view format, std::string_view path);
/// As pcm_format for pictures (.yuv/.raw, .y4m, .png, .npy); stdout and devices are Y4M.
PictureFormat picture_format(std::string_view format, std::string_view path);
std::string_view extension(PcmFormat f);      ///< ".wav", ".raw", ".npy"
std::string_view extension(PictureFormat f);  ///< ".yuv", ".y4m", ".png", ".npy"

/// The output a decode writes when none is named: `input`'s name with the format's extension,
/// next to it (stdin has no name: UsageError asking for -o).
std::string default_output(const std::string& input, std::string_view extension);

// ---- PCM -----------------------------------------------------------------------------------

/// How samples are held in memory. `raw32`: int32 holding `bits_per_sample` significant bits
/// (a decoder's native width); the others are the usual fixed widths.
enum class SampleType { raw32, s16, s32, f32 };

/// A block of PCM in memory: `samples` per channel, interleaved or one plane per channel.
struct PcmView {
  SampleType type = SampleType::raw32;
  bool planar = false;
  std::uint32_t sample_rate = 0, channels = 0, bits_per_sample = 0;
  std::uint64_t samples = 0;
  const void* data = nullptr;
};

/// Writes PCM as WAV (WAVE_FORMAT_EXTENSIBLE where needed, RF64 past 4 GB), raw little-endian
/// samples, or a NumPy array of shape (samples, channels), block by block through a small buffer.
class PcmWriter {
 public:
  /// `expected_samples` per channel, 0 when unknown: known, the header is final at once (a pipe
  /// works); unknown, sizes are patched at finish() (on a pipe the WAV sizes say "unknown").
  PcmWriter(Output& out, PcmFormat format, const PcmView& shape, std::uint64_t expected_samples);
  ~PcmWriter();
  PcmWriter(const PcmWriter&) = delete;
  PcmWriter& operator=(const PcmWriter&) = delete;

  /// Appends samples [first, first + count) of `block`, which has the shape given at creation.
  void append(const PcmView& block, std::uint64_t first, std::uint64_t count);
  void append(const PcmView& block) { append(block, 0, block.samples); }
  /// Writes the final sizes and commits the Output.
  void finish();

  std::uint64_t samples_written() const { return samples_; }
  /// Largest RIFF size a plain WAV may have; above it the file becomes RF64. For tests.
  static void set_max_riff_size_for_testing(std::uint64_t bytes);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::uint64_t samples_ = 0;
};

// ---- pictures ------------------------------------------------------------------------------

enum class Chroma { c400, c420, c422, c444 };
enum class Scan { progressive, top_field_first, bottom_field_first };

/// One decoded picture: up to four planes (Y, Cb, Cr, alpha) of 16-bit samples.
struct PictureView {
  int width = 0, height = 0, bit_depth = 8;
  Chroma chroma = Chroma::c420;
  bool alpha = false;
  Scan scan = Scan::progressive;
  const std::uint16_t* planes[4] = {};
  int plane_width[4] = {}, plane_height[4] = {};
  int stride[4] = {};  ///< samples from one row to the next
};

enum class Range { unknown, limited, full };

/// What a picture file says about the whole sequence.
struct VideoInfo {
  int fps_num = 25, fps_den = 1;
  int sar_num = 1, sar_den = 1;
  int matrix = 1;  ///< ISO/IEC 23091-2 MatrixCoefficients, for PNG's conversion to RGB
  Range range = Range::unknown;  ///< written into Y4M when known
  /// Pictures to come, 0 when unknown (a .npy on a pipe needs it).
  std::uint64_t expected_pictures = 0;
};

/// Writes pictures as raw planar YUV(A) (one byte per sample up to 8 bits, else two, little-
/// endian: FFmpeg's pixel formats), Y4M, NumPy (uint8 or uint16: shape (pictures, planes,
/// height, width) when all planes have one size, else (pictures, samples) holding each
/// picture's planes one after the other as in the .yuv file), or one picture as a 16-bit RGB(A)
/// PNG (limited-range BT.601 or BT.709 by `matrix`; a second picture is an error).
class PictureWriter {
 public:
  PictureWriter(Output& out, PictureFormat format, const VideoInfo& info);
  ~PictureWriter();
  PictureWriter(const PictureWriter&) = delete;
  PictureWriter& operator=(const PictureWriter&) = delete;

  /// Throws UsageError when the format cannot hold the picture (Y4M with alpha above 8 bits, a
  /// second PNG picture, a shape change in a .npy).
  void write(const PictureView& picture);
  /// Finishes headers and commits the Output.
  void finish();
  std::uint64_t pictures_written() const { return pictures_; }
  /// Whether this build writes PNG (libpng).
  static bool png_available();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::uint64_t pictures_ = 0;
};

}  // namespace sigpu::io
