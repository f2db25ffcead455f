// WAV layout follows Microsoft's WAVEFORMATEXTENSIBLE notes and EBU Tech 3306 (RF64). Sizes
// that are only known at the end are patched in finalize(); when the final size is unknown
// up front, a JUNK chunk of ds64 size keeps room so the file can still become RF64.
#include "flac/wav_writer.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <type_traits>
#include <utility>

namespace sigpu::flac {
namespace {

constexpr std::size_t kBufferBytes = 1 << 20;
constexpr std::uint32_t kDs64BodyBytes = 28;  // riff size, data size, sample count, table length
constexpr std::uint32_t kNoSize = 0xFFFFFFFFu;

void put_le(std::vector<std::uint8_t>& v, std::uint64_t x, unsigned bytes) {
  for (unsigned i = 0; i < bytes; ++i) v.push_back(static_cast<std::uint8_t>(x >> (8 * i)));
}
// Byte by byte: GCC 12 misreads a 4-byte range insert into a growing vector as an overflow.
void put_id(std::vector<std::uint8_t>& v, const char* id) {
  for (int i = 0; i < 4; ++i) v.push_back(static_cast<std::uint8_t>(id[i]));
}

bool needs_extensible(const PcmShape& s, const SampleEncoding& e) {
  if (s.channels > 2) return true;
  // Plain PCM cannot say "20 valid bits in 24", and readers take >16-bit plain PCM badly.
  return !e.is_float && (e.container_bytes > 2 || e.valid_bits != 8 * e.container_bytes);
}

struct HeaderValues {
  bool rf64 = false;
  std::uint64_t riff_size = 0, data_bytes = 0, samples = 0;
};

std::vector<std::uint8_t> wav_header(const PcmShape& s, const SampleEncoding& e, bool ds64_slot,
                                     const HeaderValues& h) {
  std::vector<std::uint8_t> v;
  put_id(v, h.rf64 ? "RF64" : "RIFF");
  put_le(v, h.rf64 ? kNoSize : h.riff_size, 4);
  put_id(v, "WAVE");
  if (ds64_slot) {
    put_id(v, h.rf64 ? "ds64" : "JUNK");
    put_le(v, kDs64BodyBytes, 4);
    put_le(v, h.rf64 ? h.riff_size : 0, 8);
    put_le(v, h.rf64 ? h.data_bytes : 0, 8);
    put_le(v, h.rf64 ? h.samples : 0, 8);
    put_le(v, 0, 4);  // no table: only the data chunk is large
  }
  const bool ext = needs_extensible(s, e);
  const std::uint32_t block_align = s.channels * e.container_bytes;
  put_id(v, "fmt ");
  put_le(v, ext ? 40 : e.is_float ? 18 : 16, 4);
  put_le(v, ext ? 0xFFFE : e.is_float ? 3 : 1, 2);
  put_le(v, s.channels, 2);
  put_le(v, s.sample_rate, 4);
  put_le(v, std::uint64_t{s.sample_rate} * block_align, 4);
  put_le(v, block_align, 2);
  put_le(v, 8 * e.container_bytes, 2);
  if (ext) {
    put_le(v, 22, 2);
    put_le(v, e.valid_bits, 2);
    put_le(v, default_channel_mask(s.channels), 4);
    // KSDATAFORMAT_SUBTYPE_PCM / _IEEE_FLOAT: {0000000X-0000-0010-8000-00AA00389B71}
    put_le(v, e.is_float ? 3 : 1, 4);
    static constexpr std::uint8_t kGuidTail[] = {0x00, 0x00, 0x10, 0x00, 0x80, 0x00,
                                                 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71};
    v.insert(v.end(), std::begin(kGuidTail), std::end(kGuidTail));
  } else if (e.is_float) {
    put_le(v, 0, 2);  // cbSize: non-PCM formats must carry it
  }
  if (e.is_float) {  // fact is required for every non-PCM format
    put_id(v, "fact");
    put_le(v, 4, 4);
    put_le(v, h.samples > kNoSize ? kNoSize : h.samples, 4);
  }
  put_id(v, "data");
  put_le(v, h.rf64 ? kNoSize : h.data_bytes, 4);
  return v;
}

/// Copies `frames` frames into `out`, interleaved, each sample widened to 32 bits, shifted left
/// (MSB alignment), offset (unsigned 8-bit) and stored as its B low bytes, little-endian.
template <typename T, unsigned B>
void convert(const T* src, std::size_t frame_stride, std::size_t chan_stride,
             std::uint32_t channels, std::uint64_t frames, unsigned shift, std::uint32_t offset,
             std::uint8_t* out) {
  const bool plain_copy = std::endian::native == std::endian::little && sizeof(T) == B &&
                          shift == 0 && offset == 0 && chan_stride == 1 && frame_stride == channels;
  if (plain_copy) {
    std::memcpy(out, src, frames * channels * B);
    return;
  }
  for (std::uint64_t f = 0; f < frames; ++f) {
    const T* frame = src + f * frame_stride;
    for (std::uint32_t c = 0; c < channels; ++c) {
      const T x = frame[c * chan_stride];
      std::uint32_t w;
      if constexpr (std::is_floating_point_v<T>) {
        std::memcpy(&w, &x, 4);
      } else {
        w = static_cast<std::uint32_t>(static_cast<std::int32_t>(x));
      }
      w = (w << shift) + offset;
      out[0] = static_cast<std::uint8_t>(w);
      if constexpr (B > 1) out[1] = static_cast<std::uint8_t>(w >> 8);
      if constexpr (B > 2) out[2] = static_cast<std::uint8_t>(w >> 16);
      if constexpr (B > 3) out[3] = static_cast<std::uint8_t>(w >> 24);
      out += B;
    }
  }
}

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

}  // namespace

PcmShape shape_of(const Pcm& pcm) {
  return {pcm.format, pcm.sample_rate, pcm.channels, pcm.bits_per_sample};
}

SampleEncoding encoding_of(const PcmShape& s) {
  const std::uint32_t bps = s.bits_per_sample;
  switch (s.format) {
    case SampleFormat::raw32:
      if (bps < 1 || bps > 32) throw Error("cannot store " + std::to_string(bps) + "-bit samples");
      return {(bps + 7) / 8, bps, false};
    case SampleFormat::s16:
      return {2, bps == 0 ? 16 : std::min(bps, 16u), false};
    case SampleFormat::s32:
      return {4, bps == 0 ? 32 : std::min(bps, 32u), false};
    case SampleFormat::f32:
      return {4, 32, true};
  }
  throw Error("unknown sample format");
}

std::uint32_t default_channel_mask(std::uint32_t channels) {
  enum : std::uint32_t {
    FL = 0x1,
    FR = 0x2,
    FC = 0x4,
    LFE = 0x8,
    BL = 0x10,
    BR = 0x20,
    BC = 0x100,
    SL = 0x200,
    SR = 0x400
  };
  switch (channels) {
    case 1:
      return FC;
    case 2:
      return FL | FR;
    case 3:
      return FL | FR | FC;
    case 4:
      return FL | FR | BL | BR;
    case 5:
      return FL | FR | FC | BL | BR;
    case 6:
      return FL | FR | FC | LFE | BL | BR;
    case 7:
      return FL | FR | FC | LFE | BC | SL | SR;
    case 8:
      return FL | FR | FC | LFE | BL | BR | SL | SR;
    default:
      return 0;  // no defined order: "unassigned"
  }
}

PcmFileWriter::PcmFileWriter(std::string path, const PcmShape& shape,
                             const PcmWriterOptions& options)
    : path_(std::move(path)), shape_(shape), enc_(encoding_of(shape)), opt_(options) {
  if (shape.channels == 0 || shape.sample_rate == 0)
    throw Error("cannot write '" + path_ + "': no channels or no sample rate");
  file_ = std::fopen(path_.c_str(), "wb");
  if (!file_) fail("create");
  try {
    if (opt_.format == FileFormat::wav) {
      const std::uint64_t data = opt_.expected_samples * shape_.channels * enc_.container_bytes;
      const auto plain = wav_header(shape_, enc_, false, {});
      ds64_slot_ =
          opt_.expected_samples == 0 || plain.size() - 8 + data + (data & 1) > opt_.max_riff_size;
      header_bytes_ = std::uint32_t(wav_header(shape_, enc_, ds64_slot_, {}).size());
      // With the length known the header is final now, so a pipe (no seeking) works too.
      written_header_ = header_for(opt_.expected_samples);
      put(written_header_.data(), written_header_.size());
    } else if (opt_.format == FileFormat::npy) {
      if (enc_.container_bytes == 3) enc_.container_bytes = 4;  // NumPy has no 3-byte integer
      written_header_ = npy_header(opt_.expected_samples);
      put(written_header_.data(), written_header_.size());
    }
    buf_.resize(kBufferBytes);
  } catch (...) {
    std::fclose(file_);
    file_ = nullptr;
    if (is_regular_file(path_)) std::remove(path_.c_str());
    throw;
  }
}

PcmFileWriter::~PcmFileWriter() {
  if (finalized_) return;
  if (file_) std::fclose(file_);
  // Only files we made: never unlink a device or pipe the caller pointed us at.
  if (is_regular_file(path_)) std::remove(path_.c_str());
}

void PcmFileWriter::fail(const char* action) const {
  throw Error(std::string("cannot ") + action + " '" + path_ + "': " + std::strerror(errno));
}

void PcmFileWriter::put(const void* p, std::size_t n) {
  if (n && std::fwrite(p, 1, n, file_) != n) fail("write");
}

std::vector<std::uint8_t> PcmFileWriter::header_for(std::uint64_t samples) const {
  HeaderValues h;
  h.samples = samples;
  h.data_bytes = samples * shape_.channels * enc_.container_bytes;
  h.riff_size = header_bytes_ - 8 + h.data_bytes + (h.data_bytes & 1);
  h.rf64 = h.riff_size > opt_.max_riff_size;
  if (h.rf64 && !ds64_slot_)
    throw Error("cannot finish '" + path_ + "': " + std::to_string(samples) +
                " samples need RF64, but fewer were announced when the file was opened");
  return wav_header(shape_, enc_, ds64_slot_, h);
}

std::vector<std::uint8_t> PcmFileWriter::npy_header(std::uint64_t samples) const {
  constexpr std::size_t kTotal = 128;
  std::string descr = enc_.is_float               ? "<f4"
                      : enc_.container_bytes == 1 ? "|i1"
                                                  : "<i" + std::to_string(enc_.container_bytes);
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" +
                     std::to_string(samples) + ", " + std::to_string(shape_.channels) + "), }";
  dict.resize(kTotal - 10 - 1, ' ');
  dict += '\n';
  const std::string h = std::string("\x93NUMPY\x01\x00", 8) + char(dict.size() & 0xFF) +
                        char(dict.size() >> 8) + dict;
  return {h.begin(), h.end()};
}

void PcmFileWriter::append(const Pcm& pcm, std::uint64_t first, std::uint64_t count) {
  if (finalized_ || !file_) throw Error("cannot append to '" + path_ + "': already finished");
  if (pcm.format != shape_.format || pcm.channels != shape_.channels)
    throw Error("cannot append to '" + path_ + "': sample format or channel count changed");
  const std::size_t in_bytes = bytes_per_sample(pcm.format);
  if (first > pcm.samples || count > pcm.samples - first ||
      pcm.bytes.size() < pcm.samples * pcm.channels * in_bytes)
    throw Error("cannot append to '" + path_ + "': samples out of range");

  const std::uint32_t ch = shape_.channels;
  const unsigned B = enc_.container_bytes;
  const bool wav = opt_.format == FileFormat::wav;
  // WAV aligns samples to the top of the container; raw keeps the coded integer as it is.
  const unsigned shift = (wav && pcm.format == SampleFormat::raw32) ? 8 * B - enc_.valid_bits : 0;
  const std::uint32_t offset = (wav && B == 1) ? 128 : 0;
  const bool planar = pcm.layout == Layout::planar;
  const std::size_t frame_stride = planar ? 1 : ch;
  const std::size_t chan_stride = planar ? pcm.samples : 1;
  const std::uint64_t chunk = std::max<std::uint64_t>(1, buf_.size() / (std::uint64_t{ch} * B));

  for (std::uint64_t done = 0; done < count;) {
    const std::uint64_t n = std::min(chunk, count - done);
    const std::uint64_t at = (first + done) * frame_stride;
    std::uint8_t* out = buf_.data();
    switch (pcm.format) {
      case SampleFormat::raw32: {
        const auto* src = pcm.samples_as<std::int32_t>() + at;
        switch (B) {
          case 1:
            convert<std::int32_t, 1>(src, frame_stride, chan_stride, ch, n, shift, offset, out);
            break;
          case 2:
            convert<std::int32_t, 2>(src, frame_stride, chan_stride, ch, n, shift, offset, out);
            break;
          case 3:
            convert<std::int32_t, 3>(src, frame_stride, chan_stride, ch, n, shift, offset, out);
            break;
          default:
            convert<std::int32_t, 4>(src, frame_stride, chan_stride, ch, n, shift, offset, out);
            break;
        }
        break;
      }
      case SampleFormat::s16:
        convert<std::int16_t, 2>(pcm.samples_as<std::int16_t>() + at, frame_stride, chan_stride, ch,
                                 n, 0, 0, out);
        break;
      case SampleFormat::s32:
        convert<std::int32_t, 4>(pcm.samples_as<std::int32_t>() + at, frame_stride, chan_stride, ch,
                                 n, 0, 0, out);
        break;
      case SampleFormat::f32:
        convert<float, 4>(pcm.samples_as<float>() + at, frame_stride, chan_stride, ch, n, 0, 0,
                          out);
        break;
    }
    const std::size_t bytes = n * ch * B;
    put(buf_.data(), bytes);
    data_bytes_ += bytes;
    samples_ += n;
    done += n;
  }
}

void PcmFileWriter::finalize() {
  if (finalized_ || !file_) throw Error("cannot finish '" + path_ + "': already finished");
  if (opt_.format == FileFormat::wav) {
    const std::uint8_t pad = 0;
    if (data_bytes_ & 1) put(&pad, 1);  // chunks are word-aligned
    const auto header = header_for(samples_);
    if (header != written_header_) {
      if (std::fseek(file_, 0, SEEK_SET) != 0) fail("seek in");
      put(header.data(), header.size());
    }
  } else if (opt_.format == FileFormat::npy) {
    const auto header = npy_header(samples_);
    if (header != written_header_) {
      if (std::fseek(file_, 0, SEEK_SET) != 0) fail("seek in");
      put(header.data(), header.size());
    }
  }
  std::FILE* f = std::exchange(file_, nullptr);
  if (std::fclose(f) != 0) fail("write");
  finalized_ = true;
}

void write_pcm_file(const std::string& path, const Pcm& pcm, FileFormat format) {
  PcmFileWriter w(path, shape_of(pcm), {.format = format, .expected_samples = pcm.samples});
  w.append(pcm);
  w.finalize();
}

}  // namespace sigpu::flac
