// FLAC decoding, side by side in one run on one file: libFLAC (single thread, the peer) against
// sigpu's cpu, cpu-parallel and cuda backends. Every run's PCM is checked bit-exact against
// libFLAC's; a mismatch is printed loudly and the exit status is 1.
//
//   flac_bench [FILE] [--repeat N] [--backends LIST] [--md5 on|off|both] [--device N] [--tile N]
//              [--clips N [--clip-seconds S]] [--csv OUT]
//
// --clips N adds rows for N clips of --clip-seconds (default 30) cut from the file, each a
// complete FLAC file: libFLAC and cpu-parallel over the distinct clips, cuda one clip per call
// and as a batch (decode_batch, shared launches), all s16 without MD5.
//
// --ranges N adds rows for ranged decoding (decode_range, decode_ranges): the latency of one
// --range-seconds (default 5) clip from the middle of the file, and N random clips at once;
// beside libFLAC seeking to the same clips (seek_absolute, one decoder, one thread) and, with
// the ffmpeg backend, FFmpeg's flac demuxer seeking (av_seek_frame) and its decoder on one
// thread (in process, through libavformat/libavcodec). Every clip is checked sample for sample.
//
// --devices all|0,1,... adds cuda rows (raw32 and s16, as asked) decoding on those GPUs at once
// (DecodeOptions::devices: the file cut by bytes at frame starts, one part per device, or
// --parts N over them); their bound is the PCIe of one device divided by the device count.
//
// --tile N decodes the file's frames repeated N times (renumbered, CRCs and MD5 redone): a
// 60-s file tiled 60 times stands in for an hour where the long file cannot travel.
//
// Without FILE: music-60s.flac from $SIGPU_DATA_DIR/bench/ (the GPU machine's bundle) or
// ${SIGPU_CACHE:-$HOME/.cache/sigpu}/bench/ (scripts/make-bench-corpus). With SIGPU_BENCH_OUT set
// (scripts/gpu-run sets it) and no --csv, the rows also go to $SIGPU_BENCH_OUT/flac_bench-*.csv.
//
// LIST is comma-separated, from: libflac, cpu, cpu-parallel, cuda (host bytes in, host PCM out,
// raw32), cuda-s16 (the same with int16 output), cuda-device (compressed bytes already in device
// memory, PCM left there, raw32), cuda-device-s16, ffmpeg (rows for --ranges only); "all" (the
// default) is every one of them.
//
// The file is read into memory first; each row times whole-file decodes from memory to memory
// (median/min/max of N runs after one warm-up run). The cuda rows are also given as a fraction
// of their bound, measured in the same run: PCIe (compressed bytes up + PCM down, at the pinned
// cudaMemcpy bandwidths) for host-to-host, HBM copy bandwidth (compressed bytes read + PCM
// written) for device-resident.
#include <sigpu/core.hpp>
#include <sigpu/flac.hpp>

#include <FLAC/stream_decoder.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include "core/crc.hpp"
#include "core/md5.hpp"
#include "pcie_probe.hpp"

#ifdef SIGPU_FLAC_BENCH_LIBAV
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavutil/error.h>
#include <libavutil/mathematics.h>
}
#endif
#ifdef SIGPU_HAVE_CUDA
#include <cuda_runtime.h>

#include "flac/cuda/decode_path.hpp"
#include "flac/gpu_driver.hpp"
#endif

namespace {

using Clock = std::chrono::steady_clock;
namespace flac = sigpu::flac;
#ifdef SIGPU_HAVE_CUDA
using sigpu::flac::cuda::DecodePath;
#endif

// ---------------------------------------------------------------------------------------------
// libFLAC, decoding from memory into an interleaved int32 buffer, as an application would.

struct LibflacOut {
  std::unique_ptr<std::int32_t[]> pcm;  // interleaved
  std::uint64_t capacity = 0;           // in samples per channel
  std::uint64_t samples = 0;            // decoded, per channel
  std::uint32_t channels = 0, bits = 0, rate = 0;
  std::uint64_t total = 0;  // from STREAMINFO
  int errors = 0;
  std::string first_error;
  // Only when asked for (--tile): where each frame ends in the file, and its block size.
  bool record_frames = false;
  std::vector<std::uint64_t> frame_ends;
  std::vector<std::uint32_t> frame_blocks;
};

struct LibflacCtx {
  const std::uint8_t* data;
  std::size_t size, pos = 0;
  LibflacOut* out;
};

FLAC__StreamDecoderReadStatus lf_read(const FLAC__StreamDecoder*, FLAC__byte buffer[],
                                      size_t* bytes, void* cd) {
  auto* c = static_cast<LibflacCtx*>(cd);
  if (c->pos >= c->size) {
    *bytes = 0;
    return FLAC__STREAM_DECODER_READ_STATUS_END_OF_STREAM;
  }
  std::size_t n = std::min(*bytes, c->size - c->pos);
  std::memcpy(buffer, c->data + c->pos, n);
  c->pos += n;
  *bytes = n;
  return FLAC__STREAM_DECODER_READ_STATUS_CONTINUE;
}

FLAC__StreamDecoderTellStatus lf_tell(const FLAC__StreamDecoder*, FLAC__uint64* offset, void* cd) {
  *offset = static_cast<LibflacCtx*>(cd)->pos;
  return FLAC__STREAM_DECODER_TELL_STATUS_OK;
}

FLAC__StreamDecoderWriteStatus lf_write(const FLAC__StreamDecoder* d, const FLAC__Frame* frame,
                                        const FLAC__int32* const buffer[], void* cd) {
  LibflacOut& o = *static_cast<LibflacCtx*>(cd)->out;
  const std::uint32_t ch = frame->header.channels, n = frame->header.blocksize;
  if (o.channels == 0) o.channels = ch;
  if (ch != o.channels) return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT;
  if (o.samples + n > o.capacity) {  // unknown or wrong total: grow
    std::uint64_t cap = std::max<std::uint64_t>(o.capacity * 2, o.samples + n + (1u << 20));
    auto bigger = std::make_unique_for_overwrite<std::int32_t[]>(cap * ch);
    if (o.samples) std::memcpy(bigger.get(), o.pcm.get(), o.samples * ch * sizeof(std::int32_t));
    o.pcm = std::move(bigger);
    o.capacity = cap;
  }
  std::int32_t* dst = o.pcm.get() + o.samples * ch;
  if (ch == 2) {
    const FLAC__int32 *l = buffer[0], *r = buffer[1];
    for (std::uint32_t i = 0; i < n; ++i) {
      dst[2 * i] = l[i];
      dst[2 * i + 1] = r[i];
    }
  } else {
    for (std::uint32_t i = 0; i < n; ++i)
      for (std::uint32_t c = 0; c < ch; ++c) dst[i * ch + c] = buffer[c][i];
  }
  o.samples += n;
  if (o.record_frames) {
    FLAC__uint64 end = 0;  // in the write callback: the end of the frame just decoded
    if (!FLAC__stream_decoder_get_decode_position(d, &end))
      return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT;
    o.frame_ends.push_back(end);
    o.frame_blocks.push_back(n);
  }
  return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE;
}

void lf_metadata(const FLAC__StreamDecoder*, const FLAC__StreamMetadata* m, void* cd) {
  if (m->type != FLAC__METADATA_TYPE_STREAMINFO) return;
  LibflacOut& o = *static_cast<LibflacCtx*>(cd)->out;
  const auto& si = m->data.stream_info;
  o.channels = si.channels;
  o.bits = si.bits_per_sample;
  o.rate = si.sample_rate;
  o.total = si.total_samples;
  if (si.total_samples) {  // the whole output at once, not zero-filled (like sigpu's own buffer)
    o.pcm = std::make_unique_for_overwrite<std::int32_t[]>(si.total_samples * si.channels);
    o.capacity = si.total_samples;
  }
}

void lf_error(const FLAC__StreamDecoder*, FLAC__StreamDecoderErrorStatus status, void* cd) {
  LibflacOut& o = *static_cast<LibflacCtx*>(cd)->out;
  if (o.errors++ == 0) o.first_error = FLAC__StreamDecoderErrorStatusString[status];
}

// Decodes the whole file; throws on a failure libFLAC reports (including an MD5 mismatch).
LibflacOut libflac_decode(const std::vector<std::uint8_t>& file, bool md5,
                          bool record_frames = false) {
  LibflacOut out;
  out.record_frames = record_frames;
  LibflacCtx ctx{file.data(), file.size(), 0, &out};
  FLAC__StreamDecoder* d = FLAC__stream_decoder_new();
  if (!d) throw std::runtime_error("libFLAC: out of memory");
  FLAC__stream_decoder_set_md5_checking(d, md5);
  if (FLAC__stream_decoder_init_stream(d, lf_read, nullptr, record_frames ? lf_tell : nullptr,
                                       nullptr, nullptr, lf_write, lf_metadata, lf_error,
                                       &ctx) != FLAC__STREAM_DECODER_INIT_STATUS_OK) {
    FLAC__stream_decoder_delete(d);
    throw std::runtime_error("libFLAC: init_stream failed");
  }
  bool ok = FLAC__stream_decoder_process_until_end_of_stream(d);
  std::string state = FLAC__stream_decoder_get_resolved_state_string(d);
  bool md5_ok = FLAC__stream_decoder_finish(d);  // false on an MD5 mismatch
  FLAC__stream_decoder_delete(d);
  if (!ok) throw std::runtime_error("libFLAC: decoding failed: " + state);
  if (!md5_ok) throw std::runtime_error("libFLAC: MD5 mismatch");
  if (out.errors) {
    throw std::runtime_error("libFLAC: " + std::to_string(out.errors) +
                             " decoding error(s), first: " + out.first_error);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// --ranges: libFLAC's own seeking (FLAC__stream_decoder_seek_absolute: through the SEEKTABLE
// when there is one, else its search over the bytes), then decoding on until the range is
// complete, into interleaved int16, as a loader built on libFLAC would cut clips.

struct SeekCtx {
  const std::uint8_t* data;
  std::size_t size, pos = 0;
  std::vector<std::int16_t> got;  ///< the range's samples so far, interleaved
  std::uint64_t want = 0;         ///< samples per channel
  unsigned bits = 16;
};

FLAC__StreamDecoderReadStatus seek_read(const FLAC__StreamDecoder*, FLAC__byte buffer[],
                                        size_t* bytes, void* cd) {
  auto* c = static_cast<SeekCtx*>(cd);
  if (c->pos >= c->size) {
    *bytes = 0;
    return FLAC__STREAM_DECODER_READ_STATUS_END_OF_STREAM;
  }
  const std::size_t n = std::min(*bytes, c->size - c->pos);
  std::memcpy(buffer, c->data + c->pos, n);
  c->pos += n;
  *bytes = n;
  return FLAC__STREAM_DECODER_READ_STATUS_CONTINUE;
}
FLAC__StreamDecoderSeekStatus seek_seek(const FLAC__StreamDecoder*, FLAC__uint64 to, void* cd) {
  auto* c = static_cast<SeekCtx*>(cd);
  if (to > c->size) return FLAC__STREAM_DECODER_SEEK_STATUS_ERROR;
  c->pos = static_cast<std::size_t>(to);
  return FLAC__STREAM_DECODER_SEEK_STATUS_OK;
}
FLAC__StreamDecoderTellStatus seek_tell(const FLAC__StreamDecoder*, FLAC__uint64* at, void* cd) {
  *at = static_cast<SeekCtx*>(cd)->pos;
  return FLAC__STREAM_DECODER_TELL_STATUS_OK;
}
FLAC__StreamDecoderLengthStatus seek_length(const FLAC__StreamDecoder*, FLAC__uint64* n, void* cd) {
  *n = static_cast<SeekCtx*>(cd)->size;
  return FLAC__STREAM_DECODER_LENGTH_STATUS_OK;
}
FLAC__bool seek_eof(const FLAC__StreamDecoder*, void* cd) {
  auto* c = static_cast<SeekCtx*>(cd);
  return c->pos >= c->size;
}
FLAC__StreamDecoderWriteStatus seek_write(const FLAC__StreamDecoder*, const FLAC__Frame* frame,
                                          const FLAC__int32* const buffer[], void* cd) {
  auto* c = static_cast<SeekCtx*>(cd);
  const unsigned ch = frame->header.channels;
  const std::uint64_t have = c->got.size() / ch;
  const std::uint64_t n = std::min<std::uint64_t>(frame->header.blocksize, c->want - have);
  for (std::uint64_t i = 0; i < n; ++i)
    for (unsigned k = 0; k < ch; ++k) {
      const std::int32_t v = buffer[k][i];
      c->got.push_back(static_cast<std::int16_t>(c->bits <= 16 ? v * (1 << (16 - c->bits))
                                                               : v >> (c->bits - 16)));
    }
  return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE;
}
void seek_error(const FLAC__StreamDecoder*, FLAC__StreamDecoderErrorStatus, void*) {}

/// One decoder for many ranges (opened once, metadata read once), as a loader keeps it.
class LibflacSeeker {
 public:
  LibflacSeeker(const std::vector<std::uint8_t>& file, unsigned bits, unsigned channels)
      : ctx_{file.data(), file.size()}, channels_(channels) {
    ctx_.bits = bits;
    d_ = FLAC__stream_decoder_new();
    if (!d_ || FLAC__stream_decoder_init_stream(d_, seek_read, seek_seek, seek_tell, seek_length,
                                                seek_eof, seek_write, nullptr, seek_error,
                                                &ctx_) != FLAC__STREAM_DECODER_INIT_STATUS_OK)
      throw std::runtime_error("libFLAC: init_stream failed");
    if (!FLAC__stream_decoder_process_until_end_of_metadata(d_))
      throw std::runtime_error("libFLAC: metadata");
  }
  ~LibflacSeeker() { FLAC__stream_decoder_delete(d_); }
  LibflacSeeker(const LibflacSeeker&) = delete;
  LibflacSeeker& operator=(const LibflacSeeker&) = delete;

  /// Samples [first, first + count) as interleaved int16 (fewer at the stream's end).
  const std::vector<std::int16_t>& cut(std::uint64_t first, std::uint64_t count) {
    ctx_.got.clear();
    ctx_.want = count;
    if (FLAC__stream_decoder_get_state(d_) == FLAC__STREAM_DECODER_SEEK_ERROR)
      FLAC__stream_decoder_flush(d_);
    if (!FLAC__stream_decoder_seek_absolute(d_, first))
      throw std::runtime_error("libFLAC: seek to " + std::to_string(first) + " failed");
    while (ctx_.got.size() / channels_ < count &&
           FLAC__stream_decoder_get_state(d_) != FLAC__STREAM_DECODER_END_OF_STREAM)
      if (!FLAC__stream_decoder_process_single(d_))
        throw std::runtime_error("libFLAC: decoding after the seek failed");
    return ctx_.got;
  }

 private:
  SeekCtx ctx_;
  unsigned channels_;
  FLAC__StreamDecoder* d_ = nullptr;
};

// ---------------------------------------------------------------------------------------------
// --ranges with the `ffmpeg` backend: FFmpeg's flac demuxer seeking (av_seek_frame, backward, to
// the range's first sample: through the SEEKTABLE when there is one, else its own search over
// the bytes) and its flac decoder on one thread, from memory through an AVIOContext, the
// samples before the range dropped by the frames' timestamps, into interleaved int16.

#ifdef SIGPU_FLAC_BENCH_LIBAV
struct AvMemory {
  const std::uint8_t* data;
  std::int64_t size, pos = 0;
};

int av_read(void* opaque, std::uint8_t* buf, int n) {
  auto* m = static_cast<AvMemory*>(opaque);
  const std::int64_t left = m->size - m->pos;
  if (left <= 0) return AVERROR_EOF;
  const int got = static_cast<int>(std::min<std::int64_t>(n, left));
  std::memcpy(buf, m->data + m->pos, static_cast<std::size_t>(got));
  m->pos += got;
  return got;
}

std::int64_t av_seek(void* opaque, std::int64_t offset, int whence) {
  auto* m = static_cast<AvMemory*>(opaque);
  if (whence & AVSEEK_SIZE) return m->size;
  const std::int64_t base = (whence & 3) == SEEK_CUR   ? m->pos
                            : (whence & 3) == SEEK_END ? m->size
                                                       : 0;
  if (base + offset < 0 || base + offset > m->size) return -1;
  return m->pos = base + offset;
}

std::string av_error(int code) {
  char text[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(code, text, sizeof text);
  return text;
}

/// One demuxer and decoder for many ranges (opened once), as a loader keeps them.
class FfmpegSeeker {
 public:
  explicit FfmpegSeeker(const std::vector<std::uint8_t>& file)
      : mem_{file.data(), static_cast<std::int64_t>(file.size())} {
    const AVCodec* codec = avcodec_find_decoder(AV_CODEC_ID_FLAC);
    const AVInputFormat* demuxer = av_find_input_format("flac");
    if (!codec || !demuxer)
      throw std::runtime_error("this FFmpeg build has no flac decoder or demuxer");
    constexpr int kBuffer = 1 << 16;
    auto* buffer = static_cast<std::uint8_t*>(av_malloc(kBuffer));
    io_ = avio_alloc_context(buffer, kBuffer, 0, &mem_, av_read, nullptr, av_seek);
    fmt_ = avformat_alloc_context();
    if (!io_ || !fmt_) throw std::runtime_error("FFmpeg: out of memory");
    fmt_->pb = io_;
    fmt_->flags |= AVFMT_FLAG_CUSTOM_IO;
    if (int e = avformat_open_input(&fmt_, nullptr, demuxer, nullptr); e < 0)
      throw std::runtime_error("FFmpeg: avformat_open_input: " + av_error(e));
    if (fmt_->nb_streams < 1) throw std::runtime_error("FFmpeg: no audio stream");
    stream_ = fmt_->streams[0];
    ctx_ = avcodec_alloc_context3(codec);
    avcodec_parameters_to_context(ctx_, stream_->codecpar);
    ctx_->thread_count = 1;
    if (int e = avcodec_open2(ctx_, codec, nullptr); e < 0)
      throw std::runtime_error("FFmpeg: avcodec_open2: " + av_error(e));
    packet_ = av_packet_alloc();
    frame_ = av_frame_alloc();
  }
  ~FfmpegSeeker() {
    av_frame_free(&frame_);
    av_packet_free(&packet_);
    avcodec_free_context(&ctx_);
    avformat_close_input(&fmt_);
    if (io_) av_freep(&io_->buffer);
    avio_context_free(&io_);
  }
  FfmpegSeeker(const FfmpegSeeker&) = delete;
  FfmpegSeeker& operator=(const FfmpegSeeker&) = delete;

  /// Samples [first, first + count) as interleaved int16 (fewer at the stream's end).
  const std::vector<std::int16_t>& cut(std::uint64_t first, std::uint64_t count) {
    got_.clear();
    const auto ts = av_rescale_q(static_cast<std::int64_t>(first), AVRational{1, ctx_->sample_rate},
                                 stream_->time_base);
    if (int e = av_seek_frame(fmt_, stream_->index, ts, AVSEEK_FLAG_BACKWARD); e < 0)
      throw std::runtime_error("FFmpeg: seek to " + std::to_string(first) + ": " + av_error(e));
    avcodec_flush_buffers(ctx_);
    const unsigned ch = static_cast<unsigned>(ctx_->ch_layout.nb_channels);
    bool eof = false;
    while (got_.size() < count * ch) {
      int e = avcodec_receive_frame(ctx_, frame_);
      if (e == AVERROR(EAGAIN)) {
        if (eof) break;
        e = av_read_frame(fmt_, packet_);
        if (e == AVERROR_EOF) {
          eof = true;
          avcodec_send_packet(ctx_, nullptr);
          continue;
        }
        if (e < 0) throw std::runtime_error("FFmpeg: av_read_frame: " + av_error(e));
        e = avcodec_send_packet(ctx_, packet_);
        av_packet_unref(packet_);
        if (e < 0) throw std::runtime_error("FFmpeg: decoding: " + av_error(e));
        continue;
      }
      if (e == AVERROR_EOF) break;
      if (e < 0) throw std::runtime_error("FFmpeg: decoding: " + av_error(e));
      take(first, count, ch);
    }
    return got_;
  }

 private:
  /// The part of the decoded frame inside the range, by its timestamp.
  void take(std::uint64_t first, std::uint64_t count, unsigned ch) {
    if (frame_->pts == AV_NOPTS_VALUE) throw std::runtime_error("FFmpeg: a frame without pts");
    const auto start = static_cast<std::uint64_t>(
        av_rescale_q(frame_->pts, stream_->time_base, AVRational{1, ctx_->sample_rate}));
    const auto n = static_cast<std::uint64_t>(frame_->nb_samples);
    const std::uint64_t have = got_.size() / ch;
    // Samples before the range, or already taken, are skipped.
    const std::uint64_t from = std::max(first + have, start);
    if (from >= start + n) return;
    const std::uint64_t take = std::min(start + n - from, count - have);
    const std::uint64_t skip = from - start;
    const bool wide = frame_->format == AV_SAMPLE_FMT_S32;
    if (!wide && frame_->format != AV_SAMPLE_FMT_S16)
      throw std::runtime_error("FFmpeg: unexpected sample format");
    for (std::uint64_t i = 0; i < take * ch; ++i) {
      const std::uint64_t at = skip * ch + i;
      got_.push_back(wide ? static_cast<std::int16_t>(
                                reinterpret_cast<const std::int32_t*>(frame_->data[0])[at] >> 16)
                          : reinterpret_cast<const std::int16_t*>(frame_->data[0])[at]);
    }
  }

  AvMemory mem_;
  AVIOContext* io_ = nullptr;
  AVFormatContext* fmt_ = nullptr;
  AVStream* stream_ = nullptr;
  AVCodecContext* ctx_ = nullptr;
  AVPacket* packet_ = nullptr;
  AVFrame* frame_ = nullptr;
  std::vector<std::int16_t> got_;
};
#endif

// ---------------------------------------------------------------------------------------------
// --tile N: a long stream made from a short one, for machines the long corpus cannot travel to.
// The frames of the file are repeated N times with renumbered frame headers (CRC-8 and CRC-16
// recomputed); every copy but the last leaves out the short final frame, so the result is a
// valid fixed-block-size stream. STREAMINFO gets the new total, frame-size range and MD5, and
// the SEEKTABLE new points.

void put_utf8(std::vector<std::uint8_t>& out, std::uint64_t v) {  // FLAC's coded frame number
  if (v < 0x80) {
    out.push_back(static_cast<std::uint8_t>(v));
    return;
  }
  int n = v < 0x800 ? 2 : v < 0x10000 ? 3 : v < 0x200000 ? 4 : v < 0x4000000 ? 5 : 6;
  out.push_back(static_cast<std::uint8_t>((0xFF00u >> n) | (v >> (6 * (n - 1)))));
  for (int i = n - 2; i >= 0; --i)
    out.push_back(static_cast<std::uint8_t>(0x80 | ((v >> (6 * i)) & 0x3F)));
}

/// A stream of the file's frames [first, last) for each range, in order, renumbered from 0.
using FrameRange = std::pair<std::size_t, std::size_t>;
std::vector<std::uint8_t> restream(const std::vector<std::uint8_t>& file,
                                   const flac::Stream& stream, const LibflacOut& ref,
                                   const std::vector<FrameRange>& ranges) {
  const std::size_t frames = ref.frame_ends.size();
  if (frames < 2) throw std::runtime_error("the file needs at least 2 frames");
  if (!stream.has_streaminfo) throw std::runtime_error("the file has no STREAMINFO");
  const std::uint32_t bs = ref.frame_blocks[0];
  for (std::size_t i = 0; i + 1 < frames; ++i)
    if (ref.frame_blocks[i] != bs)
      throw std::runtime_error("block sizes vary (variable-size stream)");

  std::vector<std::uint8_t> audio;
  std::uint32_t min_fs = ~0u, max_fs = 0;
  std::uint64_t number = 0, total = 0;
  std::vector<flac::SeekPoint> points;  // one every 10 s, as `flac` writes them by default
  const std::uint64_t point_every = 10ull * ref.rate;
  std::vector<std::uint8_t> frame;
  for (const auto& [first, last] : ranges) {
    for (std::size_t f = first; f < last; ++f, ++number) {
      const std::uint64_t start = f == 0 ? stream.audio_offset : ref.frame_ends[f - 1],
                          end = ref.frame_ends[f];
      if (total >= points.size() * point_every)
        points.push_back({total, audio.size(), static_cast<std::uint16_t>(ref.frame_blocks[f])});
      total += ref.frame_blocks[f];
      const std::uint8_t* p = file.data() + start;
      if (end - start < 8 || p[0] != 0xFF || p[1] != 0xF8)
        throw std::runtime_error("frame " + std::to_string(f) + " is not a fixed-block-size frame");
      int ulen = 0;  // the coded number's length: the count of leading 1 bits, or 1
      while (ulen < 7 && (p[4] & (0x80 >> ulen))) ++ulen;
      if (ulen == 0) ulen = 1;
      const unsigned bcode = p[2] >> 4, rcode = p[2] & 15;
      const std::size_t extra = (bcode == 6   ? 1
                                 : bcode == 7 ? 2
                                              : 0) +
                                (rcode == 12                  ? 1
                                 : rcode >= 13 && rcode <= 14 ? 2
                                                              : 0);
      const std::size_t head_end = 4 + ulen + extra;  // the CRC-8 byte's position
      frame.assign(p, p + 4);
      put_utf8(frame, number);
      frame.insert(frame.end(), p + 4 + ulen, p + head_end);
      frame.push_back(sigpu::crc8_update(0, frame.data(), frame.size(), sigpu::kCrcTables.crc8));
      frame.insert(frame.end(), p + head_end + 1, p + (end - start) - 2);
      std::uint16_t crc =
          sigpu::crc16_update(0, frame.data(), frame.size(), sigpu::kCrcTables.crc16);
      frame.push_back(static_cast<std::uint8_t>(crc >> 8));
      frame.push_back(static_cast<std::uint8_t>(crc));
      min_fs = std::min<std::uint32_t>(min_fs, frame.size());
      max_fs = std::max<std::uint32_t>(max_fs, frame.size());
      audio.insert(audio.end(), frame.begin(), frame.end());
    }
  }

  // Metadata: the file's blocks but its SEEKTABLE, whose points would lie about the new
  // stream (and send seeking readers on long detours), then a SEEKTABLE of the new stream.
  std::vector<std::uint8_t> out(
      file.begin(), file.begin() + static_cast<std::ptrdiff_t>(stream.blocks.at(0).offset));
  auto put = [&](std::size_t at, std::uint64_t v, int bytes) {
    for (int i = bytes - 1; i >= 0; --i, v >>= 8) out[at + i] = static_cast<std::uint8_t>(v);
  };
  std::uint64_t si = 0;
  for (const auto& b : stream.blocks) {
    if (b.type == 3) continue;
    if (b.type == 0) si = out.size() + 4;
    out.insert(out.end(), file.begin() + static_cast<std::ptrdiff_t>(b.offset),
               file.begin() + static_cast<std::ptrdiff_t>(b.offset + 4 + b.length));
    out[out.size() - 4 - b.length] &= 0x7F;  // not the last block any more
  }
  const std::size_t table = out.size();
  out.resize(table + 4 + 18 * points.size());
  out[table] = 0x80 | 3;
  put(table + 1, 18 * points.size(), 3);
  for (std::size_t i = 0; i < points.size(); ++i) {
    put(table + 4 + 18 * i, points[i].sample, 8);
    put(table + 12 + 18 * i, points[i].offset, 8);
    put(table + 20 + 18 * i, points[i].samples, 2);
  }
  out.insert(out.end(), audio.begin(), audio.end());

  // STREAMINFO: frame-size range, total samples, MD5 of the tiled PCM.
  put(si + 4, min_fs, 3);
  put(si + 7, max_fs, 3);
  std::uint64_t w = 0;
  for (int i = 0; i < 8; ++i) w = (w << 8) | out[si + 10 + i];
  w = (w & ~((1ull << 36) - 1)) | total;
  put(si + 10, w, 8);
  sigpu::Md5 md5;
  const unsigned bps = (ref.bits + 7) / 8;
  std::vector<std::uint8_t> le(1 << 22);
  auto feed = [&](std::uint64_t from, std::uint64_t to) {  // samples per channel [from, to)
    const std::int32_t* s = ref.pcm.get() + from * ref.channels;
    std::size_t n = (to - from) * ref.channels;
    while (n) {
      std::size_t k = std::min<std::size_t>(n, le.size() / bps);
      for (std::size_t i = 0; i < k; ++i)
        for (unsigned b = 0; b < bps; ++b)
          le[i * bps + b] = static_cast<std::uint8_t>(s[i] >> (8 * b));
      md5.update(le.data(), k * bps);
      s += k;
      n -= k;
    }
  };
  for (const auto& [first, last] : ranges)
    feed(std::uint64_t(first) * bs, std::min<std::uint64_t>(std::uint64_t(last) * bs, ref.samples));
  auto digest = md5.finish();
  std::copy(digest.begin(), digest.end(), out.begin() + static_cast<std::ptrdiff_t>(si + 18));
  return out;
}

/// --tile N: the file's frames N times; every copy but the last leaves out the short final
/// frame, so the result is a valid fixed-block-size stream.
std::vector<std::uint8_t> tile_stream(const std::vector<std::uint8_t>& file,
                                      const flac::Stream& stream, const LibflacOut& ref,
                                      int copies) {
  const std::size_t frames = ref.frame_ends.size();
  std::vector<FrameRange> ranges(copies - 1, FrameRange{0, frames - 1});
  ranges.push_back({0, frames});
  return restream(file, stream, ref, ranges);
}

/// --clips: the file cut into consecutive clips of whole frames, each a complete FLAC file.
struct Clip {
  std::vector<std::uint8_t> bytes;
  std::uint64_t first_sample = 0, samples = 0;  ///< where its PCM lies in the file's
};
std::vector<Clip> cut_clips(const std::vector<std::uint8_t>& file, const flac::Stream& stream,
                            const LibflacOut& ref, double seconds) {
  const std::size_t frames = ref.frame_ends.size();
  const std::uint32_t bs = ref.frame_blocks.at(0);
  const std::size_t per = std::max<std::size_t>(1, std::size_t(seconds * ref.rate / bs + 0.5));
  std::vector<Clip> clips;
  for (std::size_t f = 0; f + per <= frames - 1; f += per) {  // the short last frame stays out
    Clip c;
    c.bytes = restream(file, stream, ref, {{f, f + per}});
    c.first_sample = std::uint64_t(f) * bs;
    c.samples = std::uint64_t(per) * bs;
    clips.push_back(std::move(c));
  }
  return clips;
}

// ---------------------------------------------------------------------------------------------
// Options, rows, timing.

struct Options {
  std::string path;
  int repeat = 5;
  std::vector<std::string> backends;
  bool md5_on = true, md5_off = true;
  int device = 0;
  int tile = 1;
  std::size_t clips = 0;     ///< --clips N: also decode N clips cut from the file, as a batch
  double clip_seconds = 30;  ///< --clip-seconds S
  std::size_t ranges = 0;    ///< --ranges N: also cut N random ranges out of the file
  double range_seconds = 5;  ///< --range-seconds S
  std::string devices;       ///< --devices LIST: also decode on these GPUs at once
  std::size_t parts = 0;     ///< --parts N: the file in N parts over them (0: one per device)
  std::string csv;
};

[[noreturn]] void usage(const char* why) {
  if (why && *why) std::fprintf(stderr, "flac_bench: %s\n", why);
  std::fprintf(
      stderr,
      "usage: flac_bench [FILE] [--repeat N] [--backends LIST] [--md5 on|off|both] [--device N] "
      "[--tile N] [--clips N [--clip-seconds S]] [--ranges N [--range-seconds S]] "
      "[--devices all|0,1,.. [--parts N]] [--csv OUT]\n"
      "  LIST: comma-separated from libflac,cpu,cpu-parallel,cuda,cuda-s16,cuda-s16-pinned,"
      "cuda-device,"
      "cuda-device-s16,ffmpeg (--ranges only) (default: all), cuda-device-s16-warp, "
      "cuda-device-s16-thread, cuda-device-s16-plain\n");
  std::exit(2);
}

const std::vector<std::string> kAllBackends = {
    "libflac",         "cpu",         "cpu-parallel",    "cuda",  "cuda-s16",
    "cuda-s16-pinned", "cuda-device", "cuda-device-s16", "ffmpeg"};
// Not in "all": the device-resident decode with the fast path's warp-per-frame parse
// (SIGPU_DECODE_PATH=warp), with its thread parse over the plain residual reader (=thread), and
// with the plain one-thread-per-frame kernel.
const std::vector<std::string> kExtraBackends = {"cuda-device-s16-warp", "cuda-device-s16-thread",
                                                 "cuda-device-s16-plain"};

Options parse_args(int argc, char** argv) {
  Options o;
  std::string backends = "all";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const char* name) -> std::string {
      if (i + 1 >= argc) usage((std::string(name) + " needs a value").c_str());
      return argv[++i];
    };
    if (a == "--repeat") {
      o.repeat = std::atoi(value("--repeat").c_str());
      if (o.repeat < 1) usage("--repeat must be at least 1");
    } else if (a == "--backends") {
      backends = value("--backends");
    } else if (a == "--md5") {
      std::string v = value("--md5");
      if (v == "on")
        o.md5_off = false;
      else if (v == "off")
        o.md5_on = false;
      else if (v != "both")
        usage("--md5 takes on, off or both");
    } else if (a == "--device") {
      o.device = std::atoi(value("--device").c_str());
    } else if (a == "--tile") {
      o.tile = std::atoi(value("--tile").c_str());
      if (o.tile < 1) usage("--tile must be at least 1");
    } else if (a == "--clips") {
      o.clips = std::strtoull(value("--clips").c_str(), nullptr, 10);
    } else if (a == "--clip-seconds") {
      o.clip_seconds = std::atof(value("--clip-seconds").c_str());
      if (!(o.clip_seconds > 0)) usage("--clip-seconds must be positive");
    } else if (a == "--ranges") {
      o.ranges = std::strtoull(value("--ranges").c_str(), nullptr, 10);
    } else if (a == "--devices") {
      o.devices = value("--devices");
    } else if (a == "--parts") {
      o.parts = std::strtoull(value("--parts").c_str(), nullptr, 10);
    } else if (a == "--range-seconds") {
      o.range_seconds = std::atof(value("--range-seconds").c_str());
      if (!(o.range_seconds > 0)) usage("--range-seconds must be positive");
    } else if (a == "--csv") {
      o.csv = value("--csv");
    } else if (a == "-h" || a == "--help") {
      usage("");
    } else if (!a.empty() && a[0] == '-') {
      usage(("unknown option " + a).c_str());
    } else if (o.path.empty()) {
      o.path = a;
    } else {
      usage("one input file only");
    }
  }
  if (o.path.empty()) {  // the corpus file: carried to the GPU machine, or made here
    std::vector<std::string> places;
    if (const char* d = std::getenv("SIGPU_DATA_DIR"))
      places.push_back(std::string(d) + "/bench/music-60s.flac");
    if (const char* c = std::getenv("SIGPU_CACHE"))
      places.push_back(std::string(c) + "/bench/music-60s.flac");
    else if (const char* h = std::getenv("HOME"))
      places.push_back(std::string(h) + "/.cache/sigpu/bench/music-60s.flac");
    for (const auto& p : places)
      if (std::ifstream(p).good()) {
        o.path = p;
        break;
      }
    if (o.path.empty()) {
      std::string where;
      for (const auto& p : places) where += "\n  " + p;
      usage(("no input file given, and no music-60s.flac (scripts/make-bench-corpus) in:" + where)
                .c_str());
    }
  }
  if (o.csv.empty()) {  // scripts/gpu-run collects what benchmarks write there
    if (const char* d = std::getenv("SIGPU_BENCH_OUT")) {
      std::string base = o.path.substr(o.path.find_last_of('/') + 1);
      base = base.substr(0, base.rfind('.'));
      o.csv = std::string(d) + "/flac_bench-" + base +
              (o.tile > 1 ? "-x" + std::to_string(o.tile) : "") + ".csv";
    }
  }
  if (backends == "all") {
    o.backends = kAllBackends;
  } else {
    std::stringstream ss(backends);
    for (std::string b; std::getline(ss, b, ',');) {
      if (std::find(kAllBackends.begin(), kAllBackends.end(), b) == kAllBackends.end() &&
          std::find(kExtraBackends.begin(), kExtraBackends.end(), b) == kExtraBackends.end())
        usage(("unknown backend " + b).c_str());
      o.backends.push_back(b);
    }
  }
  return o;
}

struct Row {
  Row(std::string b, std::string o, bool m) : backend(std::move(b)), output(std::move(o)), md5(m) {}
  const char* md5_label() const { return !md5 ? "off" : md5_skipped ? "skip" : "on"; }
  bool md5_done() const { return md5 && !md5_skipped; }
  std::string backend, output;
  bool md5 = false;
  std::vector<double> seconds;  // timed runs
  bool skipped = false, failed = false;
  bool md5_skipped = false;  // MD5 asked for, the stream has one, and the library did not check it
  std::string note;
  double bound_s = 0;  // time the relevant bound allows, 0 if none
  std::string bound_name;
  // The clip rows: the PCM bytes and audio seconds one timed run decodes (0: the whole file's).
  double pcm_bytes = 0, audio_seconds = 0;
  bool clips = false;
  double median() const {
    auto s = seconds;
    std::sort(s.begin(), s.end());
    std::size_t n = s.size();
    return n == 0 ? 0 : (n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]));
  }
  double min() const {
    return seconds.empty() ? 0 : *std::min_element(seconds.begin(), seconds.end());
  }
  double max() const {
    return seconds.empty() ? 0 : *std::max_element(seconds.begin(), seconds.end());
  }
};

// Runs `once` (warm-up + repeat times), timing each; `check` runs after each, untimed, and
// returns an empty string or what was wrong.
void time_row(Row& row, int repeat, const std::function<double()>& once,
              const std::function<std::string()>& check) {
  for (int i = 0; i <= repeat; ++i) {
    double s = once();
    std::string bad = check();
    if (!bad.empty()) {
      row.failed = true;
      row.note = bad;
      std::fprintf(stderr, "\n!!!!!!!! MISMATCH: %s (%s, md5 %s), run %d: %s !!!!!!!!\n\n",
                   row.backend.c_str(), row.output.c_str(), row.md5_label(), i, bad.c_str());
      return;
    }
    if (i > 0) row.seconds.push_back(s);  // run 0 is the warm-up
  }
}

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// First difference between two int32 sample arrays, as text; empty when equal.
template <typename T>
std::string compare_samples(const T* got, std::size_t got_count, const T* want,
                            std::size_t want_count, std::uint32_t channels) {
  if (got_count != want_count) {
    return "sample count " + std::to_string(got_count) + " (want " + std::to_string(want_count) +
           ")";
  }
  if (std::memcmp(got, want, want_count * sizeof(T)) == 0) return {};
  std::size_t first = 0, diffs = 0;
  for (std::size_t i = 0; i < want_count; ++i) {
    if (got[i] != want[i]) {
      if (diffs++ == 0) first = i;
    }
  }
  return std::to_string(diffs) + " samples differ, first at sample " +
         std::to_string(first / channels) + " channel " + std::to_string(first % channels) +
         ": got " + std::to_string(got[first]) + ", want " + std::to_string(want[first]);
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string line; std::getline(f, line);) {
    if (line.rfind("model name", 0) == 0) {
      auto p = line.find(':');
      if (p != std::string::npos) return line.substr(line.find_first_not_of(" \t", p + 1));
    }
  }
  return "unknown CPU";
}

// What is wrong with a report: damage or an MD5 mismatch. An MD5 asked for but not checked is
// not an error here; it is noted on the row (`md5_skipped`) and timed as an MD5-off run.
std::string report_problem(const flac::DecodeReport& r, Row& row, bool md5_in_stream) {
  if (!r.damage.empty())
    return std::to_string(r.damage.size()) + " damaged frame(s): " + r.damage[0].message();
  if (r.md5 == flac::Md5Check::mismatch)
    return "MD5 mismatch: " + r.md5_computed + " != " + r.md5_expected;
  if (row.md5 && md5_in_stream && r.md5 != flac::Md5Check::match) row.md5_skipped = true;
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  Options opt = parse_args(argc, argv);
  auto want = [&](std::string_view b) {
    return std::find(opt.backends.begin(), opt.backends.end(), b) != opt.backends.end();
  };

  // --- the file, in memory -----------------------------------------------------------------
  std::vector<std::uint8_t> file;
  {
    std::ifstream f(opt.path, std::ios::binary);
    if (!f) {
      std::fprintf(stderr, "flac_bench: cannot open %s\n", opt.path.c_str());
      return 2;
    }
    file.assign(std::istreambuf_iterator<char>(f), {});
  }

  // --- reference: libFLAC with MD5 -----------------------------------------------------------
  LibflacOut ref;
  flac::Stream stream;
  std::string tiled;
  try {
    ref = libflac_decode(file, true, opt.tile > 1 || opt.clips > 0);
    if (opt.tile > 1) {
      file = tile_stream(file, flac::parse_stream(file), ref, opt.tile);
      ref = libflac_decode(file, true, opt.clips > 0);  // checks the new CRCs and MD5 too
      tiled = " (the file's frames repeated " + std::to_string(opt.tile) + " times)";
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "flac_bench: %s: libFLAC: %s\n", opt.path.c_str(), e.what());
    return 1;
  }
  const std::uint32_t ch = ref.channels, bits = ref.bits;
  const std::uint64_t total = ref.samples;
  const std::size_t n_values = total * ch;
  const double duration = static_cast<double>(total) / ref.rate;
  const double pcm_native_bytes = static_cast<double>(n_values) * ((bits + 7) / 8);
  std::vector<std::int16_t> ref_s16;  // what SampleFormat::s16 must give, made when needed
  auto want_s16 = [&]() -> const std::vector<std::int16_t>& {
    if (ref_s16.empty() && n_values) {
      ref_s16.resize(n_values);
      for (std::size_t i = 0; i < n_values; ++i) {
        std::int32_t v = ref.pcm[i];
        ref_s16[i] =
            static_cast<std::int16_t>(bits <= 16 ? v * (1 << (16 - bits)) : v >> (bits - 16));
      }
    }
    return ref_s16;
  };

  try {
    stream = flac::parse_stream(file);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "flac_bench: sigpu cannot parse %s: %s\n", opt.path.c_str(), e.what());
    return 1;
  }
  const bool md5_in_stream = stream.info.md5_set();

  // --- machine -------------------------------------------------------------------------------
  std::printf("machine: %s, %u cores", cpu_model().c_str(), std::thread::hardware_concurrency());
  const bool cuda_built = sigpu::cuda_compiled();
  auto devices = sigpu::cuda_devices();
  std::string gpu_note;
  if (!cuda_built) {
    gpu_note = "this build has no CUDA backend";
  } else if (devices.empty()) {
    gpu_note = "no CUDA device";
  } else {
    const auto* d = &devices[0];
    for (const auto& x : devices)
      if (x.index == opt.device) d = &x;
    std::printf("; GPU %d: %s, %d SMs, sm_%d%d, %.0f GiB", d->index, d->name.c_str(), d->sm_count,
                d->compute_major, d->compute_minor, d->memory_bytes / double(1ull << 30));
  }
  std::printf("; sigpu %s\n", std::string(sigpu::version()).c_str());
  if (!gpu_note.empty()) std::printf("GPU: %s, cuda rows skipped\n", gpu_note.c_str());
  std::printf(
      "file: %s%s: %.1f MB, %u Hz, %u ch, %u bit, %.1f s, %.1f MB of PCM (compressed to %.1f %%), "
      "MD5 %s\n",
      opt.path.c_str(), tiled.c_str(), file.size() / 1e6, ref.rate, ch, bits, duration,
      pcm_native_bytes / 1e6, 100.0 * file.size() / pcm_native_bytes,
      md5_in_stream ? "set" : "not set");

  std::optional<sigpu::bench::Bandwidth> bw;
  const bool cuda_ok = cuda_built && !devices.empty();
  if (cuda_ok) {
    try {
      bw = sigpu::bench::probe_bandwidth(opt.device);
      if (bw) std::printf("bounds: %s\n", bw->summary().c_str());
    } catch (const std::exception& e) {
      std::printf("bounds: bandwidth probe failed: %s\n", e.what());
    }
  }
  std::printf(
      "timing: median / min / max of %d runs after 1 warm-up, whole file memory to memory\n",
      opt.repeat);
  std::fflush(stdout);

  std::vector<Row> rows;
  std::vector<bool> md5s;
  if (opt.md5_on) md5s.push_back(true);
  if (opt.md5_off) md5s.push_back(false);

  // --- libFLAC -------------------------------------------------------------------------------
  if (want("libflac")) {
    for (bool md5 : md5s) {
      Row row{"libFLAC 1 thread", "int32", md5};
      LibflacOut got;
      std::string err;
      time_row(
          row, opt.repeat,
          [&] {
            got = {};
            err.clear();
            auto t0 = Clock::now();
            try {
              got = libflac_decode(file, md5);
            } catch (const std::exception& e) {
              err = e.what();
            }
            return since(t0);
          },
          [&] {
            if (!err.empty()) return err;
            return compare_samples(got.pcm.get(), got.samples * got.channels, ref.pcm.get(),
                                   n_values, ch);
          });
      rows.push_back(std::move(row));
    }
  }

  // --- sigpu cpu, cpu-parallel, cuda host-to-host -------------------------------------------
  auto check_pcm = [&](const flac::Pcm& p, flac::SampleFormat fmt) -> std::string {
    if (p.format != fmt || p.layout != flac::Layout::interleaved)
      return "wrong sample format or layout";
    if (p.channels != ch || p.samples != total)
      return "shape " + std::to_string(p.samples) + "x" + std::to_string(p.channels) + " (want " +
             std::to_string(total) + "x" + std::to_string(ch) + ")";
    if (fmt == flac::SampleFormat::s16) {
      const auto& w = want_s16();
      return compare_samples(p.samples_as<std::int16_t>(), p.bytes.size() / 2, w.data(), w.size(),
                             ch);
    }
    return compare_samples(p.samples_as<std::int32_t>(), p.bytes.size() / 4, ref.pcm.get(),
                           n_values, ch);
  };

  // `into`: the caller's memory the decode writes its PCM to (decode_into), checked after timing.
  auto host_row = [&](const std::string& name, sigpu::Backend backend, flac::SampleFormat fmt,
                      bool md5,
                      const std::function<flac::Decoded(const flac::DecodeOptions&)>& decode,
                      std::span<const std::uint8_t> into = {}) {
    Row row{name, fmt == flac::SampleFormat::s16 ? "s16" : "int32", md5};
    flac::DecodeOptions o;
    o.backend = backend;
    o.format = fmt;
    o.verify_md5 = md5;
    o.device = opt.device;
    flac::Decoded got;
    std::string err;
    time_row(
        row, opt.repeat,
        [&] {
          got = {};
          err.clear();
          auto t0 = Clock::now();
          try {
            got = decode(o);
          } catch (const std::exception& e) {
            err = std::string("threw: ") + e.what();
          }
          return since(t0);
        },
        [&] {
          if (!err.empty()) return err;
          std::string bad = report_problem(got.report, row, md5_in_stream);
          if (!into.empty() && got.pcm.bytes.empty())
            got.pcm.bytes.assign(into.begin(), into.end());
          return bad.empty() ? check_pcm(got.pcm, fmt) : bad;
        });
    return row;
  };

  for (auto [name, backend] :
       {std::pair{"cpu", sigpu::Backend::cpu}, {"cpu-parallel", sigpu::Backend::cpu_parallel}}) {
    if (!want(name)) continue;
    for (bool md5 : md5s) {
      rows.push_back(host_row(std::string("sigpu ") + name, backend, flac::SampleFormat::raw32, md5,
                              [&](const flac::DecodeOptions& o) { return flac::decode(file, o); }));
    }
  }

  const bool any_cuda = want("cuda") || want("cuda-s16") || want("cuda-s16-pinned") ||
                        want("cuda-device") || want("cuda-device-s16") ||
                        std::any_of(kExtraBackends.begin(), kExtraBackends.end(), want);
  if (any_cuda && !cuda_ok) {
    std::printf("note: cuda rows skipped: %s\n", gpu_note.c_str());
  } else if (any_cuda) {
    std::optional<flac::CudaDecoder> gpu;
    try {
      gpu.emplace(opt.device);
    } catch (const std::exception& e) {
      Row row{"sigpu cuda", "-", false};
      row.failed = true;
      row.note = std::string("CudaDecoder construction threw: ") + e.what();
      rows.push_back(row);
    }
    if (gpu) {
      // Host bytes in, host PCM out.
      for (auto [name, fmt] :
           {std::pair{"cuda", flac::SampleFormat::raw32}, {"cuda-s16", flac::SampleFormat::s16}}) {
        if (!want(name)) continue;
        for (bool md5 : md5s) {
          Row row = host_row("sigpu cuda host->host", sigpu::Backend::cuda, fmt, md5,
                             [&](const flac::DecodeOptions& o) { return gpu->decode(file, o); });
          if (bw) {
            double out_bytes = static_cast<double>(n_values) * flac::bytes_per_sample(fmt);
            row.bound_s = file.size() / (bw->h2d_pinned * 1e9) + out_bytes / (bw->d2h_pinned * 1e9);
            row.bound_name = "PCIe";
          }
          rows.push_back(std::move(row));
        }
      }
#ifdef SIGPU_HAVE_CUDA
      // The same with the file and the PCM in pinned memory the caller keeps (decode_into): the
      // copies are DMAs straight between them and the device, as a loader with pinned buffers
      // gets; the pinned PCIe bound applies to this row as it is.
      if (want("cuda-s16-pinned")) {
        const std::size_t out_bytes = n_values * 2;
        void *in = nullptr, *out = nullptr;
        if (cudaMallocHost(&in, file.size()) != cudaSuccess ||
            cudaMallocHost(&out, out_bytes) != cudaSuccess) {
          Row row{"sigpu cuda pinned->pinned", "s16", false};
          row.failed = true;
          row.note = "cannot allocate pinned buffers";
          rows.push_back(row);
        } else {
          std::memcpy(in, file.data(), file.size());
          const std::span pin_in(static_cast<const std::uint8_t*>(in), file.size());
          const std::span pin_out(static_cast<std::uint8_t*>(out), out_bytes);
          // The file whole, and cut into parts on streams of their own (the default is 2).
          const std::size_t default_parts = flac::pinned_parts();
          for (std::size_t parts : {std::size_t{1}, std::size_t{2}, std::size_t{4}, std::size_t{8}})
            for (bool md5 : md5s) {
              flac::set_pinned_parts(parts);
              Row row = host_row(
                  "sigpu cuda pinned->pinned, " + std::to_string(parts) + " part" +
                      (parts > 1 ? "s" : ""),
                  sigpu::Backend::cuda, flac::SampleFormat::s16, md5,
                  [&](const flac::DecodeOptions& o) {
                    return gpu->decode_into(pin_in, pin_out, o);
                  },
                  pin_out);
              if (bw) {
                row.bound_s = file.size() / (bw->h2d_pinned * 1e9) +
                              double(out_bytes) / (bw->d2h_pinned * 1e9);
                row.bound_name = "PCIe";
              }
              rows.push_back(std::move(row));
            }
          flac::set_pinned_parts(default_parts);
        }
        cudaFreeHost(in);
        cudaFreeHost(out);
      }
#endif
      // Several GPUs at once (DecodeOptions::devices): the file cut at frame starts into one
      // part per device (or --parts), the parts decoded concurrently, the PCM joined on the host.
      if (!opt.devices.empty()) {
        std::vector<int> devices;
        try {
          devices = flac::parse_devices(opt.devices);
        } catch (const std::exception& e) {
          Row row{"sigpu cuda --devices", "-", false};
          row.failed = true;
          row.note = e.what();
          rows.push_back(row);
        }
        for (auto [name, fmt] : {std::pair{"cuda", flac::SampleFormat::raw32},
                                 {"cuda-s16", flac::SampleFormat::s16}}) {
          if (devices.empty() || !want(name)) continue;
          const std::size_t parts = opt.parts ? opt.parts : devices.size();
          for (bool md5 : md5s) {
            Row row = host_row("sigpu cuda " + std::to_string(devices.size()) + " GPU " +
                                   std::to_string(parts) + " parts",
                               sigpu::Backend::cuda, fmt, md5, [&](flac::DecodeOptions o) {
                                 o.devices = devices;
                                 o.parts = opt.parts;
                                 return flac::decode(file, o);
                               });
            if (bw) {  // each device has its own link
              double out_bytes = static_cast<double>(n_values) * flac::bytes_per_sample(fmt);
              row.bound_s =
                  (file.size() / (bw->h2d_pinned * 1e9) + out_bytes / (bw->d2h_pinned * 1e9)) /
                  static_cast<double>(devices.size());
              row.bound_name = "PCIe";
            }
            rows.push_back(std::move(row));
          }
        }
      }
#ifdef SIGPU_HAVE_CUDA
      // Compressed bytes already in device memory, PCM left there.
      if (want("cuda-device") || want("cuda-device-s16") ||
          std::any_of(kExtraBackends.begin(), kExtraBackends.end(), want)) {
        void* d_file = nullptr;
        std::size_t padded = (file.size() + 3) / 4 * 4 + 64;
        cudaError_t e = cudaMalloc(&d_file, padded);
        if (e == cudaSuccess) e = cudaMemset(d_file, 0, padded);
        if (e == cudaSuccess)
          e = cudaMemcpy(d_file, file.data(), file.size(), cudaMemcpyHostToDevice);
        if (e != cudaSuccess) {
          Row row{"sigpu cuda device", "-", false};
          row.failed = true;
          row.note =
              std::string("cannot stage the file in device memory: ") + cudaGetErrorString(e);
          rows.push_back(row);
        } else {
          for (auto [name, fmt, path] :
               {std::tuple{"cuda-device", flac::SampleFormat::raw32, DecodePath::fast_flat},
                {"cuda-device-s16", flac::SampleFormat::s16, DecodePath::fast_flat},
                {"cuda-device-s16-warp", flac::SampleFormat::s16, DecodePath::fast_warp_parse},
                {"cuda-device-s16-thread", flac::SampleFormat::s16, DecodePath::fast},
                {"cuda-device-s16-plain", flac::SampleFormat::s16, DecodePath::plain}}) {
            if (!want(name)) continue;
            flac::cuda::set_decode_path(path);
            for (bool md5 : md5s) {
              Row row{path == DecodePath::fast_flat         ? "sigpu cuda device"
                      : path == DecodePath::fast_warp_parse ? "sigpu cuda device warp-parse"
                      : path == DecodePath::fast            ? "sigpu cuda device thread-parse"
                                                            : "sigpu cuda device plain",
                      fmt == flac::SampleFormat::s16 ? "s16" : "int32", md5};
              flac::DecodeOptions o;
              o.backend = sigpu::Backend::cuda;
              o.format = fmt;
              o.verify_md5 = md5;
              o.device = opt.device;
              std::optional<flac::DevicePcm> got;
              flac::DecodeReport report;
              std::string err;
              time_row(
                  row, opt.repeat,
                  [&] {
                    got.reset();  // frees the previous run's PCM outside the timed span
                    report = {};
                    err.clear();
                    auto t0 = Clock::now();
                    try {
                      got = gpu->decode_device(static_cast<const std::uint8_t*>(d_file),
                                               file.size(), stream, o, report);
                      cudaError_t s = cudaDeviceSynchronize();  // in case work is still queued
                      if (s != cudaSuccess) err = std::string("CUDA: ") + cudaGetErrorString(s);
                    } catch (const std::exception& ex) {
                      err = std::string("threw: ") + ex.what();
                    }
                    return since(t0);
                  },
                  [&]() -> std::string {
                    if (!err.empty()) return err;
                    std::string bad = report_problem(report, row, md5_in_stream);
                    if (!bad.empty()) return bad;
                    const flac::DevicePcm& p = *got;
                    if (p.format != fmt || p.layout != flac::Layout::interleaved)
                      return "wrong sample format or layout";
                    if (p.channels != ch || p.samples != total) return "wrong shape";
                    flac::Pcm host;
                    host.format = p.format;
                    host.layout = p.layout;
                    host.channels = p.channels;
                    host.samples = p.samples;
                    host.bytes.resize(p.size_bytes);
                    cudaError_t s =
                        cudaMemcpy(host.bytes.data(), p.data, p.size_bytes, cudaMemcpyDeviceToHost);
                    if (s != cudaSuccess)
                      return std::string("copying the PCM back: ") + cudaGetErrorString(s);
                    return check_pcm(host, fmt);
                  });
              if (bw) {
                double out_bytes = static_cast<double>(n_values) * flac::bytes_per_sample(fmt);
                row.bound_s = (file.size() + out_bytes) / (bw->d2d * 1e9);
                row.bound_name = "HBM";
              }
              rows.push_back(std::move(row));
            }
          }
          flac::cuda::set_decode_path(DecodePath::automatic);
          cudaFree(d_file);
        }
      }
#endif
    }
  }

  // --- clips: many short files, one at a time and as a batch --------------------------------
  // The file cut into clips of --clip-seconds (each a complete FLAC file); the batch is --clips
  // of them, the distinct clips repeated in order. Output s16 (what a training loader wants),
  // MD5 off. libFLAC and cpu-parallel decode the distinct clips once per run; the GPU rows decode
  // them one call per clip, and the whole batch through decode_batch in calls of kBatchFiles.
  if (opt.clips > 0) {
    std::vector<Clip> clips;
    try {
      clips = cut_clips(file, stream, ref, opt.clip_seconds);
    } catch (const std::exception& e) {
      std::printf("clips: cannot cut the file: %s\n", e.what());
    }
    const std::size_t distinct = std::min(clips.size(), opt.clips);
    clips.resize(distinct);
    double clip_bytes = 0, clip_pcm = 0, clip_audio = 0;
    for (const auto& c : clips) {
      clip_bytes += double(c.bytes.size());
      clip_pcm += double(c.samples) * ch * ((bits + 7) / 8);
      clip_audio += double(c.samples) / ref.rate;
    }
    if (distinct)
      std::printf(
          "clips: %zu distinct clips of %.1f s (%.1f MB compressed in all); the batch is "
          "%zu clips\n",
          distinct, clip_audio / distinct, clip_bytes / 1e6, opt.clips);
    const auto& want16 = want_s16();
    // Which clip's PCM each output must equal: its slice of the file's, as s16.
    auto check_clip = [&](std::size_t c, const flac::Decoded& d) -> std::string {
      const Clip& clip = clips[c % distinct];
      if (!d.report.damage.empty()) return "clip " + std::to_string(c) + ": damage reported";
      if (d.pcm.samples != clip.samples || d.pcm.channels != ch)
        return "clip " + std::to_string(c) + ": wrong shape";
      const std::size_t n = clip.samples * ch;
      if (std::memcmp(d.pcm.bytes.data(), want16.data() + clip.first_sample * ch, 2 * n) != 0)
        return "clip " + std::to_string(c) + ": PCM differs from libFLAC's";
      return {};
    };
    auto clip_row = [&](const std::string& name, std::size_t count) {
      Row row{name, "s16", false};
      row.clips = true;
      const double reps = double(count) / double(distinct);
      row.pcm_bytes = clip_pcm * reps;
      row.audio_seconds = clip_audio * reps;
      if (bw) {
        row.bound_s = clip_bytes * reps / (bw->h2d_pinned * 1e9) +
                      clip_audio * reps * ref.rate * ch * 2 / (bw->d2h_pinned * 1e9);
        row.bound_name = "PCIe";
      }
      return row;
    };
    if (distinct && want("libflac")) {
      Row row = clip_row("libFLAC 1 thread clips", distinct);
      row.bound_s = 0;
      std::string err;
      time_row(
          row, opt.repeat,
          [&] {
            err.clear();
            auto t0 = Clock::now();
            try {
              for (const auto& c : clips) libflac_decode(c.bytes, false);
            } catch (const std::exception& e) {
              err = e.what();
            }
            return since(t0);
          },
          [&] { return err; });
      rows.push_back(std::move(row));
    }
    flac::DecodeOptions o16;
    o16.format = flac::SampleFormat::s16;
    o16.verify_md5 = false;
    o16.device = opt.device;
    auto batch_row = [&](const std::string& name, std::size_t count, std::size_t per_call,
                         const std::function<std::vector<flac::BatchResult>(
                             std::span<const std::span<const std::uint8_t>>)>& decode) {
      Row row = clip_row(name, count);
      std::string err;
      std::vector<std::span<const std::uint8_t>> spans;
      for (std::size_t c = 0; c < count; ++c) spans.emplace_back(clips[c % distinct].bytes);
      std::vector<flac::BatchResult> got;
      time_row(
          row, opt.repeat,
          [&] {
            err.clear();
            double seconds = 0;
            for (std::size_t at = 0; at < count && err.empty(); at += per_call) {
              const std::size_t n = std::min(per_call, count - at);
              got.clear();  // frees the previous call's PCM outside the timed span
              auto t0 = Clock::now();
              try {
                got = decode({spans.data() + at, n});
              } catch (const std::exception& e) {
                err = std::string("threw: ") + e.what();
              }
              seconds += since(t0);
              for (std::size_t k = 0; k < got.size() && err.empty(); ++k) {
                if (!got[k].error.empty())
                  err = "clip " + std::to_string(at + k) + ": " + got[k].error;
                else
                  err = check_clip(at + k, got[k].decoded);
              }
            }
            return seconds;
          },
          [&] { return err; });
      rows.push_back(std::move(row));
    };
    if (distinct && want("cpu-parallel"))
      batch_row("sigpu cpu-parallel batch", distinct, distinct, [&](auto files) {
        flac::DecodeOptions o = o16;
        o.backend = sigpu::Backend::cpu_parallel;
        return flac::decode_batch(files, o);
      });
    if (distinct && cuda_ok && (want("cuda") || want("cuda-s16"))) {
      flac::CudaDecoder gpu(opt.device);
      batch_row("sigpu cuda clip by clip", distinct, 1, [&](auto files) {
        std::vector<flac::BatchResult> r(1);
        r[0].decoded = gpu.decode(files[0], o16);
        return r;
      });
      constexpr std::size_t kBatchFiles = 500;
      batch_row("sigpu cuda batch", opt.clips, kBatchFiles,
                [&](auto files) { return gpu.decode_batch(files, o16); });
    }
  }

  // --- ranges: clips cut out of the file without decoding the rest ----------------------------
  if (opt.ranges > 0 && total > 0) {
    const auto len = static_cast<std::uint64_t>(opt.range_seconds * ref.rate);
    std::vector<flac::SampleRange> ranges;
    std::uint64_t seed = 12345;
    for (std::size_t i = 0; i < opt.ranges; ++i) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      ranges.push_back({(seed >> 17) % (total > len ? total - len : 1), len});
    }
    const flac::SampleRange middle{total / 2, len};
    const auto& want16 = want_s16();
    auto check_range = [&](const flac::SampleRange& r, const flac::Decoded& d) -> std::string {
      const std::uint64_t n = std::min(r.count, total - r.first);
      if (d.pcm.samples != n || d.pcm.channels != ch) return "range: wrong shape";
      if (std::memcmp(d.pcm.bytes.data(), want16.data() + r.first * ch, 2 * n * ch) != 0)
        return "range at " + std::to_string(r.first) + ": PCM differs from libFLAC's";
      return {};
    };
    auto range_row = [&](const std::string& name, std::size_t count) {
      Row row{name, "s16", false};
      row.clips = true;
      row.pcm_bytes = double(count) * double(len) * ch * 2;
      row.audio_seconds = double(count) * double(len) / ref.rate;
      return row;
    };
    // The peers: a seeker (demuxer and decoder) opened once for the N ranges, as a loader keeps
    // it; for the single range its opening counts, as a loader asked for one clip does it.
    auto seek_rows = [&](const std::string& who, const auto& open) {
      auto check_cut = [&](const flac::SampleRange& r,
                           const std::vector<std::int16_t>& got) -> std::string {
        const std::uint64_t n = std::min(r.count, total - r.first);
        if (got.size() != n * ch ||
            std::memcmp(got.data(), want16.data() + r.first * ch, 2 * n * ch) != 0)
          return who + " seek to " + std::to_string(r.first) + ": samples differ from libFLAC's";
        return {};
      };
      Row one = range_row(who + " seek 1 range", 1);
      std::string err;
      time_row(
          one, opt.repeat,
          [&] {
            err.clear();
            auto t0 = Clock::now();
            try {
              auto seeker = open();
              err = check_cut(middle, seeker->cut(middle.first, middle.count));
            } catch (const std::exception& e) {
              err = e.what();
            }
            return since(t0);
          },
          [&] { return err; });
      rows.push_back(std::move(one));
      Row many = range_row(who + " seek " + std::to_string(opt.ranges) + " ranges", opt.ranges);
      time_row(
          many, opt.repeat,
          [&] {
            err.clear();
            double t = 0;
            try {
              auto seeker = open();
              for (const auto& r : ranges) {
                auto t0 = Clock::now();
                const auto& got = seeker->cut(r.first, r.count);
                t += since(t0);
                if (err.empty()) err = check_cut(r, got);
              }
            } catch (const std::exception& e) {
              err = e.what();
            }
            return t;
          },
          [&] { return err; });
      rows.push_back(std::move(many));
    };
    if (want("libflac"))
      seek_rows("libFLAC", [&] { return std::make_unique<LibflacSeeker>(file, bits, ch); });
    if (want("ffmpeg")) {
#ifdef SIGPU_FLAC_BENCH_LIBAV
      const bool has_flac = avcodec_find_decoder(AV_CODEC_ID_FLAC) && av_find_input_format("flac");
      const char* missing =
          has_flac ? nullptr
                   : "the FFmpeg linked has no flac decoder or demuxer (a static build without "
                     "them: scripts/build-static-ffmpeg)";
#else
      const char* missing = "this build has no FFmpeg libraries (libavformat, libavcodec)";
#endif
      if (missing) {
        Row row{"FFmpeg seek", "s16", false};
        row.skipped = true;
        row.note = missing;
        rows.push_back(std::move(row));
      } else {
#ifdef SIGPU_FLAC_BENCH_LIBAV
        seek_rows("FFmpeg", [&] { return std::make_unique<FfmpegSeeker>(file); });
#endif
      }
    }
    for (auto [name, backend] : {std::pair{"cpu", sigpu::Backend::cpu},
                                 {"cpu-parallel", sigpu::Backend::cpu_parallel},
                                 {"cuda", sigpu::Backend::cuda}}) {
      if (!want(name) && !(backend == sigpu::Backend::cuda && want("cuda-s16"))) continue;
      if (backend == sigpu::Backend::cuda && !cuda_ok) continue;
      flac::DecodeOptions o;
      o.backend = backend;
      o.format = flac::SampleFormat::s16;
      o.device = opt.device;
      {
        Row row = range_row(std::string("sigpu ") + name + " 1 range", 1);
        flac::Decoded got;
        std::string err;
        time_row(
            row, opt.repeat,
            [&] {
              err.clear();
              auto t0 = Clock::now();
              try {
                got = flac::decode_range(file, middle, o);
              } catch (const std::exception& e) {
                err = std::string("threw: ") + e.what();
              }
              return since(t0);
            },
            [&] { return err.empty() ? check_range(middle, got) : err; });
        rows.push_back(std::move(row));
      }
      Row row = range_row(
          std::string("sigpu ") + name + " " + std::to_string(opt.ranges) + " ranges", opt.ranges);
      std::vector<flac::BatchResult> got;
      std::string err;
      time_row(
          row, opt.repeat,
          [&] {
            err.clear();
            got.clear();
            auto t0 = Clock::now();
            try {
              got = flac::decode_ranges(file, ranges, o);
            } catch (const std::exception& e) {
              err = std::string("threw: ") + e.what();
            }
            return since(t0);
          },
          [&]() -> std::string {
            if (!err.empty()) return err;
            for (std::size_t i = 0; i < got.size(); ++i) {
              if (!got[i].error.empty()) return got[i].error;
              std::string bad = check_range(ranges[i], got[i].decoded);
              if (!bad.empty()) return bad;
            }
            return {};
          });
      rows.push_back(std::move(row));
    }
  }

  // --- table ---------------------------------------------------------------------------------
  auto pcm_of = [&](const Row& r) { return r.pcm_bytes > 0 ? r.pcm_bytes : pcm_native_bytes; };
  auto audio_of = [&](const Row& r) { return r.audio_seconds > 0 ? r.audio_seconds : duration; };
  // libFLAC's median time scaled to this row's amount of PCM (same MD5 setting, same group).
  auto libflac_median = [&](const Row& row) -> double {
    const bool md5 = row.md5_done();
    const Row* best = nullptr;
    for (const auto& r : rows)
      if (r.backend.rfind("libFLAC", 0) == 0 && r.clips == row.clips && !r.seconds.empty() &&
          (!best || r.md5 == md5))
        best = &r;
    return best ? best->median() * pcm_of(row) / pcm_of(*best) : 0;
  };
  std::printf("\n%-26s %-6s %-4s %9s %9s %9s %9s %9s %9s %12s\n", "backend", "output", "md5",
              "median s", "min s", "max s", "MB/s PCM", "x rt", "x libFLAC", "of bound");
  bool failed = false;
  for (const auto& r : rows) {
    if (r.failed || r.seconds.empty()) {
      failed = failed || r.failed;
      std::printf("%-26s %-6s %-4s %s: %s\n", r.backend.c_str(), r.output.c_str(), r.md5_label(),
                  r.failed ? "FAILED" : "skipped", r.note.c_str());
      continue;
    }
    double med = r.median();
    double lf = libflac_median(r);
    char ratio[32] = "-", bound[32] = "-";
    if (lf > 0) std::snprintf(ratio, sizeof ratio, "%.2f", lf / med);
    if (r.bound_s > 0) {
      double pct = 100.0 * r.bound_s / med;
      std::snprintf(bound, sizeof bound, pct < 10 ? "%.1f %% %s" : "%.0f %% %s", pct,
                    r.bound_name.c_str());
    }
    std::printf("%-26s %-6s %-4s %9.4f %9.4f %9.4f %9.0f %9.0f %9s %12s\n", r.backend.c_str(),
                r.output.c_str(), r.md5_label(), med, r.min(), r.max(), pcm_of(r) / med / 1e6,
                audio_of(r) / med, ratio, bound);
  }
  std::printf(
      "MB/s PCM counts %u-bit samples as %u bytes; x libFLAC is libFLAC's median time (same MD5 "
      "setting) / "
      "this row's; of bound: the time PCIe (pinned) or HBM copies of the bytes in and out would "
      "take, "
      "as a share of this row's\n",
      bits, (bits + 7) / 8);
  for (const auto& r : rows)
    if (r.md5_skipped)
      std::printf(
          "note: %s %s: MD5 asked for (verify_md5) but the decoder did not check it (md5 "
          "\"skip\"); "
          "compared with libFLAC without MD5\n",
          r.backend.c_str(), r.output.c_str());
  if (bw) {  // CudaDecoder::decode takes and returns ordinary (pageable) host memory
    for (auto fmt : {flac::SampleFormat::raw32, flac::SampleFormat::s16}) {
      double out_bytes = static_cast<double>(n_values) * flac::bytes_per_sample(fmt);
      std::printf("PCIe time for %.0f MB in + %.0f MB out (%s): %.4f s pinned, %.4f s pageable\n",
                  file.size() / 1e6, out_bytes / 1e6,
                  fmt == flac::SampleFormat::s16 ? "s16" : "int32",
                  file.size() / (bw->h2d_pinned * 1e9) + out_bytes / (bw->d2h_pinned * 1e9),
                  file.size() / (bw->h2d_pageable * 1e9) + out_bytes / (bw->d2h_pageable * 1e9));
    }
  }
  std::printf("correctness: %s\n", failed ? "MISMATCH OR FAILURE (see above)"
                                          : "every timed run matched libFLAC's PCM bit for bit");

  if (!opt.csv.empty()) {
    std::ofstream csv(opt.csv);
    csv << "file,backend,output,md5,median_s,min_s,max_s,mb_s_pcm,x_realtime,x_libflac,bound,"
           "fraction_of_bound,status\n";
    for (const auto& r : rows) {
      double med = r.median();
      double lf = libflac_median(r);
      csv << opt.path << (opt.tile > 1 ? " x" + std::to_string(opt.tile) : "") << ',' << r.backend
          << ',' << r.output << ',' << r.md5_label() << ',';
      if (r.seconds.empty()) {
        csv << ",,,,,,,," << (r.failed ? "failed" : "skipped") << '\n';
        continue;
      }
      csv << med << ',' << r.min() << ',' << r.max() << ',' << pcm_of(r) / med / 1e6 << ','
          << audio_of(r) / med << ',' << (lf > 0 ? lf / med : 0) << ',' << r.bound_name << ','
          << (r.bound_s > 0 ? r.bound_s / med : 0) << ",ok\n";
    }
  }
  return failed ? 1 : 0;
}
