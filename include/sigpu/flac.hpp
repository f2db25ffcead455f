// sigpu FLAC decoding (RFC 9639): every frame found and decoded in parallel, on all CPU cores
// or on the GPU, bit-exact with libFLAC.
//
//   auto out = sigpu::flac::decode_file("song.flac", {.backend = sigpu::Backend::cuda});
//   if (!out.report.ok()) for (auto& d : out.report.damage) std::cerr << d.message() << "\n";
//   const std::int32_t* pcm = out.pcm.samples<std::int32_t>();   // interleaved
//
// Damaged frames are reported, never passed off as good: by default their span is filled
// with silence (timing kept) and decoding goes on after them.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <sigpu/core.hpp>

namespace sigpu::flac {

/// STREAMINFO (RFC 9639 section 8.2). Zero means "unknown" for the frame sizes and total.
struct StreamInfo {
  std::uint32_t min_block_size = 0, max_block_size = 0;
  std::uint32_t min_frame_size = 0, max_frame_size = 0;
  std::uint32_t sample_rate = 0;
  std::uint32_t channels = 0;
  std::uint32_t bits_per_sample = 0;
  std::uint64_t total_samples = 0;  ///< per channel
  std::array<std::uint8_t, 16> md5{};
  bool md5_set() const;
};

/// What a caller supplies for streams without STREAMINFO whose frame headers defer to it.
struct StreamParams {
  std::uint32_t sample_rate = 0;
  std::uint32_t channels = 0;
  std::uint32_t bits_per_sample = 0;
};

struct MetadataBlock {
  std::uint8_t type = 0;     ///< 0 STREAMINFO, 1 PADDING, 2 APPLICATION, 3 SEEKTABLE,
                             ///< 4 VORBIS_COMMENT, 5 CUESHEET, 6 PICTURE, others unknown
  std::uint64_t offset = 0;  ///< byte offset of the block header in the file
  std::uint32_t length = 0;  ///< body length in bytes
  std::string summary;       ///< one line for `sigpu flac info`
};

struct SeekPoint {
  std::uint64_t sample = 0, offset = 0;
  std::uint16_t samples = 0;
};

/// The container around the audio: everything before the first frame.
struct Stream {
  StreamInfo info;
  bool has_streaminfo = false;
  std::vector<MetadataBlock> blocks;
  std::vector<SeekPoint> seek_points;
  std::string vendor;
  std::vector<std::string> comments;  ///< Vorbis comments, "NAME=value"
  std::uint64_t audio_offset = 0;     ///< first byte of the first frame
  std::vector<std::string> warnings;  ///< odd but tolerated metadata
};

/// Parses the marker (after an optional ID3v2 tag) and the metadata blocks, or accepts data
/// that starts at a frame header. Throws Error with the byte offset on malformed metadata.
Stream parse_stream(std::span<const std::uint8_t> file);

enum class SampleFormat {
  raw32,  ///< int32 holding the coded integer (right-aligned), as libFLAC gives it
  s16,    ///< int16 full scale (narrower samples shifted up, wider ones truncated)
  s32,    ///< int32 full scale (left-aligned)
  f32,    ///< float in [-1, 1)
};
enum class Layout { interleaved, planar };

std::size_t bytes_per_sample(SampleFormat f);

/// One damaged unit, with where it was and which check failed.
struct Damage {
  std::uint64_t byte_offset = 0;  ///< where the damaged frame (or gap) starts
  std::uint64_t byte_length = 0;
  std::uint64_t frame_number = 0;  ///< index of the frame in decoding order
  std::uint64_t first_sample = 0;  ///< span filled with silence
  std::uint64_t samples = 0;
  std::string what;
  std::string message() const;
};

enum class Md5Check { match, mismatch, not_set, skipped };

struct DecodeReport {
  Backend backend = Backend::cpu;
  std::uint64_t frames = 0;
  /// The frame numbers this decode used (Damage::frame_number runs over them): the frames
  /// plus the damaged frames, in decoding order; a damaged span whose header did not decode
  /// takes none. Joining decodes of consecutive pieces of a stream, a piece's numbers start at
  /// the sum of the earlier pieces' frames_numbered.
  std::uint64_t frames_numbered = 0;
  std::vector<Damage> damage;
  Md5Check md5 = Md5Check::skipped;
  std::string md5_expected, md5_computed;  ///< hex, when known
  std::vector<std::string> warnings;
  bool ok() const { return damage.empty() && md5 != Md5Check::mismatch; }
};

struct DecodeOptions {
  Backend backend = Backend::automatic;
  SampleFormat format = SampleFormat::raw32;
  Layout layout = Layout::interleaved;
  bool verify_md5 = true;              ///< only possible when the sample format is lossless
  bool stop_on_damage = false;         ///< throw at the first damaged frame instead of going on
  std::optional<StreamParams> params;  ///< for streams without STREAMINFO
  int device = 0;                      ///< CUDA device index (when `devices` is empty)
  /// cuda: decode on several GPUs at once (parse_devices("all") gives every visible one). A
  /// file is cut by bytes into one part per device, each cut at a frame start the frame search
  /// verifies; the parts decode concurrently (one host thread, CudaDecoder and stream set per
  /// part) and their PCM is joined in order, sample-exact. decode_batch splits its files into
  /// contiguous shares of about equal bytes, one per device. An index that does not exist or
  /// is listed twice is an Error naming it. Empty: `device` alone. For decode, decode_batch and
  /// the ranges; a CudaDecoder stays on its own device.
  std::vector<int> devices;
  /// With `devices`: the number of parts (or batch shares), 0 for one per device; part k runs on
  /// devices[k % devices.size()]. More parts than devices put several concurrent decodes on a
  /// device, which is how one GPU runs (and tests) the multi-device path.
  std::size_t parts = 0;
  /// Refuse streams whose output would be larger (0: no limit). A few bytes of CONSTANT
  /// frames can legally describe hours of audio; services decoding untrusted files set this.
  std::uint64_t max_output_bytes = 0;
  /// cuda: decode through at most about this many bytes of device memory (0: as much as the
  /// file needs, all at once). The frames are found on the host, then go through the GPU in
  /// chunks on two streams, copies overlapping decoding: for files larger than device memory,
  /// or a GPU shared with other work. A chunk holds at least one frame, whatever the budget.
  std::uint64_t device_memory_budget = 0;
};

/// A byte vector whose resize() leaves new bytes uninitialised: outputs are gigabytes, and the
/// decoder writes every byte itself (in parallel, so pages are first touched by many cores).
template <typename T>
struct UninitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = UninitAllocator<U>;
  };
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0)
      ::new (static_cast<void*>(p)) U;
    else
      ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using ByteBuffer = std::vector<std::uint8_t, UninitAllocator<std::uint8_t>>;

/// Decoded PCM in host memory.
struct Pcm {
  SampleFormat format = SampleFormat::raw32;
  Layout layout = Layout::interleaved;
  std::uint32_t sample_rate = 0, channels = 0, bits_per_sample = 0;
  std::uint64_t samples = 0;  ///< per channel
  ByteBuffer bytes;
  template <typename T>
  const T* samples_as() const {
    return reinterpret_cast<const T*>(bytes.data());
  }
};

struct Decoded {
  Stream stream;
  Pcm pcm;
  DecodeReport report;
};

/// A device list as the CLI takes it: "all" (every visible CUDA device) or indices separated
/// by commas ("0,2"). Throws Error naming an index that is malformed, does not exist or is
/// listed twice, and when no device is visible.
std::vector<int> parse_devices(std::string_view spec);

/// Decodes a whole FLAC file held in memory.
///
/// On the cuda backend the free functions (decode, decode_batch, decode_files, the ranges, the
/// parts of a multi-device decode) lease their decoders from a pool the library keeps per device
/// across calls (streams, device buffers grown to the largest decode, pinned staging), so a
/// loader calling once per clip pays no set-up. set_gpu_pool_budget bounds what the pool keeps;
/// release_gpu_memory() frees it.
Decoded decode(std::span<const std::uint8_t> file, const DecodeOptions& options = {});
/// decode() into memory the caller owns, when `out` is exactly the size of the decoded PCM
/// (samples x channels x bytes_per_sample; STREAMINFO's total_samples for an intact file): the
/// result's pcm then has its shape but no bytes, else the PCM comes back in pcm.bytes and `out`
/// holds nothing to rely on. On the GPU the PCM lands there directly (with `devices`, each part
/// in its place), and pinned `file` and `out` are copied by DMA with no staging: the way to
/// PCIe speed for a loader that keeps its buffers (see CudaDecoder::decode_into).
Decoded decode_into(std::span<const std::uint8_t> file, std::span<std::uint8_t> out,
                    const DecodeOptions& options = {});
/// Reads and decodes a file; errors name the path.
Decoded decode_file(const std::string& path, const DecodeOptions& options = {});

/// One file of a batch: its decode, or the error that stopped it (the batch goes on).
struct BatchResult {
  Decoded decoded;    ///< meaningful when error is empty
  std::string error;  ///< why the file could not be decoded at all
  bool ok() const { return error.empty() && decoded.report.ok(); }
};

/// Decodes many files held in memory; result i belongs to files[i]. On the GPU the files of one
/// channel count and bit depth are packed into shared launches (interleaved output), so a
/// batch of short clips runs near the speed of one long file; on the CPU (`cpu-parallel`)
/// small files are decoded one per core. A file that fails does not stop the others;
/// `stop_on_damage` makes a damaged file an error.
std::vector<BatchResult> decode_batch(std::span<const std::span<const std::uint8_t>> files,
                                      const DecodeOptions& options = {});
/// decode_batch into memory the caller owns, as decode_into for each file: file i's PCM lands in
/// outs[i] when that is exactly its size (its result's pcm then has the shape and no bytes),
/// else it comes back in pcm.bytes. On the GPU, outputs in pinned memory are written by DMA,
/// pageable ones through staging; a loader that keeps its buffers pays no page faults.
/// outs.size() must equal files.size().
std::vector<BatchResult> decode_batch_into(std::span<const std::span<const std::uint8_t>> files,
                                           std::span<const std::span<std::uint8_t>> outs,
                                           const DecodeOptions& options = {});

/// Receives each file of decode_files: its index in `paths` and its result (which the sink may
/// move from).
using FileSink = std::function<void(std::size_t index, BatchResult& result)>;
/// decode_files' batch size when none is given.
inline constexpr std::uint64_t kDefaultBatchBytes = std::uint64_t{512} << 20;

/// Decodes files named by path, reading them in batches of about `batch_bytes` of input (0:
/// kDefaultBatchBytes), each batch decoded as by decode_batch, and hands each file's result to
/// `on_file` in order, so that memory holds one batch. A file that cannot be read or decoded is a
/// result with an error; the others go on.
void decode_files(std::span<const std::string> paths, const DecodeOptions& options,
                  const FileSink& on_file, std::uint64_t batch_bytes = 0);

/// Samples [first, first + count), per channel.
struct SampleRange {
  std::uint64_t first = 0, count = 0;
};

/// Decodes only the frames around a range of a long file and cuts the range out, as a training
/// loader wants for random clips: the frames are found through the SEEKTABLE when there is one,
/// else by a frame search over the bytes where the range should lie. Needs STREAMINFO with the
/// total sample count. The range is clamped to the stream's end; report.md5 is `skipped` (the
/// MD5 covers the whole stream); damage offsets and samples are the file's.
Decoded decode_range(std::span<const std::uint8_t> file, SampleRange range,
                     const DecodeOptions& options = {});
/// Many ranges of one file; their frames are decoded like a batch (decode_batch: shared
/// launches on the GPU, one range per core on the CPU).
std::vector<BatchResult> decode_ranges(std::span<const std::uint8_t> file,
                                       std::span<const SampleRange> ranges,
                                       const DecodeOptions& options = {});
/// A range of one file among many.
struct FileRange {
  std::span<const std::uint8_t> file;
  SampleRange range;
};
/// Ranges of many files (a training batch of clips from a corpus) decoded together: the
/// windows of all of them share launches on the GPU as one batch (one per stream shape).
/// Result i belongs to ranges[i]; a file that cannot be parsed fails its ranges alone.
std::vector<BatchResult> decode_ranges(std::span<const FileRange> ranges,
                                       const DecodeOptions& options = {});

/// What decode_clips found, beside the batch it wrote.
struct ClipsReport {
  /// The batch's: the first clip's stream's (channels 1 with mono).
  std::uint32_t sample_rate = 0, channels = 0, bits_per_sample = 0;
  Backend backend = Backend::cpu;
  std::uint64_t frames = 0;    ///< frames decoded
  std::vector<Damage> damage;  ///< every clip's, in clip order, positions in its file
  /// Per clip: empty, or why it could not be decoded (its place in the batch then holds
  /// anything).
  std::vector<std::string> errors;
};

/// A training batch of clips, every clip `length` = clips[i].range.count samples (the same for
/// all), decoded into `out`: clip i from samples [range.first, range.first + length) of
/// clips[i].file, zeros past its stream's end, in options.format (float32 scaled by
/// 2^-(bits-1), or full-scale integers), planar layout giving (clips, channels, length),
/// interleaved (clips, length, channels). `mono` averages each clip's channels into one (clips
/// of any channel count may then share the batch); else every clip's stream must have the
/// first's channel count, and always its sample rate (UsageError). `out` holds clips *
/// length * channels values: host memory on the CPU backends, device memory of
/// options.device on cuda, where each clip's window (found on the host, as decode_ranges finds
/// it) goes up once and the frames of all windows decode in shared launches straight into the
/// batch; a window that fails its own index (damage) takes decode_ranges' general way, with the
/// same samples as every backend. The cuda batch is complete when the call returns.
/// `after` (cuda): CUDA events (cudaEvent_t of options.device) recorded after other work that
/// still uses `out`, e.g. a consumer's kernels reading memory a caller hands out again for the
/// next batch: the decode's stream waits for them before it first writes `out` (its uploads and
/// frame decoding do not), and nothing waits for the device. Unused on the CPU backends.
ClipsReport decode_clips(std::span<const FileRange> clips, void* out, bool mono,
                         const DecodeOptions& options = {}, std::span<void* const> after = {});

/// Frees the GPU decoders the free functions keep between calls (the device memory and pinned
/// host memory they hold). Decoders in use finish first and are freed when they return.
void release_gpu_memory();
/// The device memory the idle decoders of the pool may hold per device (default: a quarter of
/// the device's memory). A decoder given back over it is freed; one in use is never cut short.
void set_gpu_pool_budget(std::uint64_t bytes_per_device);

/// Decodes a FLAC stream of any length fed in pieces, in memory that does not grow with its
/// length: PCM is handed to `on_pcm` in order as it is decoded, and nothing of it is kept.
///
///   sigpu::flac::StreamDecoder dec({.backend = sigpu::Backend::cpu_parallel},
///                                  [&](const sigpu::flac::Pcm& block) { write(block); });
///   while (auto n = read(buf)) dec.push({buf, n});
///   sigpu::flac::Decoded d = dec.finish();   // d.report as decode() gives it; d.pcm has no bytes
///
/// The bytes are decoded in windows of about `window_bytes` (cut at frames the frame search
/// verifies, as DecodeOptions::devices cuts a file), each by the chosen backend; memory is about
/// the metadata plus the window plus its PCM. The samples handed on, joined, are exactly what
/// decode() of the whole stream gives (damaged frames silenced alike), and the report is the same
/// (frame numbers, samples and byte offsets are the stream's; the MD5 is computed as the blocks
/// pass). Each block has the options' format and layout (planar: planar within the block).
/// `on_pcm` runs on a thread of the decoder's own, one block at a time and in order, while the
/// next window decodes; push() and finish() rethrow what it throws.
/// Errors: InputError for empty input, data that is neither FLAC nor starts at a frame, metadata
/// cut short, or audio bytes in which no frame decodes; Error with the position for
/// stop_on_damage and max_output_bytes. Not thread-safe: one caller pushes and finishes.
class StreamDecoder {
 public:
  using PcmSink = std::function<void(const Pcm& block)>;
  /// The window used when `window_bytes` is 0: larger on the GPU, where a launch has more fixed
  /// cost to spread.
  static constexpr std::size_t kDefaultWindow = std::size_t(16) << 20;
  static constexpr std::size_t kDefaultWindowCuda = std::size_t(64) << 20;

  StreamDecoder(const DecodeOptions& options, PcmSink on_pcm, std::size_t window_bytes = 0);
  ~StreamDecoder();
  StreamDecoder(StreamDecoder&&) noexcept;
  StreamDecoder& operator=(StreamDecoder&&) noexcept;

  /// The next bytes of the stream, split anywhere; decodes (and calls on_pcm) once a window of
  /// frames is pending.
  void push(std::span<const std::uint8_t> bytes);
  /// Decodes what is left and returns the stream's metadata and report; pcm has the shape
  /// (format, channels, total samples) but no bytes. The decoder takes no more bytes after it.
  Decoded finish();

  /// Stream bytes pushed so far.
  std::uint64_t bytes_pushed() const;
  /// The most input bytes held at once (the window plus the metadata and an unfinished tail).
  std::size_t peak_buffered_bytes() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// Decoded PCM in device memory, for pipelines that want it on the GPU. Freed with the object.
struct DevicePcm {
  SampleFormat format = SampleFormat::raw32;
  Layout layout = Layout::interleaved;
  std::uint32_t sample_rate = 0, channels = 0, bits_per_sample = 0;
  std::uint64_t samples = 0;
  void* data = nullptr;  ///< device pointer
  std::size_t size_bytes = 0;
  std::shared_ptr<void> owner;
};

/// A GPU decoder that keeps its stream and buffers between calls. Throws Error when the
/// build has no CUDA or no device is present.
class CudaDecoder {
 public:
  explicit CudaDecoder(int device = 0);
  ~CudaDecoder();
  CudaDecoder(CudaDecoder&&) noexcept;
  CudaDecoder& operator=(CudaDecoder&&) noexcept;

  /// Host bytes in, host PCM out (copies both ways included).
  Decoded decode(std::span<const std::uint8_t> file, const DecodeOptions& options = {});

  /// decode() into memory the caller owns, when `out` is exactly the size of the decoded PCM
  /// (samples x channels x bytes_per_sample; STREAMINFO's total_samples for an intact file):
  /// the result's pcm then has its shape but no bytes. Otherwise the PCM comes back in
  /// pcm.bytes, as from decode(), and `out` holds nothing to rely on (a file decoded in parts may
  /// have written some of them there before its length turned out other than STREAMINFO's). When
  /// `file` or `out` is pinned memory (cudaMallocHost, cudaHostRegister) it is copied by DMA
  /// directly instead of through the decoder's pinned staging: the way to PCIe speed for a caller
  /// that keeps pinned buffers. When both are, a large file is decoded as a few parts on streams of
  /// its own (cut at verified frame starts, as for several GPUs) so that one part's copies overlap
  /// another's decoding. With a device_memory_budget `out` is not used.
  Decoded decode_into(std::span<const std::uint8_t> file, std::span<std::uint8_t> out,
                      const DecodeOptions& options = {});

  /// Many files, packed into shared launches (see sigpu::flac::decode_batch).
  std::vector<BatchResult> decode_batch(std::span<const std::span<const std::uint8_t>> files,
                                        const DecodeOptions& options = {});

  /// Compressed bytes already in device memory (4-byte aligned), PCM left in device memory.
  /// `stream` must describe the same file (parse_stream on a host copy of its metadata). With
  /// options.verify_md5 the STREAMINFO MD5 is checked on a copy of the PCM brought to the host
  /// (the hash is serial: set verify_md5 = false where that costs too much).
  DevicePcm decode_device(const std::uint8_t* d_file, std::size_t size, const Stream& stream,
                          const DecodeOptions& options, DecodeReport& report);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace sigpu::flac
