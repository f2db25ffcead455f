// Ranged decoding: decode_range / decode_ranges give exactly the samples a whole-file decode
// has at those positions, for ranges anywhere (the start, the end, across the end, inside one
// frame, many frames), with fixed and variable block sizes, with a SEEKTABLE (written by the
// `flac` tool), with a SEEKTABLE whose offsets lie, and without one.
#include <gtest/gtest.h>
#include <unistd.h>

#include <sigpu/flac.hpp>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "support/libflac_oracle.hpp"
#include "support/rng.hpp"
#include "support/signals.hpp"
#include "support/twin.hpp"
#include "support/var_encoder.hpp"

namespace sigpu::flac {
namespace {

namespace twin = test::twin;

namespace fs = std::filesystem;

std::vector<SampleRange> some_ranges(std::uint64_t total, unsigned rate, std::uint64_t seed) {
  std::vector<SampleRange> r = {{0, rate},      {0, 1},    {total - 5, 5}, {total - 100, 1000},
                                {total / 2, 1}, {4095, 2}, {4096, 4096},   {total / 3, total / 3}};
  test::Rng rng{seed};
  for (int i = 0; i < 24; ++i) r.push_back({rng.next() % total, 1 + rng.next() % (2 * rate)});
  return r;
}

/// Samples [first, first + count) of a whole decode, clamped to its end.
ByteBuffer expected(const Decoded& whole, SampleRange r) {
  const std::uint64_t first = std::min(r.first, whole.pcm.samples);
  const std::uint64_t count = std::min(r.count, whole.pcm.samples - first);
  const std::size_t frame = whole.pcm.channels * bytes_per_sample(whole.pcm.format);
  return {whole.pcm.bytes.begin() + first * frame,
          whole.pcm.bytes.begin() + (first + count) * frame};
}

/// An interleaved Pcm's bytes laid out a channel after another.
ByteBuffer to_planar(const Pcm& p) {
  const std::size_t v = bytes_per_sample(p.format);
  ByteBuffer out(p.bytes.size());
  for (std::uint64_t i = 0; i < p.samples; ++i)
    for (unsigned c = 0; c < p.channels; ++c)
      std::memcpy(&out[(c * p.samples + i) * v], &p.bytes[(i * p.channels + c) * v], v);
  return out;
}

void expect_ranges(std::span<const std::uint8_t> f, const std::string& what, Backend backend,
                   SampleFormat fmt = SampleFormat::raw32) {
  SCOPED_TRACE(what);
  const DecodeOptions o{.backend = backend, .format = fmt};
  const Decoded whole = decode(f, {.backend = Backend::cpu, .format = fmt});
  ASSERT_TRUE(whole.report.ok());
  const auto ranges = some_ranges(whole.pcm.samples, whole.pcm.sample_rate, f.size());
  const auto many = decode_ranges(f, ranges, o);
  ASSERT_EQ(many.size(), ranges.size());
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    SCOPED_TRACE("range " + std::to_string(ranges[i].first) + " +" +
                 std::to_string(ranges[i].count));
    ASSERT_TRUE(many[i].error.empty()) << many[i].error;
    EXPECT_TRUE(many[i].decoded.report.damage.empty());
    EXPECT_TRUE(twin::equal(expected(whole, ranges[i]), many[i].decoded.pcm.bytes))
        << "decode_ranges";
    if (i % 4 == 0) {
      const Decoded one = decode_range(f, ranges[i], o);
      EXPECT_TRUE(twin::equal(expected(whole, ranges[i]), one.pcm.bytes)) << "decode_range";
      EXPECT_EQ(one.report.md5, Md5Check::skipped);
      EXPECT_TRUE(one.report.ok());
      DecodeOptions po = o;
      po.layout = Layout::planar;
      const Decoded planar = decode_range(f, ranges[i], po);
      EXPECT_TRUE(twin::equal(to_planar(one.pcm), planar.pcm.bytes)) << "planar";
    }
  }
}

TEST(FlacRange, LibflacWithoutSeekTable) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  const auto pcm = test::make_signal(test::Signal::music, 2, 16, 44100 * 20, 3);
  test::LibflacEncoderOptions lo;
  lo.level = 8;
  const auto f = test::encode_with_libflac(pcm, 2, 16, 44100, lo);
  ASSERT_TRUE(parse_stream(f).seek_points.empty());
  expect_ranges(f, "libflac -8", Backend::cpu);
  expect_ranges(f, "libflac -8 s16", Backend::cpu_parallel, SampleFormat::s16);
}

TEST(FlacRange, VariableBlockSizes) {
  test::VarEncoderOptions o;
  o.channels = 3;
  o.bits_per_sample = 24;
  o.max_block = 6000;
  const auto pcm = test::make_signal(test::Signal::music, 3, 24, 200000, 9);
  expect_ranges(test::var_encode(pcm, o), "variable blocks", Backend::cpu_parallel);
}

/// A file written by the `flac` tool (with a SEEKTABLE every second), or empty without it.
std::vector<std::uint8_t> flac_tool_file(const std::vector<std::int32_t>& pcm) {
  const fs::path dir = fs::temp_directory_path() / ("sigpu_range_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::vector<std::uint8_t> raw;
  for (std::int32_t v : pcm) {
    raw.push_back(std::uint8_t(v));
    raw.push_back(std::uint8_t(v >> 8));
  }
  std::ofstream(dir / "in.raw", std::ios::binary)
      .write(reinterpret_cast<const char*>(raw.data()), std::streamsize(raw.size()));
  const std::string cmd =
      "flac -s -f -8 -S 1s --force-raw-format --endian=little --sign=signed "
      "--channels=2 --bps=16 --sample-rate=48000 -o '" +
      (dir / "out.flac").string() + "' '" + (dir / "in.raw").string() + "' 2>/dev/null";
  std::vector<std::uint8_t> out;
  if (std::system(cmd.c_str()) == 0) {
    std::ifstream in(dir / "out.flac", std::ios::binary);
    out.assign(std::istreambuf_iterator<char>(in), {});
  }
  fs::remove_all(dir);
  return out;
}

TEST(FlacRange, ThroughTheSeekTableEvenWhenItLies) {
  const auto pcm = test::make_signal(test::Signal::music, 2, 16, 48000 * 30, 4);
  auto f = flac_tool_file(pcm);
  if (f.empty()) GTEST_SKIP() << "the flac tool is not installed";
  const Stream s = parse_stream(f);
  ASSERT_GT(s.seek_points.size(), 20u);
  expect_ranges(f, "seek table", Backend::cpu);
  // Every seek point's offset moved by a few KB: the windows miss, grow, and still find the
  // range.
  for (const auto& b : s.blocks)
    if (b.type == 3)
      for (std::uint64_t at = b.offset + 4; at + 18 <= b.offset + 4 + b.length; at += 18)
        f[at + 14] ^= 0x15;  // byte 6 of the 8-byte offset: +- up to 84 KB
  expect_ranges(f, "lying seek table", Backend::cpu);
}

/// A range whose window holds a damaged frame: every backend gives the serial decoder's samples
/// (the damaged frame silent) and reports the damage at the same place in the file.
void expect_damaged_range(Backend backend) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  const auto pcm = test::make_signal(test::Signal::music, 2, 16, 44100 * 20, 7);
  auto f = test::encode_with_libflac(pcm, 2, 16, 44100, {});
  const std::size_t hit = f.size() / 2;
  f[hit] ^= 0x5a;
  const SampleRange r{44100 * 9, 44100 * 2};
  const Decoded want = decode_range(f, r, {.backend = Backend::cpu});
  ASSERT_FALSE(want.report.damage.empty());
  const Decoded got = decode_range(f, r, {.backend = backend});
  EXPECT_TRUE(twin::equal(want.pcm.bytes, got.pcm.bytes));
  ASSERT_EQ(got.report.damage.size(), want.report.damage.size());
  for (std::size_t i = 0; i < got.report.damage.size(); ++i) {
    EXPECT_EQ(got.report.damage[i].byte_offset, want.report.damage[i].byte_offset);
    EXPECT_EQ(got.report.damage[i].first_sample, want.report.damage[i].first_sample);
    EXPECT_LE(got.report.damage[i].byte_offset, hit);
  }
}

TEST(FlacRange, DamageInTheWindowIsReported) {
  expect_damaged_range(Backend::cpu_parallel);
}

TEST(FlacRange, RefusesWithoutTotalSamples) {
  test::VarEncoderOptions o;
  const auto pcm = test::make_signal(test::Signal::music, 2, 16, 20000, 1);
  auto f = test::var_encode(pcm, o);
  // STREAMINFO's total samples (36 bits at byte 8 + 13.5 of the block body) set to zero.
  const std::size_t si = 8;
  f[si + 13] &= 0xF0;
  for (int i = 14; i < 18; ++i) f[si + i] = 0;
  EXPECT_THROW(decode_range(f, {0, 100}), Error);
}

/// Ranges of several files in one call: files of two stream shapes (stereo 16-bit at 44.1 kHz,
/// 3 channels of 24 bits with variable blocks), a file given twice through two spans of the
/// same bytes, and junk. Each range equals that file's own decode; the junk's ranges fail alone.
void expect_file_ranges(Backend backend) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  const auto a = test::encode_with_libflac(
      test::make_signal(test::Signal::music, 2, 16, 44100 * 12, 11), 2, 16, 44100, {});
  test::VarEncoderOptions vo;
  vo.channels = 3;
  vo.bits_per_sample = 24;
  const auto b = test::var_encode(test::make_signal(test::Signal::music, 3, 24, 150000, 12), vo);
  const std::vector<std::uint8_t> junk(70000, 0x5a);
  const Decoded whole_a = decode(a, {.backend = Backend::cpu});
  const Decoded whole_b = decode(b, {.backend = Backend::cpu});
  std::vector<FileRange> ranges;
  std::vector<const Decoded*> whole;
  test::Rng rng{21};
  for (int i = 0; i < 30; ++i) {
    const int which = i % 3;
    if (which == 2) {
      ranges.push_back({junk, {0, 100}});
      whole.push_back(nullptr);
      continue;
    }
    const Decoded& w = which ? whole_b : whole_a;
    const std::span<const std::uint8_t> f = which ? std::span<const std::uint8_t>(b) : a;
    ranges.push_back({f, {rng.next() % w.pcm.samples, 1 + rng.next() % 50000}});
    whole.push_back(&w);
  }
  const auto got = decode_ranges(ranges, {.backend = backend});
  ASSERT_EQ(got.size(), ranges.size());
  // One range alone takes decode_range's way (all cores, the window's own index).
  const auto first = decode_ranges(std::span(ranges).first(1), {.backend = backend});
  ASSERT_EQ(first.size(), 1u);
  ASSERT_TRUE(first[0].error.empty()) << first[0].error;
  EXPECT_TRUE(twin::equal(expected(*whole[0], ranges[0].range), first[0].decoded.pcm.bytes));
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    SCOPED_TRACE("range " + std::to_string(i));
    if (!whole[i]) {
      EXPECT_FALSE(got[i].error.empty());
      continue;
    }
    ASSERT_TRUE(got[i].error.empty()) << got[i].error;
    EXPECT_EQ(got[i].decoded.pcm.channels, whole[i]->pcm.channels);
    EXPECT_EQ(got[i].decoded.pcm.sample_rate, whole[i]->pcm.sample_rate);
    EXPECT_TRUE(twin::equal(expected(*whole[i], ranges[i].range), got[i].decoded.pcm.bytes));
  }
}

TEST(FlacRange, RangesOfManyFiles) {
  expect_file_ranges(Backend::cpu_parallel);
}

#ifdef SIGPU_HAVE_CUDA
TEST(FlacRangeGpu, RangesOfManyFiles) {
  if (cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  expect_file_ranges(Backend::cuda);
}

TEST(FlacRangeGpu, RangesShareLaunches) {
  if (cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  const auto pcm = test::make_signal(test::Signal::music, 2, 16, 48000 * 30, 5);
  const auto f = test::encode_with_libflac(pcm, 2, 16, 48000, {});
  expect_ranges(f, "cuda", Backend::cuda);
  expect_ranges(f, "cuda s16", Backend::cuda, SampleFormat::s16);
}

TEST(FlacRangeGpu, DamageInTheWindowIsReported) {
  if (cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  expect_damaged_range(Backend::cuda);
}
#endif

}  // namespace
}  // namespace sigpu::flac
