// StreamDecoder: a stream fed in pieces, decoded in windows. The windows are the parts that
// decode_in_parts (several devices) decodes side by side, taken here one after another: the
// first holds the metadata and the stream's start, every later one starts at a frame whose
// CRC-16 link checks, just after a frame whose link to it checks. No damage touches a cut, so
// the windows' outputs placed end to end are the whole-stream decode, and only the window's
// bytes and PCM are ever held.
#include <algorithm>
#include <cstring>
#include <future>
#include <memory>

#include <sigpu/flac.hpp>

#include "flac/backends.hpp"
#include "flac/decoder_common.hpp"
#include "flac/frame_header.hpp"
#include "flac/frame_index.hpp"
#include "flac/pcm_md5.hpp"
#include "flac/split.hpp"
#include "flac/stream_start.hpp"

namespace sigpu::flac {
namespace {

/// Metadata beyond this is refused once that much of it has arrived: each block's length is 24
/// bits, but nothing bounds their number, and the first window holds all of them.
constexpr std::size_t kMaxMetadata = std::size_t(128) << 20;

/// The longest a frame can be: 65536 samples of 8 channels of 33 bits (a side channel of 32-bit
/// audio), VERBATIM, with its header and footer.
constexpr std::size_t kMaxFrameBytes = (std::size_t(65536) * 8 * 33 + 7) / 8 + 64;

/// Where the first frame starts once `b` holds all the metadata (marker, an optional ID3v2 tag
/// before it, and the blocks); else nothing, with the size `b` must reach first in `need`.
/// Throws InputError for data that is neither FLAC nor starts at a frame.
std::optional<std::size_t> metadata_end(std::span<const std::uint8_t> b, std::size_t& need) {
  auto short_of = [&](std::size_t n) {
    if (b.size() >= n) return false;
    need = n;
    return true;
  };
  std::size_t pos = 0;
  if (short_of(4)) return std::nullopt;
  if (std::memcmp(b.data(), "ID3", 3) == 0) {
    if (short_of(10)) return std::nullopt;
    pos = id3v2_tag_bytes(b);
    if (short_of(pos + 4)) return std::nullopt;
  }
  if (is_sync(b.data() + pos)) return pos;
  if (std::memcmp(b.data() + pos, "fLaC", 4) != 0) {
    if (std::memcmp(b.data() + pos, "OggS", 4) == 0) throw_not_flac(b, pos);
    // Junk first: parse_stream skips it once a marker or a whole frame is here. The buffer
    // doubles between looks, so that a long run of junk is looked over only a few times.
    const auto start = find_stream_start(b, pos);
    if (!start) {
      const std::size_t enough = pos + kMaxLeadingJunk + kMaxFrameBytes;
      if (b.size() >= enough) throw_not_flac(b, pos);
      short_of(std::min(2 * b.size(), enough));
      return std::nullopt;
    }
    if (b[*start] != 'f') return pos;
    pos = *start;
  }
  for (pos += 4;;) {
    if (short_of(pos + 4)) return std::nullopt;
    const bool last = b[pos] & 0x80;
    const std::size_t length =
        (std::size_t(b[pos + 1]) << 16) | (std::size_t(b[pos + 2]) << 8) | b[pos + 3];
    pos += 4 + length;
    if (short_of(pos)) return std::nullopt;
    if (last) return pos;
  }
}

/// The sample a frame header codes.
std::uint64_t coded_sample(const Candidate& f) {
  return f.variable ? f.number : f.number * f.block_size;
}

/// decode() of one window, its errors rethrown (same kind) with the window's place in the stream
/// when it does not start the stream (their positions are the window's).
Decoded decode_window(std::span<const std::uint8_t> part, const DecodeOptions& o,
                      std::uint64_t begin) {
  if (begin == 0) return decode(part, o);
  const std::string where = "in the window at bytes " + std::to_string(begin) + ".." +
                            std::to_string(begin + part.size()) + ": ";
  try {
    return decode(part, o);
  } catch (const InputError& e) {
    throw InputError(where + e.what());
  } catch (const UnsupportedError& e) {
    throw UnsupportedError(where + e.what());
  } catch (const CudaError&) {
    throw;
  } catch (const Error& e) {
    throw Error(where + e.what());
  }
}

/// A Pcm of `p`'s shape holding its first `count` samples, silence past its end.
Pcm resized(const Pcm& p, std::uint64_t count) {
  Pcm out = pcm_shape(p, count);
  const std::size_t v = bytes_per_sample(p.format), ch = p.channels;
  out.bytes.assign(count * ch * v, 0);
  const std::uint64_t have = std::min(count, p.samples);
  if (p.layout == Layout::interleaved) {
    if (have) std::memcpy(out.bytes.data(), p.bytes.data(), have * ch * v);
  } else {
    for (std::size_t c = 0; c < ch && have; ++c)
      std::memcpy(out.bytes.data() + c * count * v, p.bytes.data() + c * p.samples * v, have * v);
  }
  return out;
}

}  // namespace

struct StreamDecoder::Impl {
  DecodeOptions o;   ///< the caller's, backend resolved
  DecodeOptions po;  ///< a window's: the stream's parameters, damage and MD5 left to us
  PcmSink sink;
  std::size_t window = 0;

  ByteBuffer buf;                    ///< stream bytes from buf_begin not yet decoded
  std::uint64_t buf_begin = 0;       ///< stream offset of buf[0]
  std::uint64_t pushed = 0;          ///< stream bytes pushed
  std::size_t peak = 0;              ///< largest buf.size()
  std::size_t want = 0;              ///< buf size at which the next step is taken
  std::optional<std::size_t> audio;  ///< first frame's byte, once the metadata is all here
  Stream stream;                     ///< parsed once `audio` is known
  std::size_t windows = 0;           ///< windows decoded
  std::uint64_t cut_sample = 0;      ///< sample coded by buf[0]'s frame (windows > 0)
  std::size_t search_from = 0;       ///< buf offset where the next cut may be
  Pcm shape;                         ///< the first window's format, no bytes
  std::uint64_t emitted = 0;         ///< samples handed on, per channel
  DecodeOutput r;                    ///< damage, warnings and frames so far (stream's terms)
  std::optional<PcmMd5> md5;         ///< hashes the blocks while the stream is undamaged
  bool finished = false;
  /// The last window's hashing and hand-over, on a thread of its own so that the next window
  /// decodes meanwhile. Last, so that it is waited for before the members it uses go.
  std::future<void> handing_over;

  /// Waits for the last window's hand-over; rethrows what the sink threw.
  void wait_handed_over() {
    if (handing_over.valid()) handing_over.get();
  }

  void push(std::span<const std::uint8_t> bytes) {
    if (finished) throw Error("StreamDecoder: push after finish");
    pushed += bytes.size();
    while (!bytes.empty()) {
      const std::size_t take = std::min(bytes.size(), want - buf.size());
      buf.insert(buf.end(), bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(take));
      bytes = bytes.subspan(take);
      peak = std::max(peak, buf.size());
      if (buf.size() >= want) step();
    }
  }

  /// Parses the metadata once it is all here; then decodes every window that a cut closes. Leaves
  /// want > buf.size().
  void step() {
    if (!audio) {
      if (buf.size() > kMaxMetadata)
        throw UnsupportedError("metadata runs past " + std::to_string(kMaxMetadata) +
                               " bytes (byte " + std::to_string(buf.size()) +
                               "); a stream decoder holds all of it");
      std::size_t need = 0;
      audio = metadata_end(buf, need);
      if (!audio) {
        want = std::min(need, kMaxMetadata + 1);
        return;
      }
      begin_audio();
    }
    while (buf.size() >= want) {
      const auto c = linked_frames_from(buf, stream.info, search_from);
      if (!c) {
        // A cut later found starts its three frames past all but the last few frames of what
        // was searched: the next search need not go over the rest again.
        const std::size_t tail = 3 * kMaxFrameBytes;
        if (buf.size() > tail) search_from = std::max(search_from, buf.size() - tail);
        want = buf.size() + std::max<std::size_t>(window / 4, 1);
        return;
      }
      const Candidate& f = c->second;
      // Numbers that go back from the window's start: no cut there (split_at_frames's rule).
      if (windows > 0 && coded_sample(f) <= cut_sample) {
        search_from = f.pos + 1;
        continue;
      }
      decode_next(f.pos, coded_sample(f));
    }
  }

  void begin_audio() {
    try {
      stream = parse_stream(buf);
    } catch (const InputError&) {
      throw;
    } catch (const Error& e) {
      throw InputError(e.what());
    }
    po = o;
    po.verify_md5 = false;
    po.stop_on_damage = false;
    if (!po.params && stream.has_streaminfo)
      po.params =
          StreamParams{stream.info.sample_rate, stream.info.channels, stream.info.bits_per_sample};
    search_from = *audio + window - window / 4;
    want = std::max(*audio + window, buf.size() + 1);
  }

  /// Decodes buf[0, end) as the next window; `next_sample` is the sample coded at `end` (the
  /// next window's first frame), nothing for the stream's last window.
  void decode_next(std::size_t end, std::optional<std::uint64_t> next_sample) {
    const std::uint64_t begin = buf_begin;
    Decoded got = decode_window(std::span<const std::uint8_t>(buf.data(), end), po, begin);
    Pcm& p = got.pcm;
    if (windows == 0) {
      shape = Pcm{p.format, p.layout, p.sample_rate, p.channels, p.bits_per_sample, 0, {}};
      if (!po.params) po.params = StreamParams{p.sample_rate, p.channels, p.bits_per_sample};
      if (md5_wanted(stream, o, shape)) md5.emplace(shape);
    } else if (p.channels != shape.channels || p.bits_per_sample != shape.bits_per_sample ||
               p.sample_rate != shape.sample_rate) {
      throw UnsupportedError("the window at byte " + std::to_string(begin) +
                             ": the stream's channel count, bit depth or sample rate changes; "
                             "streams with changing parameters are not supported");
    }
    // A window after the first covers the samples from its first frame's number to the next
    // window's; one that decoded to another length (only damage could do that) is padded with
    // silence or shortened, so every later sample stays where a whole-stream decode puts it.
    const std::uint64_t count = windows > 0 && next_sample ? *next_sample - cut_sample : p.samples;
    if (count != p.samples)
      r.warnings.push_back("the window at bytes " + std::to_string(begin) + ".." +
                           std::to_string(begin + end) + " decoded to " +
                           std::to_string(p.samples) +
                           " samples, the frame numbers at its ends say " + std::to_string(count) +
                           ": " + (p.samples < count ? "padded with silence" : "shortened"));
    std::vector<Damage> damage;
    for (Damage x : got.report.damage) {
      // The first window's check of its length against STREAMINFO's total (which counts the
      // whole stream) is made again at the end.
      if (windows == 0 && x.byte_length == 0 && x.byte_offset == end) continue;
      x.byte_offset += begin;
      x.first_sample += emitted;
      x.frame_number += r.frames_numbered;
      damage.push_back(std::move(x));
    }
    std::sort(damage.begin(), damage.end(), [](const Damage& a, const Damage& b) {
      return a.first_sample != b.first_sample ? a.first_sample < b.first_sample
                                              : a.byte_offset < b.byte_offset;
    });
    if (o.stop_on_damage && !damage.empty()) throw Error(damage.front().message());
    const std::uint64_t bytes = (emitted + count) * shape.channels * bytes_per_sample(shape.format);
    if (o.max_output_bytes && bytes > o.max_output_bytes)
      throw Error("output would be over " + std::to_string(bytes) + " bytes (at byte " +
                  std::to_string(begin + end) + "), over the limit of " +
                  std::to_string(o.max_output_bytes));
    // The first window's warnings start with the metadata's, which the report has anyway.
    auto w = got.report.warnings.begin();
    if (windows == 0 && got.report.warnings.size() >= stream.warnings.size() &&
        std::equal(stream.warnings.begin(), stream.warnings.end(), w))
      w += static_cast<std::ptrdiff_t>(stream.warnings.size());
    r.warnings.insert(r.warnings.end(), w, got.report.warnings.end());
    r.frames += got.report.frames;
    r.frames_numbered += got.report.frames_numbered;

    auto block = std::make_shared<const Pcm>(count == p.samples ? std::move(p) : resized(p, count));
    wait_handed_over();
    if (audio_damaged(damage)) md5.reset();
    r.damage.insert(r.damage.end(), damage.begin(), damage.end());
    emitted += count;
    ++windows;
    buf.erase(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(end));
    buf_begin += end;
    if (next_sample) cut_sample = *next_sample;
    search_from = window - window / 4;
    want = std::max(window, buf.size() + 1);
    handing_over = std::async(std::launch::async, [this, block = std::move(block)] {
      if (md5) md5->update_all(*block);
      if (block->samples) sink(*block);
    });
  }

  Decoded finish() {
    if (finished) throw Error("StreamDecoder: finish after finish");
    finished = true;
    if (pushed == 0) throw InputError("empty input: no FLAC data");
    if (!audio) {
      // Too short for metadata_end to judge: parse_stream names what is missing, or finds a
      // stream that starts at a frame.
      try {
        audio = parse_stream(buf).audio_offset;
      } catch (const Error& e) {
        throw InputError(e.what());
      }
      begin_audio();
    }
    Decoded d;
    if (windows == 0) {
      // The whole stream is one window: decoded as decode() does it.
      DecodeOptions one = o;
      one.stop_on_damage = false;
      d = decode(buf, one);
      no_frames_is_input_error(d.report.frames, buf.size() - *audio);
      if (o.stop_on_damage && !d.report.damage.empty())
        throw Error(d.report.damage.front().message());
      if (d.pcm.samples) sink(d.pcm);
      d.pcm.bytes = ByteBuffer();
      return d;
    }
    decode_next(buf.size(), std::nullopt);
    wait_handed_over();
    buf = ByteBuffer();
    check_total_samples(emitted, stream, pushed, r.frames_numbered, r.damage, r.warnings);
    d.stream = stream;
    d.report.backend = o.backend;
    r.pcm = shape;
    r.pcm.samples = emitted;
    const bool hash = md5 && !audio_damaged(r.damage);
    std::array<std::uint8_t, 16> digest{};
    if (hash) digest = md5->finish();
    finish_decode(d, std::move(r), o, hash, hash ? &digest : nullptr);
    return d;
  }

  /// Audio bytes in which no frame decodes are not a FLAC stream we can read.
  static void no_frames_is_input_error(std::uint64_t frames, std::uint64_t audio_bytes) {
    if (frames == 0 && audio_bytes > 0)
      throw InputError("no decodable FLAC frame in the " + std::to_string(audio_bytes) +
                       " bytes of audio");
  }
};

StreamDecoder::StreamDecoder(const DecodeOptions& options, PcmSink on_pcm, std::size_t window_bytes)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.o = options;
  m.o.backend = resolve(options.backend);
  m.sink = on_pcm ? std::move(on_pcm) : [](const Pcm&) {};
  m.window = window_bytes ? window_bytes
                          : (m.o.backend == Backend::cuda ? kDefaultWindowCuda : kDefaultWindow);
  m.want = 4;
}

StreamDecoder::~StreamDecoder() = default;
StreamDecoder::StreamDecoder(StreamDecoder&&) noexcept = default;
StreamDecoder& StreamDecoder::operator=(StreamDecoder&&) noexcept = default;

void StreamDecoder::push(std::span<const std::uint8_t> bytes) {
  impl_->push(bytes);
}

Decoded StreamDecoder::finish() {
  return impl_->finish();
}

std::uint64_t StreamDecoder::bytes_pushed() const {
  return impl_->pushed;
}

std::size_t StreamDecoder::peak_buffered_bytes() const {
  return impl_->peak;
}

}  // namespace sigpu::flac
