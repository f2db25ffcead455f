#ifdef SIGPU_HAVE_LIBFLAC

#include "libflac_codec.hpp"

#include <FLAC/stream_decoder.h>
#include <FLAC/stream_encoder.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>

#include <sigpu/core.hpp>

namespace sigpu::cli {
namespace {

/// The encoder seeks back to rewrite STREAMINFO (MD5, frame sizes) when it finishes.
struct MemorySink {
  std::vector<std::uint8_t> bytes;
  std::size_t pos = 0;
};

FLAC__StreamEncoderWriteStatus write_cb(const FLAC__StreamEncoder*, const FLAC__byte buffer[],
                                        size_t n, unsigned, unsigned, void* data) {
  auto& s = *static_cast<MemorySink*>(data);
  if (s.pos + n > s.bytes.size()) s.bytes.resize(s.pos + n);
  std::memcpy(s.bytes.data() + s.pos, buffer, n);
  s.pos += n;
  return FLAC__STREAM_ENCODER_WRITE_STATUS_OK;
}

FLAC__StreamEncoderSeekStatus seek_cb(const FLAC__StreamEncoder*, FLAC__uint64 to, void* data) {
  static_cast<MemorySink*>(data)->pos = to;
  return FLAC__STREAM_ENCODER_SEEK_STATUS_OK;
}

FLAC__StreamEncoderTellStatus tell_cb(const FLAC__StreamEncoder*, FLAC__uint64* at, void* data) {
  *at = static_cast<MemorySink*>(data)->pos;
  return FLAC__STREAM_ENCODER_TELL_STATUS_OK;
}

struct MemorySource {
  std::span<const std::uint8_t> file;
  std::size_t pos = 0;
  unsigned channels = 0;
  LibflacDecoded out;
  std::string error;
};

FLAC__StreamDecoderReadStatus read_cb(const FLAC__StreamDecoder*, FLAC__byte buffer[], size_t* n,
                                      void* data) {
  auto& s = *static_cast<MemorySource*>(data);
  const std::size_t k = std::min(*n, s.file.size() - s.pos);
  std::memcpy(buffer, s.file.data() + s.pos, k);
  s.pos += k;
  *n = k;
  return k ? FLAC__STREAM_DECODER_READ_STATUS_CONTINUE
           : FLAC__STREAM_DECODER_READ_STATUS_END_OF_STREAM;
}

FLAC__StreamDecoderWriteStatus decode_write_cb(const FLAC__StreamDecoder*, const FLAC__Frame* f,
                                               const FLAC__int32* const planes[], void* data) {
  auto& out = static_cast<MemorySource*>(data)->out.samples;
  const unsigned ch = f->header.channels;
  const std::size_t at = out.size();
  out.resize(at + std::size_t(f->header.blocksize) * ch);
  for (unsigned i = 0; i < f->header.blocksize; ++i)
    for (unsigned c = 0; c < ch; ++c) out[at + std::size_t(i) * ch + c] = planes[c][i];
  return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE;
}

void error_cb(const FLAC__StreamDecoder*, FLAC__StreamDecoderErrorStatus status, void* data) {
  auto& s = *static_cast<MemorySource*>(data);
  if (s.error.empty()) s.error = FLAC__StreamDecoderErrorStatusString[status];
}

}  // namespace

std::vector<std::uint8_t> libflac_encode(std::span<const std::int32_t> interleaved,
                                         unsigned channels, unsigned bits, unsigned sample_rate,
                                         unsigned level) {
  std::unique_ptr<FLAC__StreamEncoder, decltype(&FLAC__stream_encoder_delete)> enc(
      FLAC__stream_encoder_new(), &FLAC__stream_encoder_delete);
  if (!enc) throw Error("libFLAC: cannot create an encoder");
  const std::size_t frames = interleaved.size() / channels;
  bool ok = FLAC__stream_encoder_set_channels(enc.get(), channels) &&
            FLAC__stream_encoder_set_bits_per_sample(enc.get(), bits) &&
            FLAC__stream_encoder_set_sample_rate(enc.get(), sample_rate) &&
            FLAC__stream_encoder_set_compression_level(enc.get(), level) &&
            FLAC__stream_encoder_set_total_samples_estimate(enc.get(), frames);
  MemorySink sink;
  ok = ok && FLAC__stream_encoder_init_stream(enc.get(), write_cb, seek_cb, tell_cb, nullptr,
                                              &sink) == FLAC__STREAM_ENCODER_INIT_STATUS_OK;
  ok = ok && FLAC__stream_encoder_process_interleaved(enc.get(), interleaved.data(), frames);
  ok = ok && FLAC__stream_encoder_finish(enc.get());
  if (!ok)
    throw Error(std::string("libFLAC encoder: ") +
                FLAC__stream_encoder_get_resolved_state_string(enc.get()));
  return std::move(sink.bytes);
}

LibflacDecoded libflac_decode(std::span<const std::uint8_t> file, std::size_t expected_samples) {
  std::unique_ptr<FLAC__StreamDecoder, decltype(&FLAC__stream_decoder_delete)> dec(
      FLAC__stream_decoder_new(), &FLAC__stream_decoder_delete);
  if (!dec) throw Error("libFLAC: cannot create a decoder");
  MemorySource src;
  src.file = file;
  src.out.samples.reserve(expected_samples);
  FLAC__stream_decoder_set_md5_checking(dec.get(), true);
  if (FLAC__stream_decoder_init_stream(dec.get(), read_cb, nullptr, nullptr, nullptr, nullptr,
                                       decode_write_cb, nullptr, error_cb,
                                       &src) != FLAC__STREAM_DECODER_INIT_STATUS_OK)
    throw Error("libFLAC: cannot start the decoder");
  const bool ok = FLAC__stream_decoder_process_until_end_of_stream(dec.get());
  src.out.md5_ok = FLAC__stream_decoder_finish(dec.get());
  if (!ok || !src.error.empty())
    throw Error("libFLAC decoder: " + (src.error.empty() ? std::string("failed") : src.error));
  return std::move(src.out);
}

}  // namespace sigpu::cli

#endif  // SIGPU_HAVE_LIBFLAC
