// Writes decoded PCM to WAV (RIFF, WAVE_FORMAT_EXTENSIBLE, RF64), raw or NumPy (.npy, an array
// of shape (samples, channels): np.load reads it) files, streaming:
// samples are converted block by block through a small buffer, so a decoded stream is never
// held twice in memory.
//
//   PcmFileWriter w("out.wav", shape_of(pcm), {.expected_samples = pcm.samples});
//   w.append(pcm);          // or append(pcm, first, count) in pieces
//   w.finalize();           // patches the sizes; without it the file is removed
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <sigpu/flac.hpp>

namespace sigpu::flac {

enum class FileFormat { wav, raw, npy };

/// What every block appended to one writer must share.
struct PcmShape {
  SampleFormat format = SampleFormat::raw32;
  std::uint32_t sample_rate = 0, channels = 0, bits_per_sample = 0;
};
PcmShape shape_of(const Pcm& pcm);

/// How one sample is stored in the file.
struct SampleEncoding {
  std::uint32_t container_bytes = 0;  ///< 1..4
  std::uint32_t valid_bits = 0;       ///< significant bits, MSB-aligned in WAV
  bool is_float = false;
};
/// raw32 keeps the coded width (rounded up to bytes); s16/s32/f32 keep their own width.
SampleEncoding encoding_of(const PcmShape& shape);

/// The WAVE_FORMAT_EXTENSIBLE speaker mask for FLAC's channel order (RFC 9639 9.1.3).
std::uint32_t default_channel_mask(std::uint32_t channels);

struct PcmWriterOptions {
  FileFormat format = FileFormat::wav;
  /// Samples per channel the caller will append, 0 when unknown. Known: the header is final
  /// from the start (RF64 only when needed), so the file may be a pipe. Unknown: a JUNK chunk
  /// keeps room for a ds64, and finalize() seeks back to fill in the sizes.
  std::uint64_t expected_samples = 0;
  /// Largest RIFF size a plain WAV may have; above it the file becomes RF64. Tests lower it.
  std::uint64_t max_riff_size = 0xFFFFFFFFu;
};

class PcmFileWriter {
 public:
  /// Creates (or truncates) `path`. Throws Error naming the path.
  PcmFileWriter(std::string path, const PcmShape& shape, const PcmWriterOptions& options = {});
  /// Removes the file when finalize() did not succeed, so a failed write leaves nothing that
  /// looks like a complete file.
  ~PcmFileWriter();
  PcmFileWriter(const PcmFileWriter&) = delete;
  PcmFileWriter& operator=(const PcmFileWriter&) = delete;

  /// Appends `count` samples per channel of `pcm` starting at sample `first`, in any layout.
  void append(const Pcm& pcm, std::uint64_t first, std::uint64_t count);
  void append(const Pcm& pcm) { append(pcm, 0, pcm.samples); }
  /// Writes the sizes into the header and closes the file.
  void finalize();

  std::uint64_t samples_written() const { return samples_; }
  std::uint64_t data_bytes() const { return data_bytes_; }
  const std::string& path() const { return path_; }

 private:
  /// The WAV header for `samples` per channel; throws when they need RF64 but the header
  /// kept no room for a ds64.
  std::vector<std::uint8_t> header_for(std::uint64_t samples) const;
  /// The .npy header (a fixed 128 bytes, so finalize() can rewrite it in place).
  std::vector<std::uint8_t> npy_header(std::uint64_t samples) const;
  void put(const void* p, std::size_t n);
  [[noreturn]] void fail(const char* action) const;

  std::string path_;
  PcmShape shape_;
  SampleEncoding enc_;
  PcmWriterOptions opt_;
  std::FILE* file_ = nullptr;
  bool finalized_ = false;
  bool ds64_slot_ = false;  ///< the header has 36 bytes for a ds64 (JUNK until needed)
  std::uint32_t header_bytes_ = 0;
  std::vector<std::uint8_t> written_header_;  ///< as written at open; rewritten when different
  std::uint64_t samples_ = 0, data_bytes_ = 0;
  std::vector<std::uint8_t> buf_;
};

/// Writes a whole Pcm in one call.
void write_pcm_file(const std::string& path, const Pcm& pcm, FileFormat format);

}  // namespace sigpu::flac
