// Differential tests: sigpu's decoder against libFLAC, sample for sample.
//
// 1. Generated in-process (FlacVsLibflac, FlacGpuVsLibflac): libFLAC's encoder and our own
//    variable-block-size encoder (support/var_encoder) over the test signals, every bit depth,
//    1..8 channels, levels 0/5/8, odd block sizes, every sample-rate header code, very short
//    streams, adversarial signals full of false frame syncs, and "CRC traps" (a fake successor
//    inside every frame that passes the CRC-16 and number checks). The reference is the input
//    itself and libFLAC's decode of the stream (which must agree with each other).
// 2. The real-encoder corpus (FlacCorpusVsLibflac, FlacGpuCorpusVsLibflac) that
//    scripts/make-flac-corpus builds: `flac` at every level and --lax setting, FFmpeg's encoder,
//    bit depths 8..32, 1..8 channels, 7 Hz..1048575 Hz. One test per corpus group; ctest
//    builds the corpus first (fixture flac_corpus, tests/flac/corpus.cmake).
//
// Every check requires identical samples, the same rate/channels/bps/length, report.ok(),
// and an MD5 verdict that agrees with libFLAC's. A failure names the stream, the backend, the
// first differing sample (index, channel, both values) and how many differ.
#include <gtest/gtest.h>

#include <sigpu/core.hpp>
#include <sigpu/flac.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "support/libflac_oracle.hpp"
#include "support/signals.hpp"
#include "support/var_encoder.hpp"

namespace {

namespace fs = std::filesystem;
using sigpu::Backend;
using sigpu::flac::Decoded;
using sigpu::flac::Md5Check;
using namespace sigpu::test;

std::string backend_name(Backend b) {
  return std::string(sigpu::to_string(b));
}

const char* md5_name(Md5Check m) {
  switch (m) {
    case Md5Check::match:
      return "match";
    case Md5Check::mismatch:
      return "mismatch";
    case Md5Check::not_set:
      return "not_set";
    case Md5Check::skipped:
      return "skipped";
  }
  return "?";
}

// ------------------------------------------------------------------------------ comparison

/// What a stream must decode to.
struct Expected {
  std::vector<std::int32_t> samples;  ///< interleaved
  std::uint32_t sample_rate = 0, channels = 0, bits_per_sample = 0;
  bool md5_set = true;  ///< STREAMINFO carries an MD5 (then it must match)
  std::string source;   ///< "libFLAC", "input", "cpu backend"
};

std::string describe_difference(const std::vector<std::int32_t>& want, const std::int32_t* got,
                                std::size_t n, unsigned channels) {
  std::size_t first = n, count = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (want[i] != got[i]) {
      if (first == n) first = i;
      ++count;
    }
  if (count == 0) return {};
  std::ostringstream s;
  s << "first differing sample " << first / channels << " channel " << first % channels
    << " (interleaved index " << first << "): expected " << want[first] << ", got " << got[first]
    << "; " << count << " of " << n << " values differ";
  std::size_t last = first;
  for (std::size_t i = n; i-- > first;)
    if (want[i] != got[i]) {
      last = i;
      break;
    }
  s << ", last at sample " << last / channels;
  return s.str();
}

/// Decodes `file` with `backend` and compares with `want`; every problem becomes one failure
/// message naming `label` and the backend.
void expect_decodes_to(const std::string& label, const std::vector<std::uint8_t>& file,
                       Backend backend, const Expected& want) {
  const std::string where = label + " [" + backend_name(backend) + " vs " + want.source + "]";
  Decoded out;
  try {
    sigpu::flac::DecodeOptions options;
    options.backend = backend;
    options.format = sigpu::flac::SampleFormat::raw32;
    out = sigpu::flac::decode(file, options);
  } catch (const std::exception& e) {
    ADD_FAILURE() << where << ": decode threw: " << e.what();
    return;
  }
  if (!out.report.ok()) {
    std::ostringstream s;
    s << where << ": report not ok: " << out.report.damage.size() << " damaged unit(s), md5 "
      << (out.report.md5 == Md5Check::mismatch ? "MISMATCH" : "ok");
    for (std::size_t i = 0; i < out.report.damage.size() && i < 5; ++i)
      s << "\n  " << out.report.damage[i].message();
    if (out.report.md5 == Md5Check::mismatch)
      s << "\n  md5 expected " << out.report.md5_expected << " computed "
        << out.report.md5_computed;
    ADD_FAILURE() << s.str();
  }
  EXPECT_EQ(out.pcm.sample_rate, want.sample_rate) << where;
  EXPECT_EQ(out.pcm.channels, want.channels) << where;
  EXPECT_EQ(out.pcm.bits_per_sample, want.bits_per_sample) << where;
  EXPECT_EQ(out.pcm.format, sigpu::flac::SampleFormat::raw32) << where;
  const std::uint64_t want_frames = want.channels ? want.samples.size() / want.channels : 0;
  EXPECT_EQ(out.pcm.samples, want_frames) << where << ": samples per channel";
  const Md5Check want_md5 = want.md5_set ? Md5Check::match : Md5Check::not_set;
  if (out.report.md5 != want_md5)
    ADD_FAILURE() << where << ": MD5 check " << md5_name(out.report.md5) << ", expected "
                  << md5_name(want_md5) << " (STREAMINFO "
                  << (out.report.md5_expected.empty() ? "-" : out.report.md5_expected)
                  << ", computed "
                  << (out.report.md5_computed.empty() ? "-" : out.report.md5_computed) << ")";

  const std::size_t have = out.pcm.bytes.size() / sizeof(std::int32_t);
  if (out.pcm.bytes.size() != want.samples.size() * sizeof(std::int32_t))
    ADD_FAILURE() << where << ": " << have << " values decoded, expected " << want.samples.size();
  const std::size_t n = std::min(have, want.samples.size());
  std::vector<std::int32_t> got(n);
  if (n) std::memcpy(got.data(), out.pcm.bytes.data(), n * sizeof(std::int32_t));
  const std::string diff =
      describe_difference(want.samples, got.data(), n, std::max(1u, want.channels));
  if (!diff.empty()) ADD_FAILURE() << where << ": " << diff;
}

/// libFLAC's decode as the reference; fails (and returns false) if libFLAC itself complains.
bool libflac_reference(const std::string& label, const std::vector<std::uint8_t>& file,
                       Expected& ref) {
  const OracleDecoded d = decode_with_libflac(file);
  if (!d.ok()) {
    std::string msg = label + ": libFLAC does not decode it cleanly:";
    for (const auto& e : d.errors) msg += "\n  " + e;
    if (d.md5 == OracleMd5::mismatch) msg += "\n  libFLAC: MD5 mismatch";
    ADD_FAILURE() << msg;
    return false;
  }
  ref.samples = d.samples;
  ref.sample_rate = d.sample_rate;
  ref.channels = d.channels;
  ref.bits_per_sample = d.bits_per_sample;
  ref.md5_set = d.md5 != OracleMd5::not_set;
  ref.source = "libFLAC";
  return true;
}

// ------------------------------------------------------------------------- generated cases

enum class Encoder { libflac, var };

struct GenCase {
  std::string name;
  Encoder encoder = Encoder::libflac;
  Signal signal = Signal::music;
  unsigned channels = 2, bps = 16, rate = 44100;
  std::size_t frames = 20000;
  std::uint64_t seed = 1;
  LibflacEncoderOptions lf;
  VarEncoderOptions var;
  bool flac_bytes_as_samples = false;  ///< samples are a real FLAC stream's bytes
  bool crc_trap = false;               ///< see crc_trap_stream()
};

std::ostream& operator<<(std::ostream& os, const GenCase& c) {
  return os << c.name;
}

std::string bits_name(unsigned bps, unsigned ch) {
  return std::to_string(bps) + "bit_" + std::to_string(ch) + "ch";
}

std::vector<std::int32_t> case_samples(const GenCase& c) {
  if (c.flac_bytes_as_samples) {
    // A real encoded stream (music, libFLAC -5) whose bytes become the samples: coded
    // VERBATIM, the outer stream then holds the inner stream's syncs, headers and frames.
    LibflacEncoderOptions inner;
    inner.level = 5;
    const auto music = make_signal(Signal::music, 2, 16, 30000, c.seed);
    const auto bytes = encode_with_libflac(music, 2, 16, 44100, inner);
    return samples_from_bytes(bytes, c.channels, c.bps, c.frames);
  }
  if (c.signal == Signal::adversarial) {
    AdversarialParams p;
    p.sample_rate = c.rate;
    p.block_size = c.encoder == Encoder::libflac && c.lf.blocksize ? c.lf.blocksize : 4096;
    p.variable_blocksize = c.encoder == Encoder::var && c.var.variable_blocksize;
    return make_adversarial(c.channels, c.bps, c.frames, p, c.seed);
  }
  return make_signal(c.signal, c.channels, c.bps, c.frames, c.seed);
}

std::vector<std::uint8_t> case_stream(const GenCase& c, const std::vector<std::int32_t>& pcm) {
  if (c.encoder == Encoder::libflac)
    return encode_with_libflac(pcm, c.channels, c.bps, c.rate, c.lf);
  VarEncoderOptions o = c.var;
  o.channels = c.channels;
  o.bits_per_sample = c.bps;
  o.sample_rate = c.rate;
  o.seed = c.seed;
  return var_encode(pcm, o);
}

GenCase libflac_case(std::string name, Signal s, unsigned ch, unsigned bps, unsigned level,
                     unsigned blocksize, std::size_t frames, unsigned rate = 44100) {
  GenCase c;
  c.name = std::move(name);
  c.signal = s;
  c.channels = ch;
  c.bps = bps;
  c.rate = rate;
  c.frames = frames;
  c.lf.level = level;
  c.lf.blocksize = blocksize;
  c.seed = ch * 100 + bps + level;
  return c;
}

GenCase var_case(std::string name, Signal s, unsigned ch, unsigned bps, std::size_t frames) {
  GenCase c;
  c.name = std::move(name);
  c.encoder = Encoder::var;
  c.signal = s;
  c.channels = ch;
  c.bps = bps;
  c.frames = frames;
  c.seed = ch * 1000 + bps;
  return c;
}

/// signals x bps {8..32} x channels {1,2,6,8} x levels {0,5,8}, block sizes spread over the grid.
std::vector<GenCase> matrix_cases() {
  const Signal signals[] = {Signal::music, Signal::white_noise, Signal::silence, Signal::square,
                            Signal::adversarial};
  const unsigned bpss[] = {8, 12, 16, 20, 24, 32}, chans[] = {1, 2, 6, 8}, levels[] = {0, 5, 8};
  // 0 = the level's default (1152 or 4096); 16 and >4608 need --lax (handled by the oracle).
  const unsigned blocks[] = {0,     4096, 192,  1152, 16, 576,   4608, 1000,
                             65535, 255,  8192, 2304, 0,  32768, 257};
  std::vector<GenCase> out;
  unsigned k = 0;
  for (Signal s : signals)
    for (unsigned bps : bpss)
      for (unsigned ch : chans)
        for (unsigned level : levels) {
          unsigned bs = blocks[(k++ * 7) % std::size(blocks)];
          std::size_t frames = s == Signal::music ? 24000 : s == Signal::silence ? 30000 : 12000;
          if (bs == 16) frames = 3000;  // libFLAC is slow with 16-sample blocks at -8
          std::string name = std::string(to_string(s)) + "_" + bits_name(bps, ch) + "_l" +
                             std::to_string(level) + "_bs" + (bs ? std::to_string(bs) : "default");
          out.push_back(libflac_case(name, s, ch, bps, level, bs, frames));
        }
  return out;
}

/// Bit depths without a frame-header code (taken from STREAMINFO) and the 4-bit minimum.
std::vector<GenCase> odd_depth_cases() {
  std::vector<GenCase> out;
  for (unsigned bps : {4u, 5u, 7u, 11u, 17u, 23u, 28u, 31u})
    for (unsigned ch : {1u, 2u})
      for (unsigned level : {0u, 8u})
        out.push_back(libflac_case("music_" + bits_name(bps, ch) + "_l" + std::to_string(level),
                                   Signal::music, ch, bps, level, 0, 16000));
  out.push_back(libflac_case("square_4bit_2ch_l5", Signal::square, 2, 4, 5, 0, 16000));
  out.push_back(libflac_case("square_31bit_2ch_l5", Signal::square, 2, 31, 5, 0, 16000));
  out.push_back(libflac_case("noise_4bit_3ch_l5", Signal::white_noise, 3, 4, 5, 0, 16000));
  out.push_back(libflac_case("wasted_16bit_2ch_l5", Signal::wasted_bits, 2, 16, 5, 0, 30000));
  out.push_back(libflac_case("wasted_24bit_6ch_l8", Signal::wasted_bits, 6, 24, 8, 0, 30000));
  out.push_back(libflac_case("wasted_32bit_2ch_l8", Signal::wasted_bits, 2, 32, 8, 0, 30000));
  for (unsigned ch : {3u, 4u, 5u, 7u})
    out.push_back(libflac_case("music_16bit_" + std::to_string(ch) + "ch_l5", Signal::music, ch, 16,
                               5, 0, 20000));
  auto no_md5 = libflac_case("music_16bit_2ch_l5_nomd5", Signal::music, 2, 16, 5, 0, 20000);
  no_md5.lf.do_md5 = false;
  out.push_back(no_md5);
  auto lpc32 =
      libflac_case("music_24bit_2ch_lax_lpc32_q15_r15", Signal::music, 2, 24, 8, 8192, 40000);
  lpc32.lf.max_lpc_order = 32;
  lpc32.lf.qlp_coeff_precision = 15;
  lpc32.lf.max_residual_partition_order = 15;
  out.push_back(lpc32);
  // 16-bit: the GPU's narrow restore, whose orders past 16 run in a launch of their own.
  auto lpc32_16 = libflac_case("music_16bit_2ch_lax_lpc32", Signal::music, 2, 16, 8, 8192, 40000);
  lpc32_16.lf.max_lpc_order = 32;
  out.push_back(lpc32_16);
  auto exh = libflac_case("music_16bit_2ch_exhaustive", Signal::music, 2, 16, 8, 0, 12000);
  exh.lf.exhaustive_model_search = 1;
  out.push_back(exh);
  auto lpc_only = libflac_case("music_32bit_2ch_lpc_only", Signal::music, 2, 32, 8, 4096, 20000);
  lpc_only.lf.disable_constant_subframes = lpc_only.lf.disable_fixed_subframes =
      lpc_only.lf.disable_verbatim_subframes = true;
  out.push_back(lpc_only);
  auto fixed_only =
      libflac_case("music_24bit_2ch_fixed_only", Signal::music, 2, 24, 8, 4096, 20000);
  fixed_only.lf.max_lpc_order = 0;
  fixed_only.lf.disable_constant_subframes = fixed_only.lf.disable_verbatim_subframes = true;
  out.push_back(fixed_only);
  return out;
}

/// Sample rates in every header coding: the 4-bit table, 8-bit kHz (code 12), 16-bit Hz
/// (13), 16-bit tens of Hz (14), and STREAMINFO only (above 655350 Hz or not representable).
std::vector<GenCase> rate_cases() {
  std::vector<GenCase> out;
  for (unsigned r :
       {1u,      7u,      8000u,   11025u,  16000u,  22000u,  22050u,  24000u,  32000u,
        44100u,  44101u,  48000u,  65535u,  65536u,  88200u,  96000u,  110250u, 176400u,
        192000u, 255000u, 256000u, 384000u, 655350u, 655360u, 705600u, 768000u, 1048575u})
    out.push_back(libflac_case("rate" + std::to_string(r), Signal::music, 2, 16, 5, 0, 10000, r));
  return out;
}

/// Streams of one sample, one frame, one frame and a bit.
std::vector<GenCase> short_cases() {
  std::vector<GenCase> out;
  for (std::size_t n :
       {std::size_t(1), std::size_t(2), std::size_t(15), std::size_t(16), std::size_t(17)})
    out.push_back(
        libflac_case("len" + std::to_string(n) + "_16bit_2ch", Signal::music, 2, 16, 5, 0, n));
  out.push_back(libflac_case("len1_32bit_1ch", Signal::square, 1, 32, 8, 0, 1));
  out.push_back(libflac_case("len1_8bit_8ch", Signal::white_noise, 8, 8, 0, 0, 1));
  out.push_back(libflac_case("len1_24bit_6ch", Signal::music, 6, 24, 8, 0, 1));
  out.push_back(libflac_case("one_frame_4096", Signal::music, 2, 16, 8, 4096, 4096));
  out.push_back(libflac_case("one_short_frame_4095", Signal::music, 2, 16, 8, 4096, 4095));
  out.push_back(libflac_case("frame_and_one_4097", Signal::music, 2, 16, 8, 4096, 4097));
  out.push_back(libflac_case("one_frame_65535", Signal::music, 2, 16, 5, 65535, 65535));
  out.push_back(libflac_case("one_frame_16_of_16", Signal::music, 1, 16, 5, 16, 16));
  auto v1 = var_case("var_len1_16bit_2ch", Signal::music, 2, 16, 1);
  out.push_back(v1);
  auto v17 = var_case("var_len17_24bit_1ch", Signal::music, 1, 24, 17);
  out.push_back(v17);
  return out;
}

/// Our encoder: variable block sizes (blocking strategy 1), escaped partitions, wasted bits,
/// 33-bit side channels, odd fixed block sizes, header fields deferred to STREAMINFO.
std::vector<GenCase> var_cases() {
  std::vector<GenCase> out;
  for (unsigned bps : {4u, 8u, 12u, 16u, 20u, 24u, 32u})
    for (unsigned ch : {1u, 2u, 5u, 8u}) {
      auto c = var_case("var_music_" + bits_name(bps, ch) + "_bs16to65535", Signal::music, ch, bps,
                        ch > 2 ? 60000 : 150000);
      if (ch == 2) c.var.stereo = VarStereo::cycle;
      out.push_back(c);
    }
  for (unsigned bps : {8u, 16u, 24u, 32u}) {
    auto small =
        var_case("var_music_" + bits_name(bps, 2) + "_bs16to300", Signal::music, 2, bps, 40000);
    small.var.max_block = 300;
    small.var.stereo = VarStereo::cycle;
    out.push_back(small);
  }
  for (auto [mode, mname] : {std::pair{VarStereo::left_side, "left_side"},
                             std::pair{VarStereo::side_right, "side_right"},
                             std::pair{VarStereo::mid_side, "mid_side"}}) {
    for (Signal s : {Signal::square, Signal::white_noise, Signal::music}) {
      auto c =
          var_case("var_" + std::string(to_string(s)) + "_32bit_2ch_" + mname, s, 2, 32, 30000);
      c.var.stereo = mode;  // 32-bit sides need 33 bits
      c.var.max_block = 8192;
      out.push_back(c);
      auto f = c;
      f.name += "_fixed";
      f.var.subframes = VarSubframes::fixed;
      out.push_back(f);
    }
  }
  for (Signal s : {Signal::silence, Signal::wasted_bits, Signal::square}) {
    auto c =
        var_case("var_" + std::string(to_string(s)) + "_24bit_2ch_fixed_escapes", s, 2, 24, 40000);
    c.var.subframes = VarSubframes::fixed;  // zero residual partitions become 0-bit escapes
    out.push_back(c);
  }
  auto nores = var_case("var_noise_16bit_2ch_no_escapes", Signal::white_noise, 2, 16, 30000);
  nores.var.use_escape_partitions = false;
  nores.var.subframes = VarSubframes::fixed;
  out.push_back(nores);
  for (unsigned bs : {16u, 100u, 256u, 1000u, 4095u, 65535u}) {
    auto c = var_case("var_fixed_blocksize_" + std::to_string(bs), Signal::music, 2, 16,
                      bs == 16 ? 5000 : 100000);
    c.var.variable_blocksize = false;
    c.var.fixed_block = bs;
    out.push_back(c);
  }
  auto cycle = var_case("var_listed_sizes_16_65535_4608_17", Signal::music, 2, 16, 200000);
  cycle.var.block_sizes = {16, 65535, 4608, 17, 255, 256, 257, 1};
  out.push_back(cycle);
  auto bare = var_case("var_header_defers_to_streaminfo", Signal::music, 2, 24, 60000);
  bare.var.header_sample_rate = bare.var.header_bits_per_sample = false;
  out.push_back(bare);
  for (unsigned r : {22000u, 44101u, 110250u, 705600u}) {
    auto c = var_case("var_rate" + std::to_string(r), Signal::music, 2, 16, 30000);
    c.rate = r;
    out.push_back(c);
  }
  auto nomd5 = var_case("var_no_md5", Signal::music, 2, 16, 30000);
  nomd5.var.md5 = false;
  out.push_back(nomd5);
  return out;
}

/// Streams whose data is full of frame syncs, valid headers and even complete valid frames.
std::vector<GenCase> adversarial_cases() {
  std::vector<GenCase> out;
  for (unsigned bps : {8u, 12u, 16u, 20u, 24u, 32u})
    for (unsigned ch : {1u, 2u, 6u}) {
      auto c = libflac_case("adversarial_" + bits_name(bps, ch) + "_l0_bs4096", Signal::adversarial,
                            ch, bps, 0, 4096, 60000);
      out.push_back(c);
      auto v = var_case("adversarial_" + bits_name(bps, ch) + "_var_verbatim", Signal::adversarial,
                        ch, bps, 60000);
      v.var.subframes = VarSubframes::verbatim;
      v.var.max_block = 20000;
      v.var.min_block = 1000;
      out.push_back(v);
    }
  for (unsigned level : {0u, 8u}) {
    auto c = libflac_case("adversarial_16bit_2ch_l" + std::to_string(level) + "_bs1152",
                          Signal::adversarial, 2, 16, level, 1152, 60000);
    out.push_back(c);
  }
  auto lpc =
      libflac_case("adversarial_16bit_2ch_lpc_only", Signal::adversarial, 2, 16, 8, 4096, 60000);
  lpc.lf.disable_constant_subframes = lpc.lf.disable_fixed_subframes =
      lpc.lf.disable_verbatim_subframes = true;
  out.push_back(lpc);
  for (unsigned bps : {8u, 12u, 16u, 24u}) {
    for (unsigned ch : {1u, 2u}) {
      auto c = libflac_case("flac_bytes_as_" + bits_name(bps, ch) + "_l5", Signal::adversarial, ch,
                            bps, 5, 4096, 60000);
      c.flac_bytes_as_samples = true;
      out.push_back(c);
      auto v = var_case("flac_bytes_as_" + bits_name(bps, ch) + "_var_verbatim",
                        Signal::adversarial, ch, bps, 60000);
      v.flac_bytes_as_samples = true;
      v.var.subframes = VarSubframes::verbatim;
      v.var.max_block = 16384;
      out.push_back(v);
    }
  }
  return out;
}

/// Streams whose frames each hold a fake successor that passes the CRC-16 and number checks.
std::vector<GenCase> crc_trap_cases() {
  std::vector<GenCase> out;
  for (unsigned bps : {8u, 16u, 24u, 32u})
    for (bool variable : {false, true}) {
      auto c = var_case(std::string("crc_trap_") + std::to_string(bps) + "bit_" +
                            (variable ? "variable" : "fixed"),
                        Signal::music, 1, bps, 40000);
      c.crc_trap = true;
      c.var.variable_blocksize = variable;
      c.var.block_sizes = {4096};
      c.var.fixed_block = 4096;
      out.push_back(c);
    }
  auto odd = var_case("crc_trap_16bit_fixed_1000", Signal::music, 1, 16, 20000);
  odd.crc_trap = true;
  odd.var.variable_blocksize = false;
  odd.var.fixed_block = 1000;
  out.push_back(odd);
  return out;
}

std::string case_name(const ::testing::TestParamInfo<GenCase>& info) {
  return info.param.name;
}

/// A VERBATIM mono stream (our encoder) with a trap in every frame: at a third of frame k's
/// sample data sit the two bytes that make the CRC-16 running from frame k's first byte zero,
/// then a complete valid frame with frame k's parameters numbered as frame k+1. A frame search
/// that takes the first later candidate with a zero CRC-16 and a continuing number as frame k's
/// end is wrong in every frame; the true end is only found by decoding frame k.
std::pair<std::vector<std::int32_t>, std::vector<std::uint8_t>> crc_trap_stream(const GenCase& c) {
  auto pcm = make_signal(Signal::music, 1, c.bps, c.frames, c.seed);
  VarEncoderOptions o = c.var;
  o.channels = 1;
  o.bits_per_sample = c.bps;
  o.sample_rate = c.rate;
  o.subframes = VarSubframes::verbatim;
  const std::uint32_t bs = o.variable_blocksize ? o.block_sizes.at(0) : o.fixed_block;
  const unsigned width = c.bps / 8;  // byte-aligned depths only: 8, 16, 24, 32
  for (std::size_t start = 0, k = 0; start + bs <= c.frames; start += bs, ++k) {
    const std::uint64_t number = o.variable_blocksize ? start : k;
    std::vector<std::vector<std::int64_t>> ch(
        1, std::vector<std::int64_t>(pcm.begin() + start, pcm.begin() + start + bs));
    const auto frame = flacbits::encode_frame(ch, c.bps, c.rate, o.variable_blocksize, number,
                                              VarSubframes::verbatim);
    const std::size_t data_at =
        frame.size() - 2 - std::size_t(bs) * width;  // header + subframe header
    const std::size_t trap_at = (bs / 3) * width;    // offset in the sample bytes
    std::vector<std::uint8_t> data(frame.begin() + data_at, frame.end() - 2);
    const std::uint16_t crc = flacbits::crc16(frame.data(), data_at + trap_at);
    const auto fake = flacbits::encode_constant_frame({std::int64_t(k % 7) - 3}, bs, c.bps, c.rate,
                                                      o.variable_blocksize,
                                                      o.variable_blocksize ? start + bs : k + 1);
    data[trap_at] = crc >> 8;
    data[trap_at + 1] = crc & 0xFF;
    std::copy(fake.begin(), fake.end(), data.begin() + trap_at + 2);
    for (std::uint32_t i = 0; i < bs; ++i) {  // the bytes back into samples (big-endian, signed)
      std::uint32_t v = 0;
      for (unsigned b = 0; b < width; ++b) v = (v << 8) | data[i * width + b];
      const unsigned shift = 32 - c.bps;
      pcm[start + i] = static_cast<std::int32_t>(v << shift) >> shift;
    }
  }
  auto file = var_encode(pcm, o);
  return {std::move(pcm), std::move(file)};
}

bool needs_libflac(const GenCase& c) {
  return c.encoder == Encoder::libflac || c.flac_bytes_as_samples;
}

/// Encodes the case and decodes it with each backend; the input is the reference, and
/// libFLAC (when present) must decode the stream to the input first.
void run_case(const GenCase& c, std::initializer_list<Backend> backends) {
  std::vector<std::int32_t> pcm;
  std::vector<std::uint8_t> file;
  if (c.crc_trap) {
    std::tie(pcm, file) = crc_trap_stream(c);
  } else {
    pcm = case_samples(c);
    file = case_stream(c, pcm);
  }
  Expected input;
  input.samples = pcm;
  input.sample_rate = c.rate;
  input.channels = c.channels;
  input.bits_per_sample = c.bps;
  input.md5_set = c.encoder == Encoder::libflac ? c.lf.do_md5 : c.var.md5;
  input.source = "input";
  if (libflac_available()) {
    Expected oracle;
    ASSERT_TRUE(libflac_reference(c.name, file, oracle));
    ASSERT_TRUE(oracle.samples == input.samples)
        << c.name << ": libFLAC's decode differs from the encoder's input";
    ASSERT_EQ(oracle.md5_set, input.md5_set) << c.name;
  }
  for (Backend b : backends) expect_decodes_to(c.name, file, b, input);
}

class FlacVsLibflac : public ::testing::TestWithParam<GenCase> {
 protected:
  void SetUp() override {
    if (needs_libflac(GetParam()) && !libflac_available()) GTEST_SKIP() << "built without libFLAC";
  }
};

TEST_P(FlacVsLibflac, CpuBackendsMatch) {
  run_case(GetParam(), {Backend::cpu, Backend::cpu_parallel});
}

class FlacGpuVsLibflac : public FlacVsLibflac {
 protected:
  void SetUp() override {
    if (sigpu::cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
    FlacVsLibflac::SetUp();
  }
};

TEST_P(FlacGpuVsLibflac, CudaMatches) {
  run_case(GetParam(), {Backend::cuda});
}

INSTANTIATE_TEST_SUITE_P(Matrix, FlacVsLibflac, ::testing::ValuesIn(matrix_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(OddDepths, FlacVsLibflac, ::testing::ValuesIn(odd_depth_cases()),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Rates, FlacVsLibflac, ::testing::ValuesIn(rate_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Short, FlacVsLibflac, ::testing::ValuesIn(short_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(VarBlock, FlacVsLibflac, ::testing::ValuesIn(var_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Adversarial, FlacVsLibflac, ::testing::ValuesIn(adversarial_cases()),
                         case_name);
INSTANTIATE_TEST_SUITE_P(CrcTrap, FlacVsLibflac, ::testing::ValuesIn(crc_trap_cases()), case_name);

INSTANTIATE_TEST_SUITE_P(Matrix, FlacGpuVsLibflac, ::testing::ValuesIn(matrix_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(OddDepths, FlacGpuVsLibflac, ::testing::ValuesIn(odd_depth_cases()),
                         case_name);
INSTANTIATE_TEST_SUITE_P(Rates, FlacGpuVsLibflac, ::testing::ValuesIn(rate_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Short, FlacGpuVsLibflac, ::testing::ValuesIn(short_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(VarBlock, FlacGpuVsLibflac, ::testing::ValuesIn(var_cases()), case_name);
INSTANTIATE_TEST_SUITE_P(Adversarial, FlacGpuVsLibflac, ::testing::ValuesIn(adversarial_cases()),
                         case_name);
INSTANTIATE_TEST_SUITE_P(CrcTrap, FlacGpuVsLibflac, ::testing::ValuesIn(crc_trap_cases()),
                         case_name);

// ------------------------------------------------------------------------------- corpus

/// The groups scripts/make-flac-corpus writes (its subdirectories); each has a test in
/// FlacCorpusVsLibflac and FlacGpuCorpusVsLibflac below, named after it. Plain TEST_Fs, not
/// TEST_P, so the CTest names are fixed and tests/flac/corpus.cmake can give them the
/// corpus fixture; keep the list there in step.
const std::vector<std::string> kCorpusGroups = {
    "levels", "lax", "blocksize", "bitdepth", "channels", "rates", "speech", "ffmpeg", "short"};

/// Where the corpus is: $SIGPU_FLAC_CORPUS, else $SIGPU_DATA_DIR/flac-corpus (the GPU
/// machine's bundle, scripts/gpu-run), else ${SIGPU_CACHE:-$HOME/.cache/sigpu}/flac-corpus (what
/// the script writes), else .cache/sigpu/flac-corpus in the source tree.
fs::path corpus_dir() {
  std::vector<fs::path> candidates;
  if (const char* d = std::getenv("SIGPU_FLAC_CORPUS"); d && *d) candidates.emplace_back(d);
  if (const char* d = std::getenv("SIGPU_DATA_DIR"); d && *d)
    candidates.push_back(fs::path(d) / "flac-corpus");
  if (const char* c = std::getenv("SIGPU_CACHE"); c && *c)
    candidates.push_back(fs::path(c) / "flac-corpus");
  else if (const char* h = std::getenv("HOME"); h && *h)
    candidates.push_back(fs::path(h) / ".cache/sigpu/flac-corpus");
  candidates.push_back(fs::path(SIGPU_SOURCE_DIR) / ".cache/sigpu/flac-corpus");
  for (const auto& p : candidates)
    if (fs::exists(p / "manifest.tsv")) return p;
  return candidates.front();
}

struct CorpusFile {
  std::string path, description;
};

std::vector<CorpusFile> corpus_manifest(const fs::path& dir) {
  std::vector<CorpusFile> out;
  std::ifstream in(dir / "manifest.tsv");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    auto tab = line.find('\t');
    out.push_back({line.substr(0, tab), tab == std::string::npos ? "" : line.substr(tab + 1)});
  }
  return out;
}

std::vector<std::uint8_t> read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// The test's name is the corpus group it checks.
class FlacCorpusVsLibflac : public ::testing::Test {
 protected:
  void SetUp() override {
    group_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = corpus_dir();
    if (!fs::exists(dir_ / "manifest.tsv"))
      GTEST_SKIP() << "FLAC corpus not found at " << dir_.string()
                   << ": run scripts/make-flac-corpus (ctest runs it first as the "
                      "flac_corpus_setup fixture)";
    for (const auto& f : corpus_manifest(dir_))
      if (f.path.rfind(group_ + "/", 0) == 0) files_.push_back(f);
    if (files_.empty())
      GTEST_SKIP() << "no files in corpus group " << group_ << " at " << dir_.string();
  }

  /// Every file of the group against libFLAC (or, without libFLAC, against the serial CPU
  /// backend and the stream's own MD5).
  void check_group(std::initializer_list<Backend> backends) {
    for (const auto& f : files_) {
      const std::string label = f.path + " (" + f.description + ")";
      const auto file = read_file(dir_ / f.path);
      ASSERT_FALSE(file.empty()) << label << ": cannot read " << (dir_ / f.path).string();
      Expected ref;
      if (libflac_available()) {
        if (!libflac_reference(label, file, ref)) continue;
      } else {
        sigpu::flac::DecodeOptions options;
        options.backend = Backend::cpu;
        const Decoded cpu = sigpu::flac::decode(file, options);
        ref.samples.resize(cpu.pcm.bytes.size() / 4);
        std::memcpy(ref.samples.data(), cpu.pcm.bytes.data(), cpu.pcm.bytes.size());
        ref.sample_rate = cpu.pcm.sample_rate;
        ref.channels = cpu.pcm.channels;
        ref.bits_per_sample = cpu.pcm.bits_per_sample;
        ref.md5_set = cpu.report.md5 != Md5Check::not_set;
        ref.source = "cpu backend (no libFLAC here)";
        EXPECT_TRUE(!ref.md5_set || cpu.report.md5 == Md5Check::match)
            << label << ": cpu backend MD5 mismatch";
      }
      for (Backend b : backends) expect_decodes_to(label, file, b, ref);
    }
  }

  std::string group_;
  fs::path dir_;
  std::vector<CorpusFile> files_;
};

class FlacGpuCorpusVsLibflac : public FlacCorpusVsLibflac {
 protected:
  void SetUp() override {
    if (sigpu::cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
    FlacCorpusVsLibflac::SetUp();
  }
};

#define SIGPU_CORPUS_GROUP(group)                       \
  TEST_F(FlacCorpusVsLibflac, group) {                  \
    check_group({Backend::cpu, Backend::cpu_parallel}); \
  }                                                     \
  TEST_F(FlacGpuCorpusVsLibflac, group) {               \
    check_group({Backend::cuda});                       \
  }

SIGPU_CORPUS_GROUP(levels)
SIGPU_CORPUS_GROUP(lax)
SIGPU_CORPUS_GROUP(blocksize)
SIGPU_CORPUS_GROUP(bitdepth)
SIGPU_CORPUS_GROUP(channels)
SIGPU_CORPUS_GROUP(rates)
SIGPU_CORPUS_GROUP(speech)
SIGPU_CORPUS_GROUP(ffmpeg)
SIGPU_CORPUS_GROUP(short)

/// Every file in the manifest belongs to a group that one of the tests above checks.
TEST(FlacCorpusManifest, EveryFileIsInAKnownGroup) {
  const fs::path dir = corpus_dir();
  if (!fs::exists(dir / "manifest.tsv"))
    GTEST_SKIP() << "FLAC corpus not found at " << dir.string();
  const auto files = corpus_manifest(dir);
  EXPECT_GT(files.size(), 100u) << "corpus at " << dir.string() << " looks incomplete";
  for (const auto& f : files) {
    const std::string group = f.path.substr(0, f.path.find('/'));
    EXPECT_NE(std::find(kCorpusGroups.begin(), kCorpusGroups.end(), group), kCorpusGroups.end())
        << f.path << ": group '" << group
        << "' is not in kCorpusGroups (tests/flac/test_vs_libflac.cpp)";
    EXPECT_TRUE(fs::exists(dir / f.path)) << f.path << " is in the manifest but missing";
  }
}

}  // namespace
