#include "support/libflac_oracle.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#if defined(SIGPU_HAVE_LIBFLAC)
#include <FLAC/stream_decoder.h>
#include <FLAC/stream_encoder.h>

// Exported by libFLAC but declared only in its protected header (the flac tool declares
// them the same way for --no-md5-sum and its testing switches).
extern "C" {
FLAC_API FLAC__bool FLAC__stream_encoder_set_do_md5(FLAC__StreamEncoder* encoder, FLAC__bool value);
FLAC_API FLAC__bool FLAC__stream_encoder_disable_constant_subframes(FLAC__StreamEncoder* encoder,
                                                                    FLAC__bool value);
FLAC_API FLAC__bool FLAC__stream_encoder_disable_fixed_subframes(FLAC__StreamEncoder* encoder,
                                                                 FLAC__bool value);
FLAC_API FLAC__bool FLAC__stream_encoder_disable_verbatim_subframes(FLAC__StreamEncoder* encoder,
                                                                    FLAC__bool value);
}
#endif

namespace sigpu::test {

#if !defined(SIGPU_HAVE_LIBFLAC)

bool libflac_available() {
  return false;
}
OracleDecoded decode_with_libflac(std::span<const std::uint8_t>) {
  throw std::runtime_error("libflac_oracle: built without libFLAC (SIGPU_HAVE_LIBFLAC undefined)");
}
std::vector<std::uint8_t> encode_with_libflac(std::span<const std::int32_t>, unsigned, unsigned,
                                              unsigned, const LibflacEncoderOptions&) {
  throw std::runtime_error("libflac_oracle: built without libFLAC (SIGPU_HAVE_LIBFLAC undefined)");
}

#else

bool libflac_available() {
  return true;
}

namespace {

struct DecodeState {
  std::span<const std::uint8_t> in;
  std::size_t pos = 0;
  OracleDecoded out;
  bool md5_in_streaminfo = false;
};

FLAC__StreamDecoderReadStatus read_cb(const FLAC__StreamDecoder*, FLAC__byte buffer[],
                                      size_t* bytes, void* cd) {
  auto& s = *static_cast<DecodeState*>(cd);
  if (s.pos >= s.in.size()) {
    *bytes = 0;
    return FLAC__STREAM_DECODER_READ_STATUS_END_OF_STREAM;
  }
  std::size_t n = std::min(*bytes, s.in.size() - s.pos);
  std::memcpy(buffer, s.in.data() + s.pos, n);
  s.pos += n;
  *bytes = n;
  return FLAC__STREAM_DECODER_READ_STATUS_CONTINUE;
}

FLAC__StreamDecoderSeekStatus seek_cb(const FLAC__StreamDecoder*, FLAC__uint64 off, void* cd) {
  auto& s = *static_cast<DecodeState*>(cd);
  if (off > s.in.size()) return FLAC__STREAM_DECODER_SEEK_STATUS_ERROR;
  s.pos = static_cast<std::size_t>(off);
  return FLAC__STREAM_DECODER_SEEK_STATUS_OK;
}

FLAC__StreamDecoderTellStatus tell_cb(const FLAC__StreamDecoder*, FLAC__uint64* off, void* cd) {
  *off = static_cast<DecodeState*>(cd)->pos;
  return FLAC__STREAM_DECODER_TELL_STATUS_OK;
}

FLAC__StreamDecoderLengthStatus length_cb(const FLAC__StreamDecoder*, FLAC__uint64* len, void* cd) {
  *len = static_cast<DecodeState*>(cd)->in.size();
  return FLAC__STREAM_DECODER_LENGTH_STATUS_OK;
}

FLAC__bool eof_cb(const FLAC__StreamDecoder*, void* cd) {
  auto& s = *static_cast<DecodeState*>(cd);
  return s.pos >= s.in.size();
}

FLAC__StreamDecoderWriteStatus write_cb(const FLAC__StreamDecoder*, const FLAC__Frame* frame,
                                        const FLAC__int32* const buffer[], void* cd) {
  auto& o = static_cast<DecodeState*>(cd)->out;
  const unsigned bs = frame->header.blocksize, nch = frame->header.channels;
  if (o.channels == 0) o.channels = nch;  // stream without STREAMINFO
  if (o.sample_rate == 0) o.sample_rate = frame->header.sample_rate;
  if (o.bits_per_sample == 0) o.bits_per_sample = frame->header.bits_per_sample;
  if (nch != o.channels) {
    o.errors.push_back("frame " + std::to_string(o.frames) + " has " + std::to_string(nch) +
                       " channels, STREAMINFO " + std::to_string(o.channels));
    return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT;
  }
  o.min_block = o.frames == 0 ? bs : std::min(o.min_block, bs);
  o.max_block = std::max(o.max_block, bs);
  ++o.frames;
  const std::size_t base = o.samples.size();
  o.samples.resize(base + std::size_t(bs) * nch);
  for (unsigned i = 0; i < bs; ++i)
    for (unsigned c = 0; c < nch; ++c) o.samples[base + std::size_t(i) * nch + c] = buffer[c][i];
  o.decoded_samples += bs;
  return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE;
}

void metadata_cb(const FLAC__StreamDecoder*, const FLAC__StreamMetadata* m, void* cd) {
  auto& s = *static_cast<DecodeState*>(cd);
  if (m->type != FLAC__METADATA_TYPE_STREAMINFO) return;
  const auto& si = m->data.stream_info;
  s.out.sample_rate = si.sample_rate;
  s.out.channels = si.channels;
  s.out.bits_per_sample = si.bits_per_sample;
  s.out.total_samples = si.total_samples;
  s.md5_in_streaminfo =
      std::any_of(std::begin(si.md5sum), std::end(si.md5sum), [](auto b) { return b != 0; });
}

void error_cb(const FLAC__StreamDecoder*, FLAC__StreamDecoderErrorStatus status, void* cd) {
  auto& o = static_cast<DecodeState*>(cd)->out;
  o.errors.push_back(std::string("libFLAC: ") + FLAC__StreamDecoderErrorStatusString[status] +
                     " after frame " + std::to_string(o.frames));
}

struct EncodeState {
  std::vector<std::uint8_t> out;
  std::size_t pos = 0;
};

FLAC__StreamEncoderWriteStatus enc_write_cb(const FLAC__StreamEncoder*, const FLAC__byte buffer[],
                                            size_t bytes, uint32_t, uint32_t, void* cd) {
  auto& s = *static_cast<EncodeState*>(cd);
  if (s.pos + bytes > s.out.size()) s.out.resize(s.pos + bytes);
  std::memcpy(s.out.data() + s.pos, buffer, bytes);
  s.pos += bytes;
  return FLAC__STREAM_ENCODER_WRITE_STATUS_OK;
}

FLAC__StreamEncoderSeekStatus enc_seek_cb(const FLAC__StreamEncoder*, FLAC__uint64 off, void* cd) {
  auto& s = *static_cast<EncodeState*>(cd);
  if (off > s.out.size()) return FLAC__STREAM_ENCODER_SEEK_STATUS_ERROR;
  s.pos = static_cast<std::size_t>(off);
  return FLAC__STREAM_ENCODER_SEEK_STATUS_OK;
}

FLAC__StreamEncoderTellStatus enc_tell_cb(const FLAC__StreamEncoder*, FLAC__uint64* off, void* cd) {
  *off = static_cast<EncodeState*>(cd)->pos;
  return FLAC__STREAM_ENCODER_TELL_STATUS_OK;
}

}  // namespace

OracleDecoded decode_with_libflac(std::span<const std::uint8_t> bytes) {
  DecodeState s;
  s.in = bytes;
  FLAC__StreamDecoder* d = FLAC__stream_decoder_new();
  if (!d) throw std::runtime_error("libFLAC: cannot allocate a decoder");
  FLAC__stream_decoder_set_md5_checking(d, true);
  auto st = FLAC__stream_decoder_init_stream(d, read_cb, seek_cb, tell_cb, length_cb, eof_cb,
                                             write_cb, metadata_cb, error_cb, &s);
  if (st != FLAC__STREAM_DECODER_INIT_STATUS_OK) {
    FLAC__stream_decoder_delete(d);
    throw std::runtime_error(std::string("libFLAC decoder init: ") +
                             FLAC__StreamDecoderInitStatusString[st]);
  }
  bool ran = FLAC__stream_decoder_process_until_end_of_stream(d);
  auto state = FLAC__stream_decoder_get_state(d);
  if (!ran || (state != FLAC__STREAM_DECODER_END_OF_STREAM))
    s.out.errors.push_back(std::string("libFLAC stopped in state ") +
                           FLAC__StreamDecoderStateString[state] + " after frame " +
                           std::to_string(s.out.frames));
  bool md5_ok = FLAC__stream_decoder_finish(d);
  FLAC__stream_decoder_delete(d);
  s.out.md5 = !s.md5_in_streaminfo ? OracleMd5::not_set
              : md5_ok             ? OracleMd5::match
                                   : OracleMd5::mismatch;
  if (s.out.total_samples != 0 && s.out.total_samples != s.out.decoded_samples)
    s.out.errors.push_back("STREAMINFO says " + std::to_string(s.out.total_samples) +
                           " samples, frames gave " + std::to_string(s.out.decoded_samples));
  return s.out;
}

std::vector<std::uint8_t> encode_with_libflac(std::span<const std::int32_t> pcm, unsigned channels,
                                              unsigned bps, unsigned sample_rate,
                                              const LibflacEncoderOptions& o) {
  if (channels == 0 || pcm.size() % channels != 0)
    throw std::invalid_argument(
        "encode_with_libflac: sample count is not a multiple of the channel count");
  const std::uint64_t frames = pcm.size() / channels;
  auto attempt = [&](bool subset,
                     FLAC__StreamEncoderInitStatus& init) -> std::vector<std::uint8_t> {
    FLAC__StreamEncoder* e = FLAC__stream_encoder_new();
    if (!e) throw std::runtime_error("libFLAC: cannot allocate an encoder");
    FLAC__stream_encoder_set_verify(e, o.verify);
    FLAC__stream_encoder_set_streamable_subset(e, subset);
    FLAC__stream_encoder_set_channels(e, channels);
    FLAC__stream_encoder_set_bits_per_sample(e, bps);
    FLAC__stream_encoder_set_sample_rate(e, sample_rate);
    FLAC__stream_encoder_set_compression_level(e, o.level);
    if (o.blocksize) FLAC__stream_encoder_set_blocksize(e, o.blocksize);
    if (o.max_lpc_order >= 0) FLAC__stream_encoder_set_max_lpc_order(e, unsigned(o.max_lpc_order));
    if (o.qlp_coeff_precision >= 0)
      FLAC__stream_encoder_set_qlp_coeff_precision(e, unsigned(o.qlp_coeff_precision));
    if (o.min_residual_partition_order >= 0)
      FLAC__stream_encoder_set_min_residual_partition_order(
          e, unsigned(o.min_residual_partition_order));
    if (o.max_residual_partition_order >= 0)
      FLAC__stream_encoder_set_max_residual_partition_order(
          e, unsigned(o.max_residual_partition_order));
    if (o.exhaustive_model_search >= 0)
      FLAC__stream_encoder_set_do_exhaustive_model_search(e, o.exhaustive_model_search != 0);
    if (o.mid_side >= 0) FLAC__stream_encoder_set_do_mid_side_stereo(e, o.mid_side != 0);
    if (!o.apodization.empty()) FLAC__stream_encoder_set_apodization(e, o.apodization.c_str());
    if (!o.do_md5) FLAC__stream_encoder_set_do_md5(e, false);
    if (o.disable_constant_subframes) FLAC__stream_encoder_disable_constant_subframes(e, true);
    if (o.disable_fixed_subframes) FLAC__stream_encoder_disable_fixed_subframes(e, true);
    if (o.disable_verbatim_subframes) FLAC__stream_encoder_disable_verbatim_subframes(e, true);
    FLAC__stream_encoder_set_total_samples_estimate(e, frames);
    EncodeState s;
    init = FLAC__stream_encoder_init_stream(e, enc_write_cb, enc_seek_cb, enc_tell_cb, nullptr, &s);
    if (init != FLAC__STREAM_ENCODER_INIT_STATUS_OK) {
      FLAC__stream_encoder_delete(e);
      return {};
    }
    std::string failure;
    const std::size_t chunk = 65536;  // frames per call, keeps libFLAC's buffers small
    for (std::uint64_t pos = 0; pos < frames && failure.empty(); pos += chunk) {
      unsigned n = static_cast<unsigned>(std::min<std::uint64_t>(chunk, frames - pos));
      if (!FLAC__stream_encoder_process_interleaved(e, pcm.data() + pos * channels, n))
        failure = FLAC__stream_encoder_get_resolved_state_string(e);
    }
    if (!FLAC__stream_encoder_finish(e) && failure.empty())
      failure = FLAC__stream_encoder_get_resolved_state_string(e);
    FLAC__stream_encoder_delete(e);
    if (!failure.empty()) throw std::runtime_error("libFLAC encoder: " + failure);
    s.out.resize(std::max(s.out.size(), s.pos));
    return std::move(s.out);
  };
  FLAC__StreamEncoderInitStatus init;
  std::vector<std::uint8_t> out = attempt(o.streamable_subset != 0, init);
  if (init == FLAC__STREAM_ENCODER_INIT_STATUS_NOT_STREAMABLE && o.streamable_subset < 0)
    out = attempt(false, init);  // the settings need --lax
  if (init != FLAC__STREAM_ENCODER_INIT_STATUS_OK)
    throw std::runtime_error(std::string("libFLAC encoder init: ") +
                             FLAC__StreamEncoderInitStatusString[init]);
  return out;
}

#endif

}  // namespace sigpu::test
