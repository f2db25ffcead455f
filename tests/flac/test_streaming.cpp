// StreamDecoder: streams pushed in pieces of random size decode, window by window, to exactly
// what decode() of the whole stream gives (PCM bytes, frames, damage with its places, MD5,
// warnings) on every backend, with the input held bounded by the window; junk and empty input
// are InputErrors. The Gpu tests run the same on device 0 and skip without one.
#include <gtest/gtest.h>

#include <sigpu/flac.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "support/libflac_oracle.hpp"
#include "support/signals.hpp"
#include "support/twin.hpp"
#include "support/var_encoder.hpp"

namespace sigpu::flac {
namespace {

namespace twin = test::twin;

using Bytes = std::vector<std::uint8_t>;

Bytes libflac_stream(unsigned level, unsigned channels, unsigned bps, std::size_t samples,
                     unsigned seed, test::Signal signal = test::Signal::music) {
  const auto pcm = test::make_signal(signal, channels, bps, samples, seed);
  test::LibflacEncoderOptions lo;
  lo.level = level;
  return test::encode_with_libflac(pcm, channels, bps, 44100, lo);
}

Bytes variable_stream(std::size_t samples) {
  test::VarEncoderOptions o;
  o.channels = 3;
  o.bits_per_sample = 24;
  o.max_block = 6000;
  return test::var_encode(test::make_signal(test::Signal::music, 3, 24, samples, 9), o);
}

struct Streamed {
  Decoded d;
  ByteBuffer pcm;  ///< the blocks joined
  std::size_t blocks = 0;
  std::size_t peak = 0;
};

/// Pushes `f` in pieces of 1..max_piece bytes (sizes drawn from `seed`, log-uniform so that
/// both single bytes and large pieces occur).
Streamed stream_decode(std::span<const std::uint8_t> f, const DecodeOptions& o, std::size_t window,
                       std::size_t max_piece, unsigned seed) {
  Streamed s;
  StreamDecoder dec(
      o,
      [&](const Pcm& block) {
        EXPECT_EQ(block.bytes.size(),
                  block.samples * block.channels * bytes_per_sample(block.format));
        s.pcm.insert(s.pcm.end(), block.bytes.begin(), block.bytes.end());
        ++s.blocks;
      },
      window);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> log_size(0.0, std::log(double(max_piece)));
  for (std::size_t at = 0; at < f.size();) {
    const auto n =
        std::min<std::size_t>(f.size() - at, static_cast<std::size_t>(std::exp(log_size(rng))));
    dec.push(f.subspan(at, std::max<std::size_t>(n, 1)));
    at += std::max<std::size_t>(n, 1);
  }
  EXPECT_EQ(dec.bytes_pushed(), f.size());
  s.d = dec.finish();
  s.peak = dec.peak_buffered_bytes();
  return s;
}

void expect_same(const Streamed& s, const Decoded& whole) {
  EXPECT_TRUE(twin::equal(whole.pcm.bytes, s.pcm));
  EXPECT_TRUE(s.d.pcm.bytes.empty());
  EXPECT_EQ(s.d.pcm.samples, whole.pcm.samples);
  EXPECT_EQ(s.d.pcm.channels, whole.pcm.channels);
  EXPECT_EQ(s.d.pcm.bits_per_sample, whole.pcm.bits_per_sample);
  EXPECT_EQ(s.d.pcm.sample_rate, whole.pcm.sample_rate);
  EXPECT_EQ(s.d.stream.audio_offset, whole.stream.audio_offset);
  EXPECT_EQ(s.d.stream.info.total_samples, whole.stream.info.total_samples);
  const DecodeReport &a = s.d.report, &b = whole.report;
  EXPECT_EQ(a.backend, b.backend);
  EXPECT_EQ(a.frames, b.frames);
  EXPECT_EQ(a.frames_numbered, b.frames_numbered);
  EXPECT_EQ(a.md5, b.md5);
  EXPECT_EQ(a.md5_expected, b.md5_expected);
  EXPECT_EQ(a.md5_computed, b.md5_computed);
  EXPECT_EQ(a.warnings, b.warnings);
  ASSERT_EQ(a.damage.size(), b.damage.size());
  for (std::size_t i = 0; i < a.damage.size(); ++i) {
    SCOPED_TRACE("damage " + std::to_string(i));
    EXPECT_EQ(a.damage[i].message(), b.damage[i].message());
    EXPECT_EQ(a.damage[i].byte_offset, b.damage[i].byte_offset);
    EXPECT_EQ(a.damage[i].byte_length, b.damage[i].byte_length);
    EXPECT_EQ(a.damage[i].frame_number, b.damage[i].frame_number);
  }
}

/// Every stream shape, pushed in random pieces with a small window (many windows) and with the
/// default one (the stream in one window), against decode() on the same backend.
void check_shapes(Backend backend) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  struct Case {
    std::string name;
    Bytes f;
  };
  const std::vector<Case> cases = {
      {"level 0 stereo 16-bit", libflac_stream(0, 2, 16, 44100 * 6, 1)},
      {"level 8 stereo 16-bit", libflac_stream(8, 2, 16, 44100 * 6, 2)},
      {"level 5 mono 24-bit", libflac_stream(5, 1, 24, 44100 * 6, 3)},
      {"level 5 6ch 16-bit", libflac_stream(5, 6, 16, 44100 * 3, 4)},
      {"variable block sizes 3ch 24-bit", variable_stream(44100 * 4)},
  };
  const DecodeOptions o{.backend = backend};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Decoded whole = decode(c.f, o);
    ASSERT_TRUE(whole.report.ok());
    ASSERT_EQ(whole.report.md5, Md5Check::match);
    unsigned seed = 1;
    for (std::size_t window : {std::size_t(64) << 10, std::size_t(200) << 10, std::size_t(0)}) {
      for (std::size_t max_piece : {std::size_t(7), std::size_t(3) << 20}) {
        SCOPED_TRACE("window " + std::to_string(window) + ", pieces up to " +
                     std::to_string(max_piece));
        const Streamed s = stream_decode(c.f, o, window, max_piece, seed++);
        expect_same(s, whole);
        if (window && window * 3 < c.f.size()) {
          EXPECT_GE(s.blocks, 2u);
        }
      }
    }
  }
}

TEST(FlacStreaming, MatchesWholeDecodeSerial) {
  check_shapes(Backend::cpu);
}

TEST(FlacStreaming, MatchesWholeDecodeParallel) {
  check_shapes(Backend::cpu_parallel);
}

TEST(FlacStreamingGpu, MatchesWholeDecode) {
  if (cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  check_shapes(Backend::cuda);
}

TEST(FlacStreaming, FormatsAndLayoutsMatchWholeDecode) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  const Bytes f = libflac_stream(5, 2, 24, 44100 * 4, 7);
  for (SampleFormat fmt : {SampleFormat::s16, SampleFormat::s32, SampleFormat::f32}) {
    SCOPED_TRACE(int(fmt));
    const DecodeOptions o{.backend = Backend::cpu_parallel, .format = fmt};
    const Decoded whole = decode(f, o);
    expect_same(stream_decode(f, o, 64 << 10, 100000, 3), whole);
  }
  // Planar: each block is planar within itself.
  const DecodeOptions planar{.backend = Backend::cpu_parallel, .layout = Layout::planar};
  const Decoded whole = decode(f, DecodeOptions{.backend = Backend::cpu_parallel});
  std::uint64_t at = 0;
  StreamDecoder dec(
      planar,
      [&](const Pcm& b) {
        ASSERT_EQ(b.layout, Layout::planar);
        const auto* got = b.samples_as<std::int32_t>();
        const auto* want = whole.pcm.samples_as<std::int32_t>();
        for (std::uint64_t i = 0; i < b.samples; ++i)
          for (unsigned c = 0; c < b.channels; ++c)
            ASSERT_EQ(got[c * b.samples + i], want[(at + i) * b.channels + c]);
        at += b.samples;
      },
      64 << 10);
  dec.push(f);
  EXPECT_EQ(dec.finish().report.md5, Md5Check::match);
  EXPECT_EQ(at, whole.pcm.samples);
}

/// A stream with bytes flipped in several frames far apart, so that several windows hold damage.
Bytes damaged_stream() {
  Bytes f = libflac_stream(5, 2, 16, 44100 * 8, 11);
  const Stream s = parse_stream(f);
  const std::size_t audio = f.size() - s.audio_offset;
  for (std::size_t k : {1u, 3u, 4u, 7u}) f[s.audio_offset + audio * k / 9] ^= 0xA5;
  f[s.audio_offset + 1] ^= 0x5A;  // the first frame's sync: the stream starts with silence
  return f;
}

void check_damage(Backend backend) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  const Bytes f = damaged_stream();
  const DecodeOptions o{.backend = backend};
  const Decoded whole = decode(f, o);
  ASSERT_GE(whole.report.damage.size(), 4u);
  for (std::size_t window : {std::size_t(48) << 10, std::size_t(150) << 10}) {
    SCOPED_TRACE("window " + std::to_string(window));
    const Streamed s = stream_decode(f, o, window, 1 << 20, 5);
    EXPECT_GE(s.blocks, 3u);
    expect_same(s, whole);
    EXPECT_NE(s.d.report.md5, Md5Check::match);
  }
  // stop_on_damage: an Error at the first damage, as decode() throws it.
  DecodeOptions stop = o;
  stop.stop_on_damage = true;
  StreamDecoder dec(stop, nullptr, 48 << 10);
  try {
    dec.push(f);
    dec.finish();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), whole.report.damage.front().message());
  }
}

TEST(FlacStreaming, DamageMatchesWholeDecodeSerial) {
  check_damage(Backend::cpu);
}

TEST(FlacStreaming, DamageMatchesWholeDecodeParallel) {
  check_damage(Backend::cpu_parallel);
}

TEST(FlacStreamingGpu, DamageMatchesWholeDecode) {
  if (cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  check_damage(Backend::cuda);
}

TEST(FlacStreaming, TruncatedStreamMatchesWholeDecode) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  Bytes f = libflac_stream(5, 2, 16, 44100 * 5, 12);
  f.resize(f.size() * 2 / 3);
  // The cut frame and the missing samples after it are numbered alike by both backends.
  const Decoded serial = decode(f, {.backend = Backend::cpu});
  for (Backend backend : {Backend::cpu_parallel, Backend::cpu}) {
    const DecodeOptions o{.backend = backend};
    const Decoded whole = decode(f, o);
    ASSERT_FALSE(whole.report.damage.empty());
    ASSERT_EQ(whole.report.damage.size(), serial.report.damage.size());
    for (std::size_t i = 0; i < whole.report.damage.size(); ++i)
      EXPECT_EQ(whole.report.damage[i].message(), serial.report.damage[i].message());
    EXPECT_EQ(whole.report.frames_numbered, serial.report.frames_numbered);
    expect_same(stream_decode(f, o, 64 << 10, 5000, 2), whole);
  }
}

TEST(FlacStreaming, HeldInputStaysWithinTheWindow) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  // Noise barely compresses: about 6 MB of frames for 35 s of 16-bit stereo.
  const Bytes f = libflac_stream(0, 2, 16, 44100 * 35, 13, test::Signal::white_noise);
  ASSERT_GT(f.size(), std::size_t(5) << 20);
  constexpr std::size_t kWindow = 64 << 10;
  const DecodeOptions o{.backend = Backend::cpu_parallel};
  const Streamed s = stream_decode(f, o, kWindow, 4 << 20, 9);
  EXPECT_LE(s.peak, 3 * kWindow);
  EXPECT_GE(s.blocks, f.size() / kWindow);
  EXPECT_EQ(s.d.report.md5, Md5Check::match);
  EXPECT_TRUE(twin::equal(decode(f, o).pcm.bytes, s.pcm));
}

TEST(FlacStreaming, MaxOutputBytesIsHonoured) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  const Bytes f = libflac_stream(5, 2, 16, 44100 * 4, 14);
  for (std::size_t window : {std::size_t(32) << 10, std::size_t(0)}) {
    StreamDecoder dec({.backend = Backend::cpu, .max_output_bytes = 44100 * 4}, nullptr, window);
    EXPECT_THROW(
        {
          dec.push(f);
          dec.finish();
        },
        Error);
  }
}

/// The error a stream decoder gives for `f`, pushed whole or in single bytes.
template <typename E>
void expect_error(const Bytes& f, const std::string& words) {
  for (std::size_t piece : {std::size_t(1), f.size() + 1}) {
    StreamDecoder dec({.backend = Backend::cpu_parallel}, nullptr, 64 << 10);
    try {
      for (std::size_t at = 0; at < f.size(); at += piece)
        dec.push(std::span<const std::uint8_t>(f).subspan(at, std::min(piece, f.size() - at)));
      dec.finish();
      ADD_FAILURE() << "no error for " << words;
    } catch (const E& e) {
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
  }
}

TEST(FlacStreaming, JunkAndEmptyInputAreInputErrors) {
  expect_error<InputError>({}, "empty input");
  std::mt19937 rng(3);
  Bytes junk(100000);
  for (auto& b : junk) b = static_cast<std::uint8_t>(rng());
  junk[0] = 'R';
  expect_error<InputError>(junk, "not a FLAC stream");
  expect_error<InputError>(Bytes{'f', 'L'}, "not a FLAC stream");
  if (!test::libflac_available()) return;
  const Bytes f = libflac_stream(5, 2, 16, 44100, 15);
  const Stream s = parse_stream(f);
  // Cut inside the metadata: named as such.
  expect_error<InputError>(Bytes(f.begin(), f.begin() + 20), "runs past the end");
  // Metadata then bytes in which no frame decodes.
  Bytes no_frames(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(s.audio_offset));
  no_frames.insert(no_frames.end(), junk.begin(), junk.end());
  expect_error<InputError>(no_frames, "no decodable FLAC frame");
}

TEST(FlacStreaming, MetadataOnlyIsAnEmptyStream) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  const Bytes f = libflac_stream(5, 2, 16, 44100, 16);
  const Stream s = parse_stream(f);
  StreamDecoder dec({.backend = Backend::cpu}, [](const Pcm&) { ADD_FAILURE() << "PCM"; });
  dec.push(std::span<const std::uint8_t>(f).first(s.audio_offset));
  const Decoded d = dec.finish();
  EXPECT_EQ(d.pcm.samples, 0u);
  EXPECT_EQ(d.report.frames, 0u);
  EXPECT_EQ(d.stream.info.total_samples, 44100u);
  EXPECT_FALSE(d.report.ok());  // STREAMINFO's samples are missing: truncation
}

TEST(FlacStreaming, NoPushAfterFinish) {
  StreamDecoder dec({.backend = Backend::cpu}, nullptr);
  const std::uint8_t b[1] = {0};
  EXPECT_THROW(dec.finish(), InputError);
  EXPECT_THROW(dec.push(b), Error);
}

}  // namespace
}  // namespace sigpu::flac
