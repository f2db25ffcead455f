// Hostile and damaged input: every backend reports the damage with its position, keeps the
// good frames bit-exact, fills damaged spans with silence and agrees with the serial reference.
#include <gtest/gtest.h>

#include <sigpu/flac.hpp>

#include <cstring>

#include "support/libflac_oracle.hpp"
#include "support/signals.hpp"
#include "support/var_encoder.hpp"

namespace sigpu::flac {
namespace {

using test::Signal;

std::vector<std::uint8_t> encode(unsigned channels, unsigned bps, std::size_t n,
                                 unsigned blocksize = 1024) {
  const auto pcm = test::make_signal(Signal::music, channels, bps, n, 7);
  test::LibflacEncoderOptions o;
  o.level = 5;
  o.blocksize = blocksize;
  return test::encode_with_libflac(pcm, channels, bps, 44100, o);
}

std::vector<Backend> cpu_backends() {
  return {Backend::cpu, Backend::cpu_parallel};
}

const std::int32_t* raw(const Decoded& d) {
  return d.pcm.samples_as<std::int32_t>();
}

/// Decodes with every CPU backend, checks they agree sample for sample and in the damage they
/// report, and returns the reference's result.
Decoded decode_all(const std::vector<std::uint8_t>& f, DecodeOptions o = {}) {
  o.backend = Backend::cpu;
  Decoded ref = decode(f, o);
  o.backend = Backend::cpu_parallel;
  Decoded par = decode(f, o);
  EXPECT_EQ(par.pcm.samples, ref.pcm.samples);
  EXPECT_EQ(par.pcm.bytes.size(), ref.pcm.bytes.size());
  if (par.pcm.bytes.size() == ref.pcm.bytes.size()) {
    EXPECT_EQ(std::memcmp(par.pcm.bytes.data(), ref.pcm.bytes.data(), ref.pcm.bytes.size()), 0)
        << "cpu-parallel output differs from the serial reference";
  }
  EXPECT_EQ(par.report.damage.size(), ref.report.damage.size());
  if (par.report.damage.size() != ref.report.damage.size()) {
    for (auto& d : ref.report.damage) ADD_FAILURE() << "cpu: " << d.message();
    for (auto& d : par.report.damage) ADD_FAILURE() << "cpu-parallel: " << d.message();
  }
  for (std::size_t k = 0; k < std::min(par.report.damage.size(), ref.report.damage.size()); ++k) {
    EXPECT_EQ(par.report.damage[k].byte_offset, ref.report.damage[k].byte_offset) << k;
    EXPECT_EQ(par.report.damage[k].first_sample, ref.report.damage[k].first_sample) << k;
    EXPECT_EQ(par.report.damage[k].samples, ref.report.damage[k].samples) << k;
    EXPECT_EQ(par.report.damage[k].frame_number, ref.report.damage[k].frame_number) << k;
  }
  EXPECT_EQ(par.report.frames_numbered, ref.report.frames_numbered);
  return ref;
}

TEST(FlacDamage, CorruptFrameIsReportedSilencedAndDecodingGoesOn) {
  const auto good = encode(2, 16, 50000);
  const Decoded clean = decode_all(good);
  ASSERT_TRUE(clean.report.ok());
  auto bad = good;
  const std::size_t hit = bad.size() / 2;
  for (std::size_t k = 0; k < 8; ++k) bad[hit + k] ^= 0x5A;
  const Decoded d = decode_all(bad);
  ASSERT_EQ(d.report.damage.size(), 1u);
  const Damage& dm = d.report.damage[0];
  EXPECT_LE(dm.byte_offset, hit);
  EXPECT_GT(dm.byte_offset + dm.byte_length, hit);
  EXPECT_EQ(dm.samples, 1024u);
  EXPECT_NE(dm.message().find("byte " + std::to_string(dm.byte_offset)), std::string::npos);
  ASSERT_EQ(d.pcm.samples, clean.pcm.samples) << "timing is kept";
  for (std::uint64_t i = 0; i < d.pcm.samples * 2; ++i) {
    const std::uint64_t s = i / 2;
    const bool silenced = s >= dm.first_sample && s < dm.first_sample + dm.samples;
    ASSERT_EQ(raw(d)[i], silenced ? 0 : raw(clean)[i]) << "sample " << s;
  }
  EXPECT_EQ(d.report.md5, Md5Check::skipped);
  EXPECT_FALSE(d.report.ok());
}

TEST(FlacDamage, StopOnDamageThrowsWithThePosition) {
  auto bad = encode(1, 16, 20000);
  bad[bad.size() / 2] ^= 0xFF;
  for (Backend b : cpu_backends())
    EXPECT_THROW(decode(bad, {.backend = b, .stop_on_damage = true}), Error);
}

TEST(FlacDamage, TruncatedFilesKeepEveryCompleteFrame) {
  const auto good = encode(2, 24, 30000);
  const Decoded clean = decode_all(good);
  const std::size_t audio = parse_stream(good).audio_offset;
  for (std::size_t k = 0; k < 4; ++k)  // inside the metadata: nothing to decode, a clear error
    EXPECT_THROW(
        decode(std::span(good.data(), audio - 1 - k * 7), {.backend = Backend::cpu_parallel}),
        Error);
  for (std::size_t cut :
       {good.size() - 1, good.size() - 100, good.size() * 2 / 3, audio + 100, audio + 3}) {
    std::vector<std::uint8_t> t(good.begin(), good.begin() + cut);
    Decoded d = [&] {
      try {
        return decode_all(t);
      } catch (const Error& e) {
        ADD_FAILURE() << "cut " << cut << ": " << e.what();
        return Decoded{};
      }
    }();
    EXPECT_FALSE(d.report.ok()) << "cut at " << cut;
    ASSERT_FALSE(d.report.damage.empty());
    const std::uint64_t intact = d.report.damage.front().first_sample;
    for (std::uint64_t i = 0; i < intact * 2 && i < d.pcm.samples * 2; ++i)
      ASSERT_EQ(raw(d)[i], raw(clean)[i]) << "cut " << cut;
  }
}

TEST(FlacDamage, GarbageIsRefusedWithAClearError) {
  std::vector<std::uint8_t> junk(5000);
  for (std::size_t i = 0; i < junk.size(); ++i) junk[i] = static_cast<std::uint8_t>(i * 131 + 7);
  for (Backend b : cpu_backends()) {
    try {
      decode(junk, {.backend = b});
      ADD_FAILURE() << "garbage accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("byte 0"), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(decode(std::vector<std::uint8_t>{}, {.backend = Backend::cpu}), Error);
}

TEST(FlacDamage, MetadataLengthPastTheEndIsRefused) {
  auto f = encode(1, 16, 1000);
  f.resize(30);  // inside STREAMINFO
  for (Backend b : cpu_backends()) EXPECT_THROW(decode(f, {.backend = b}), Error);
}

TEST(FlacDamage, StreamWithoutMetadataDecodesFromItsFrames) {
  const auto good = encode(2, 16, 20000);
  const Stream s = parse_stream(good);
  std::vector<std::uint8_t> frames_only(good.begin() + static_cast<long>(s.audio_offset),
                                        good.end());
  const Decoded clean = decode_all(good);
  const Decoded d = decode_all(frames_only);
  EXPECT_TRUE(d.report.damage.empty());
  EXPECT_EQ(d.report.md5, Md5Check::not_set);
  ASSERT_EQ(d.pcm.bytes.size(), clean.pcm.bytes.size());
  EXPECT_EQ(std::memcmp(d.pcm.bytes.data(), clean.pcm.bytes.data(), d.pcm.bytes.size()), 0);
}

TEST(FlacDamage, WrongStreamInfoFrameSizeAndTotalAreTolerated) {
  auto f = encode(2, 16, 20000);
  const Decoded clean = decode_all(f);
  // STREAMINFO body starts at byte 8: max frame size is bytes 15..17, total samples 21..25.
  f[15] = 0;
  f[16] = 0;
  f[17] = 20;  // claims frames are at most 20 bytes
  const Decoded d = decode_all(f);
  EXPECT_TRUE(d.report.ok());
  ASSERT_EQ(d.pcm.bytes.size(), clean.pcm.bytes.size());
  EXPECT_EQ(std::memcmp(d.pcm.bytes.data(), clean.pcm.bytes.data(), d.pcm.bytes.size()), 0);
  f[25] ^= 0x10;  // total samples off by 16
  const Decoded t = decode_all(f);
  EXPECT_EQ(t.pcm.samples, clean.pcm.samples) << "the frames decide the length";
  EXPECT_TRUE(!t.report.warnings.empty() || !t.report.damage.empty());
}

TEST(FlacDamage, InvalidBlockSizeCodeInAHeaderDamagesOnlyThatFrame) {
  const auto good = encode(1, 16, 30000);
  const Stream s = parse_stream(good);
  // Find the third frame's header and set its block size code to the reserved value 0.
  std::size_t pos = s.audio_offset, seen = 0;
  for (std::size_t p = s.audio_offset; p + 1 < good.size(); ++p)
    if (good[p] == 0xFF && good[p + 1] == 0xF8 && ++seen == 3) {
      pos = p;
      break;
    }
  auto bad = good;
  bad[pos + 2] &= 0x0F;
  const Decoded d = decode_all(bad);
  ASSERT_EQ(d.report.damage.size(), 1u);
  EXPECT_EQ(d.report.damage[0].byte_offset, pos);
  EXPECT_EQ(d.report.damage[0].first_sample, 2048u);
}

TEST(FlacDamage, FalseSyncsInsideAudioNeverChangeTheOutput) {
  for (unsigned bps : {16u, 24u}) {
    const auto pcm = test::make_adversarial(2, bps, 60000, {44100, 4096, false}, 3);
    test::LibflacEncoderOptions o;
    o.level = 0;
    o.blocksize = 4096;
    o.disable_constant_subframes = o.disable_fixed_subframes = true;
    const auto f = test::encode_with_libflac(pcm, 2, bps, 44100, o);
    const Decoded d = decode_all(f);
    EXPECT_TRUE(d.report.ok());
    EXPECT_EQ(d.report.md5, Md5Check::match);
    ASSERT_EQ(d.pcm.samples * 2, pcm.size());
    EXPECT_EQ(std::memcmp(raw(d), pcm.data(), pcm.size() * 4), 0);
  }
}

// A stream whose sixth frame changes the channel count, the sample rate or the bit depth.
std::vector<std::uint8_t> changing_stream(unsigned channels, unsigned rate, unsigned bps) {
  const auto pcm = test::make_signal(Signal::music, 2, 16, 4096 * 5, 3);
  test::VarEncoderOptions o;
  o.variable_blocksize = false;
  o.fixed_block = 4096;
  auto f = test::var_encode(pcm, o);
  const auto tail = test::make_signal(Signal::music, channels, bps, 4096, 4);
  std::vector<std::vector<std::int64_t>> planar(channels);
  for (std::size_t i = 0; i < tail.size(); ++i) planar[i % channels].push_back(tail[i]);
  const auto frame = test::flacbits::encode_frame(planar, bps, rate, false, 5);
  f.insert(f.end(), frame.begin(), frame.end());
  return f;
}

TEST(FlacDamage, ParameterChangesMidStreamAreRefusedClearly) {
  for (auto [ch, rate, bps] : {std::tuple{1u, 44100u, 16u}, {2u, 48000u, 16u}, {2u, 44100u, 24u}}) {
    const auto f = changing_stream(ch, rate, bps);
    std::vector<std::string> messages;
    for (Backend b : cpu_backends()) {
      try {
        decode(f, {.backend = b});
        ADD_FAILURE() << "a stream changing to " << ch << " ch " << rate << " Hz " << bps
                      << " bit was accepted";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("changes"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("byte"), std::string::npos) << e.what();
        messages.push_back(e.what());
      }
    }
    // Every backend names the same change at the same frame.
    for (const std::string& m : messages) EXPECT_EQ(m, messages.front());
  }
}

TEST(FlacDamage, OutputLimitRefusesOversizedStreams) {
  const auto f = encode(2, 16, 20000);
  for (Backend b : cpu_backends())
    EXPECT_THROW(decode(f, {.backend = b, .max_output_bytes = 1000}), Error);
}

}  // namespace
}  // namespace sigpu::flac
