// WAV layout follows Microsoft's WAVEFORMATEXTENSIBLE notes and EBU Tech 3306 (RF64). Sizes
// that are only known at the end are patched in finalize(); when the final size is unknown
// up front, a JUNK chunk of ds64 size keeps room so the file can still become RF64.
#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <type_traits>
#include <utility>

#include <sigpu/io.hpp>

namespace sigpu::io {
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

/// How one sample is stored in the file.
struct SampleEncoding {
  std::uint32_t container_bytes = 0;  ///< 1..4
  std::uint32_t valid_bits = 0;       ///< significant bits, MSB-aligned in WAV
  bool is_float = false;
};

std::uint64_t g_max_riff_size = 0xFFFFFFFFu;

/// raw32 keeps the coded width (rounded up to bytes); s16/s32/f32 keep their own width.
SampleEncoding encoding_of(const PcmView& s) {
  const std::uint32_t bps = s.bits_per_sample;
  switch (s.type) {
    case SampleType::raw32:
      if (bps < 1 || bps > 32)
        throw UsageError("cannot store " + std::to_string(bps) + "-bit samples");
      return {(bps + 7) / 8, bps, false};
    case SampleType::s16:
      return {2, bps == 0 ? 16 : std::min(bps, 16u), false};
    case SampleType::s32:
      return {4, bps == 0 ? 32 : std::min(bps, 32u), false};
    case SampleType::f32:
      return {4, 32, true};
  }
  throw UsageError("unknown sample type");
}

/// The WAVE_FORMAT_EXTENSIBLE speaker mask for the channel orders FLAC and WAV share
/// (RFC 9639 9.1.3).
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

bool needs_extensible(const PcmView& s, const SampleEncoding& e) {
  if (s.channels > 2) return true;
  // Plain PCM cannot say "20 valid bits in 24", and readers take >16-bit plain PCM badly.
  return !e.is_float && (e.container_bytes > 2 || e.valid_bits != 8 * e.container_bytes);
}

struct HeaderValues {
  bool rf64 = false;
  std::uint64_t riff_size = 0, data_bytes = 0, samples = 0;
};

std::vector<std::uint8_t> wav_header(const PcmView& s, const SampleEncoding& e, bool ds64_slot,
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

}  // namespace

struct PcmWriter::Impl {
  Output& out;
  PcmFormat format;
  PcmView shape;
  SampleEncoding enc;
  std::uint64_t expected = 0, data_bytes = 0;
  std::uint64_t max_riff_size = g_max_riff_size;
  bool ds64_slot = false;  ///< the header has 36 bytes for a ds64 (JUNK until needed)
  bool finished = false;
  std::uint32_t header_bytes = 0;
  std::vector<std::uint8_t> written_header;  ///< as written at open; rewritten when different
  std::vector<std::uint8_t> buf;

  /// The WAV header for `samples` per channel; throws when they need RF64 but the header
  /// kept no room for a ds64.
  std::vector<std::uint8_t> header_for(std::uint64_t samples) const {
    HeaderValues h;
    h.samples = samples;
    h.data_bytes = samples * shape.channels * enc.container_bytes;
    h.riff_size = header_bytes - 8 + h.data_bytes + (h.data_bytes & 1);
    h.rf64 = h.riff_size > max_riff_size;
    if (h.rf64 && !ds64_slot)
      throw Error("cannot finish '" + out.name() + "': " + std::to_string(samples) +
                  " samples need RF64, but fewer were announced when the file was opened");
    return wav_header(shape, enc, ds64_slot, h);
  }

  /// The .npy header: a fixed 128 bytes, so that finish() can rewrite it in place.
  std::vector<std::uint8_t> npy_header(std::uint64_t samples) const {
    constexpr std::size_t kTotal = 128;
    std::string descr = enc.is_float               ? "<f4"
                        : enc.container_bytes == 1 ? "|i1"
                                                   : "<i" + std::to_string(enc.container_bytes);
    std::string dict = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" +
                       std::to_string(samples) + ", " + std::to_string(shape.channels) + "), }";
    dict.resize(kTotal - 10 - 1, ' ');
    dict += '\n';
    const std::string h = std::string("\x93NUMPY\x01\x00", 8) + char(dict.size() & 0xFF) +
                          char(dict.size() >> 8) + dict;
    return {h.begin(), h.end()};
  }

  /// Sizes for a stream whose length nobody knows: what readers of piped WAV accept.
  std::vector<std::uint8_t> unknown_length_header() const {
    HeaderValues h;
    h.riff_size = kNoSize;
    h.data_bytes = kNoSize;
    return wav_header(shape, enc, ds64_slot, h);
  }
};

PcmWriter::PcmWriter(Output& out, PcmFormat format, const PcmView& shape,
                     std::uint64_t expected_samples)
    : impl_(new Impl{out, format, shape, encoding_of(shape)}) {
  Impl& m = *impl_;
  if (shape.channels == 0 || shape.sample_rate == 0)
    throw UsageError("cannot write '" + out.name() + "': no channels or no sample rate");
  m.shape.data = nullptr;
  m.expected = expected_samples;
  if (format == PcmFormat::wav) {
    const std::uint64_t data = expected_samples * shape.channels * m.enc.container_bytes;
    const auto plain = wav_header(m.shape, m.enc, false, {});
    m.ds64_slot = expected_samples == 0 || plain.size() - 8 + data + (data & 1) > m.max_riff_size;
    m.header_bytes = std::uint32_t(wav_header(m.shape, m.enc, m.ds64_slot, {}).size());
    // With the length known the header is final now, so a pipe (no seeking) works too.
    m.written_header = expected_samples || out.seekable() ? m.header_for(expected_samples)
                                                          : m.unknown_length_header();
    out.write(m.written_header);
  } else if (format == PcmFormat::npy) {
    if (!expected_samples && !out.seekable())
      throw UsageError("a .npy on " + out.name() +
                       " needs the sample count up front, and this stream does not give it");
    if (m.enc.container_bytes == 3) m.enc.container_bytes = 4;  // NumPy has no 3-byte integer
    m.written_header = m.npy_header(expected_samples);
    out.write(m.written_header);
  }
  m.buf.resize(kBufferBytes);
}

PcmWriter::~PcmWriter() = default;

void PcmWriter::set_max_riff_size_for_testing(std::uint64_t bytes) {
  g_max_riff_size = bytes;
}

void PcmWriter::append(const PcmView& pcm, std::uint64_t first, std::uint64_t count) {
  Impl& m = *impl_;
  if (m.finished) throw Error("cannot append to '" + m.out.name() + "': already finished");
  if (pcm.type != m.shape.type || pcm.channels != m.shape.channels)
    throw Error("cannot append to '" + m.out.name() + "': sample type or channel count changed");
  if (first > pcm.samples || count > pcm.samples - first || (count && !pcm.data))
    throw Error("cannot append to '" + m.out.name() + "': samples out of range");

  const std::uint32_t ch = m.shape.channels;
  const unsigned B = m.enc.container_bytes;
  const bool wav = m.format == PcmFormat::wav;
  // WAV aligns samples to the top of the container; raw keeps the coded integer as it is.
  const unsigned shift = (wav && pcm.type == SampleType::raw32) ? 8 * B - m.enc.valid_bits : 0;
  const std::uint32_t offset = (wav && B == 1) ? 128 : 0;
  const std::size_t frame_stride = pcm.planar ? 1 : ch;
  const std::size_t chan_stride = pcm.planar ? pcm.samples : 1;
  const std::uint64_t chunk = std::max<std::uint64_t>(1, m.buf.size() / (std::uint64_t{ch} * B));

  for (std::uint64_t done = 0; done < count;) {
    const std::uint64_t n = std::min(chunk, count - done);
    const std::uint64_t at = (first + done) * frame_stride;
    std::uint8_t* out = m.buf.data();
    switch (pcm.type) {
      case SampleType::raw32: {
        const auto* src = static_cast<const std::int32_t*>(pcm.data) + at;
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
      case SampleType::s16:
        convert<std::int16_t, 2>(static_cast<const std::int16_t*>(pcm.data) + at, frame_stride,
                                 chan_stride, ch, n, 0, 0, out);
        break;
      case SampleType::s32:
        convert<std::int32_t, 4>(static_cast<const std::int32_t*>(pcm.data) + at, frame_stride,
                                 chan_stride, ch, n, 0, 0, out);
        break;
      case SampleType::f32:
        convert<float, 4>(static_cast<const float*>(pcm.data) + at, frame_stride, chan_stride, ch,
                          n, 0, 0, out);
        break;
    }
    const std::size_t bytes = n * ch * B;
    m.out.write({m.buf.data(), bytes});
    m.data_bytes += bytes;
    samples_ += n;
    done += n;
  }
}

void PcmWriter::finish() {
  Impl& m = *impl_;
  if (m.finished) throw Error("cannot finish '" + m.out.name() + "': already finished");
  if (m.format == PcmFormat::wav) {
    const std::uint8_t pad = 0;
    if (m.data_bytes & 1) m.out.write({&pad, 1});  // chunks are word-aligned
    const auto header = m.header_for(samples_);
    if (header != m.written_header) {
      if (!m.out.seekable()) {
        if (m.expected)
          throw Error("cannot finish '" + m.out.name() + "': " + std::to_string(samples_) +
                      " samples written where " + std::to_string(m.expected) +
                      " were announced, and it cannot seek to say so");
      } else {
        m.out.seek(0);
        m.out.write(header);
      }
    }
  } else if (m.format == PcmFormat::npy) {
    const auto header = m.npy_header(samples_);
    if (header != m.written_header) {
      if (!m.out.seekable())
        throw Error("cannot finish '" + m.out.name() + "': " + std::to_string(samples_) +
                    " samples written where " + std::to_string(m.expected) + " were announced");
      m.out.seek(0);
      m.out.write(header);
    }
  }
  m.out.commit();
  m.finished = true;
}

}  // namespace sigpu::io
