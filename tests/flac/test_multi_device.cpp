// Multi-device decoding (DecodeOptions::devices): the split of a stream at verified frame
// starts and of a batch into byte shares, and the join, checked against whole-file decodes
// (themselves checked against libFLAC elsewhere) and libFLAC. The CPU tests run the same
// split and join code the GPU path runs, with a CPU backend decoding the parts; the Gpu tests
// run it on device 0, split into several parts (the path a machine with one GPU can take).
#include <gtest/gtest.h>

#include <sigpu/flac.hpp>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "flac/multi_device.hpp"
#include "flac/split.hpp"
#include "support/libflac_oracle.hpp"
#include "support/rng.hpp"
#include "support/signals.hpp"
#include "support/twin.hpp"
#include "support/var_encoder.hpp"

namespace sigpu::flac {
namespace {

namespace twin = test::twin;

std::vector<std::uint8_t> libflac_file(std::size_t samples, unsigned seed) {
  const auto pcm = test::make_signal(test::Signal::music, 2, 16, samples, seed);
  test::LibflacEncoderOptions lo;
  lo.level = 8;
  return test::encode_with_libflac(pcm, 2, 16, 44100, lo);
}

std::vector<std::uint8_t> variable_file(std::size_t samples) {
  test::VarEncoderOptions o;
  o.channels = 3;
  o.bits_per_sample = 24;
  o.max_block = 6000;
  return test::var_encode(test::make_signal(test::Signal::music, 3, 24, samples, 9), o);
}

/// Short files of growing length, each with its own variable block sizes.
std::vector<std::vector<std::uint8_t>> small_files(unsigned n, std::size_t first,
                                                   std::size_t step) {
  std::vector<std::vector<std::uint8_t>> files;
  for (unsigned i = 0; i < n; ++i) {
    test::VarEncoderOptions o;
    o.seed = i;
    files.push_back(
        test::var_encode(test::make_signal(test::Signal::music, 2, 16, first + step * i, i), o));
  }
  return files;
}

/// Parts decoded by the all-core CPU backend, through the same split and join as the GPU path;
/// a part whose PCM fits its place in the joined output is written there, as decode_into does.
/// `placed` counts those.
Decoded decode_cpu_parts(std::span<const std::uint8_t> f, DecodeOptions o, std::size_t parts,
                         std::atomic<std::size_t>* placed = nullptr) {
  o.backend = Backend::cpu_parallel;
  return decode_in_parts(f, o, parts,
                         [&](std::size_t, std::span<const std::uint8_t> part,
                             const DecodeOptions& po, std::span<std::uint8_t> into) {
                           Decoded d = decode(part, po);
                           if (!into.empty() && d.pcm.bytes.size() == into.size()) {
                             std::memcpy(into.data(), d.pcm.bytes.data(), into.size());
                             d.pcm.bytes = {};
                             if (placed) ++*placed;
                           }
                           return d;
                         });
}

void expect_parts_cover(std::span<const std::uint8_t> f, std::size_t parts, std::size_t want) {
  SCOPED_TRACE(std::to_string(parts) + " parts");
  const Stream s = parse_stream(f);
  const auto cuts = split_at_frames(f, s, parts);
  ASSERT_EQ(cuts.size(), want);
  EXPECT_EQ(cuts.front().begin, 0u);
  EXPECT_EQ(cuts.back().end, f.size());
  const DecodeOptions po{
      .backend = Backend::cpu,
      .params = StreamParams{s.info.sample_rate, s.info.channels, s.info.bits_per_sample}};
  const auto whole = test::decode_with_libflac(f);
  ASSERT_TRUE(whole.ok());
  std::uint64_t frames = 0, samples = 0;
  for (std::size_t k = 0; k < cuts.size(); ++k) {
    SCOPED_TRACE("part " + std::to_string(k));
    if (k) {
      EXPECT_EQ(cuts[k].begin, cuts[k - 1].end);
    }
    // Each part's frames on their own (the first part's after the metadata) are a clean run of
    // whole frames, starting at the sample its cut's frame header codes, and together they
    // hold libFLAC's samples in order.
    const std::uint64_t begin = k ? cuts[k].begin : s.audio_offset;
    ASSERT_LT(begin, cuts[k].end);
    const Decoded d = decode(f.subspan(begin, cuts[k].end - begin), po);
    EXPECT_EQ(d.report.damage.size(), 0u);
    EXPECT_EQ(cuts[k].first_sample, samples);
    ASSERT_LE((samples + d.pcm.samples) * 2, whole.samples.size());
    EXPECT_EQ(std::memcmp(d.pcm.bytes.data(), whole.samples.data() + samples * s.info.channels,
                          d.pcm.bytes.size()),
              0);
    frames += d.report.frames;
    samples += d.pcm.samples;
  }
  EXPECT_EQ(frames, whole.frames);
  EXPECT_EQ(samples, whole.decoded_samples);
}

TEST(FlacSplit, PartsAreRunsOfWholeFramesInOrder) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  const auto f = libflac_file(44100 * 20, 3);
  for (std::size_t parts : {1, 2, 3, 8}) expect_parts_cover(f, parts, parts);
}

TEST(FlacSplit, FewerFramesThanPartsGivesFewerParts) {
  test::VarEncoderOptions o;
  o.block_sizes = {4096};
  o.variable_blocksize = false;
  const auto f = test::var_encode(test::make_signal(test::Signal::music, 2, 16, 3 * 4096, 2), o);
  const Stream s = parse_stream(f);
  const auto cuts = split_at_frames(f, s, 8);
  ASSERT_GE(cuts.size(), 1u);
  EXPECT_LE(cuts.size(), 3u);
  const Decoded whole = decode(f, {.backend = Backend::cpu});
  EXPECT_EQ(decode_cpu_parts(f, {}, 8).pcm.bytes, whole.pcm.bytes);
}

TEST(FlacSplit, SharesAreContiguousAndBalancedByBytes) {
  using V = std::vector<std::uint64_t>;
  using B = std::vector<std::size_t>;
  EXPECT_EQ(share_by_bytes(V{10, 10, 10, 10}, 2), (B{0, 2, 4}));
  EXPECT_EQ(share_by_bytes(V{100, 1, 1, 1}, 2), (B{0, 1, 4}));
  EXPECT_EQ(share_by_bytes(V{1, 1, 1, 100}, 2), (B{0, 3, 4}));
  EXPECT_EQ(share_by_bytes(V{}, 3), (B{0, 0, 0, 0}));
  EXPECT_EQ(share_by_bytes(V{5}, 3), (B{0, 0, 1, 1}));
  test::Rng rng{11};
  for (int t = 0; t < 200; ++t) {
    V sizes(rng.next() % 50);
    std::uint64_t total = 0, biggest = 0;
    for (auto& s : sizes) {
      s = rng.next() % 1000;
      total += s;
      biggest = std::max(biggest, s);
    }
    const std::size_t parts = 1 + rng.next() % 6;
    const B b = share_by_bytes(sizes, parts);
    ASSERT_EQ(b.size(), parts + 1);
    EXPECT_EQ(b.front(), 0u);
    EXPECT_EQ(b.back(), sizes.size());
    for (std::size_t k = 0; k < parts; ++k) {
      ASSERT_LE(b[k], b[k + 1]);
      std::uint64_t bytes = 0;
      for (std::size_t i = b[k]; i < b[k + 1]; ++i) bytes += sizes[i];
      // Within one item (and rounding) of an equal share.
      EXPECT_LE(bytes, total / parts + biggest + 1) << "share " << k;
    }
  }
}

TEST(FlacSplit, DeviceListsAreChecked) {
  EXPECT_NO_THROW(check_device_list(std::vector<int>{1, 0}, 2));
  auto message = [](std::vector<int> d, std::size_t visible) {
    try {
      check_device_list(d, visible);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({0, 2}, 2).find("device 2 does not exist (2 visible: 0..1)"),
            std::string::npos);
  EXPECT_NE(message({-1}, 2).find("device -1 does not exist"), std::string::npos);
  EXPECT_NE(message({1, 0, 1}, 2).find("device 1 is listed twice"), std::string::npos);
  EXPECT_NE(message({}, 2).find("empty"), std::string::npos);
  for (const char* bad : {"", "0,", "a", "0,,1", "1x", "-1"}) {
    try {
      parse_devices(bad);
      ADD_FAILURE() << "'" << bad << "' accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("is not a device index"), std::string::npos) << e.what();
    }
  }
  if (cuda_devices().empty()) {
    EXPECT_THROW(parse_devices("all"), Error);
    EXPECT_THROW(parse_devices("0"), Error);
  }
}

TEST(FlacMultiDevice, JoinedPartsEqualTheWholeDecode) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  const auto f = libflac_file(44100 * 20, 4);
  for (auto [format, layout] : {std::pair{SampleFormat::raw32, Layout::interleaved},
                                {SampleFormat::s16, Layout::planar},
                                {SampleFormat::f32, Layout::interleaved}}) {
    const DecodeOptions o{.format = format, .layout = layout};
    DecodeOptions whole_o = o;
    whole_o.backend = Backend::cpu;
    const Decoded whole = decode(f, whole_o);
    for (std::size_t parts : {2, 3, 7}) {
      SCOPED_TRACE(std::to_string(parts) + " parts, format " + std::to_string(int(format)));
      std::atomic<std::size_t> placed = 0;
      const Decoded d = decode_cpu_parts(f, o, parts, &placed);
      // Interleaved parts of an intact file go straight to their place in the output.
      EXPECT_EQ(placed, layout == Layout::interleaved ? parts : 0);
      EXPECT_TRUE(d.report.ok());
      EXPECT_EQ(d.report.warnings.size(), 0u);
      EXPECT_EQ(d.report.frames, whole.report.frames);
      EXPECT_EQ(d.pcm.samples, whole.pcm.samples);
      EXPECT_EQ(d.pcm.layout, layout);
      EXPECT_TRUE(twin::equal(whole.pcm.bytes, d.pcm.bytes));
      EXPECT_EQ(d.report.md5, whole.report.md5);
    }
  }
}

TEST(FlacMultiDevice, VariableBlockSizesJoinExactly) {
  const auto f = variable_file(300000);
  const Decoded whole = decode(f, {.backend = Backend::cpu});
  ASSERT_TRUE(whole.report.ok());
  for (std::size_t parts : {2, 5}) {
    const Decoded d = decode_cpu_parts(f, {}, parts);
    EXPECT_EQ(d.report.md5, Md5Check::match);
    EXPECT_TRUE(twin::equal(whole.pcm.bytes, d.pcm.bytes));
  }
}

TEST(FlacMultiDevice, DamageKeepsItsPlaceInTheFile) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  auto f = libflac_file(44100 * 10, 5);
  const Stream s = parse_stream(f);
  // A broken frame in the middle of part 0, and a broken header where the second cut was: the
  // cut moves on to a frame after a good frame, and the damage is reported where the whole
  // decode reports it, its samples silent.
  const auto cuts = split_at_frames(f, s, 3);
  ASSERT_EQ(cuts.size(), 3u);
  f[(cuts[0].begin + cuts[0].end) / 2] ^= 0xFF;
  f[cuts[2].begin + 1] ^= 0x5A;
  ASSERT_GT(split_at_frames(f, s, 3)[2].begin, cuts[2].begin);
  const Decoded whole = decode(f, {.backend = Backend::cpu});
  ASSERT_FALSE(whole.report.damage.empty());
  const Decoded d = decode_cpu_parts(f, {}, 3);
  EXPECT_TRUE(twin::equal(whole.pcm.bytes, d.pcm.bytes));
  ASSERT_EQ(d.report.damage.size(), whole.report.damage.size());
  for (std::size_t i = 0; i < d.report.damage.size(); ++i) {
    EXPECT_EQ(d.report.damage[i].byte_offset, whole.report.damage[i].byte_offset);
    EXPECT_EQ(d.report.damage[i].first_sample, whole.report.damage[i].first_sample);
    EXPECT_EQ(d.report.damage[i].samples, whole.report.damage[i].samples);
    // Numbered in the file's decoding order: the damaged frame in part 0 takes a number too.
    EXPECT_EQ(d.report.damage[i].frame_number, whole.report.damage[i].frame_number);
  }
  EXPECT_EQ(d.report.frames, whole.report.frames);
  EXPECT_EQ(d.report.frames_numbered, whole.report.frames_numbered);
  EXPECT_NE(d.report.md5, Md5Check::match);
  EXPECT_EQ(d.report.warnings.size(), 0u);
  EXPECT_THROW(decode_cpu_parts(f, {.stop_on_damage = true}, 3), Error);
}

TEST(FlacMultiDevice, LostFirstFrameKeepsTheTiming) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  auto f = libflac_file(44100 * 10, 6);
  const Stream s = parse_stream(f);
  f[s.audio_offset + 1] ^= 0x5A;  // frame 0's sync code: a whole decode starts with silence
  const Decoded whole = decode(f, {.backend = Backend::cpu});
  ASSERT_FALSE(whole.report.damage.empty());
  const Decoded d = decode_cpu_parts(f, {}, 2);
  EXPECT_EQ(d.report.warnings.size(), 0u);
  EXPECT_TRUE(twin::equal(whole.pcm.bytes, d.pcm.bytes));
  ASSERT_EQ(d.report.damage.size(), whole.report.damage.size());
  EXPECT_EQ(d.report.damage[0].byte_offset, whole.report.damage[0].byte_offset);
  EXPECT_EQ(d.report.damage[0].samples, whole.report.damage[0].samples);
}

TEST(FlacMultiDevice, BatchSharesKeepTheOrderAndIsolateErrors) {
  const auto files = small_files(7, 4000, 3000);
  std::vector<std::span<const std::uint8_t>> spans(files.begin(), files.end());
  const DecodeOptions o{.backend = Backend::cpu};
  const auto want = decode_batch(spans, o);
  std::vector<std::size_t> seen;
  std::mutex m;
  // Every other file has an output of its own, of its PCM's size; the one of file 6 is short.
  std::vector<ByteBuffer> own(files.size());
  std::vector<std::span<std::uint8_t>> outs(files.size());
  for (std::size_t i = 0; i < files.size(); i += 2) {
    own[i].assign(want[i].decoded.pcm.bytes.size() - (i == 6 ? 4 : 0), 0xAB);
    outs[i] = own[i];
  }
  const auto got = decode_batch_in_shares(
      spans, outs, o, 3, [&](std::size_t k, auto share, auto share_outs, const DecodeOptions& po) {
        {
          std::lock_guard lock(m);
          seen.push_back(k);
        }
        if (k == 1) throw Error("share 1 failed");
        return decode_batch_into(share, share_outs, po);
      });
  ASSERT_EQ(got.size(), files.size());
  EXPECT_EQ(seen.size(), 3u);
  const auto bounds = share_by_bytes(
      std::vector<std::uint64_t>{files[0].size(), files[1].size(), files[2].size(), files[3].size(),
                                 files[4].size(), files[5].size(), files[6].size()},
      3);
  for (std::size_t i = 0; i < files.size(); ++i) {
    SCOPED_TRACE("file " + std::to_string(i));
    if (i >= bounds[1] && i < bounds[2]) {
      EXPECT_EQ(got[i].error, "share 1 failed");
    } else {
      ASSERT_TRUE(got[i].ok()) << got[i].error;
      const bool landed = i % 2 == 0 && i != 6;
      EXPECT_EQ(got[i].decoded.pcm.bytes.empty(), landed);
      EXPECT_EQ(got[i].decoded.pcm.samples, want[i].decoded.pcm.samples);
      EXPECT_TRUE(
          twin::equal(want[i].decoded.pcm.bytes, landed ? own[i] : got[i].decoded.pcm.bytes));
    }
  }
}

#ifdef SIGPU_HAVE_CUDA
TEST(FlacMultiGpu, PartsOnDeviceZeroEqualTheCpuDecode) {
  if (cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  const auto f = libflac_file(44100 * 30, 6);
  for (auto format : {SampleFormat::raw32, SampleFormat::s16}) {
    const Decoded whole = decode(f, {.backend = Backend::cpu, .format = format});
    for (std::size_t parts : {0, 2, 3}) {
      SCOPED_TRACE(std::to_string(parts) + " parts");
      DecodeOptions o{.backend = Backend::cuda, .format = format};
      o.devices = {0};
      o.parts = parts;
      const Decoded d = decode(f, o);
      EXPECT_TRUE(d.report.ok());
      EXPECT_EQ(d.report.md5, Md5Check::match);
      EXPECT_TRUE(twin::equal(whole.pcm.bytes, d.pcm.bytes));
    }
  }
  const auto v = variable_file(300000);
  DecodeOptions o{.backend = Backend::cuda};
  o.devices = parse_devices("all");
  o.parts = 4;
  EXPECT_TRUE(twin::equal(decode(v, {.backend = Backend::cpu}).pcm.bytes, decode(v, o).pcm.bytes));
}

TEST(FlacMultiGpu, BatchSplitsAcrossParts) {
  if (cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  const auto files = small_files(9, 20000, 7000);
  std::vector<std::span<const std::uint8_t>> spans(files.begin(), files.end());
  DecodeOptions o{.backend = Backend::cuda};
  o.devices = {0};
  o.parts = 3;
  const auto got = decode_batch(spans, o);
  ASSERT_EQ(got.size(), files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    ASSERT_TRUE(got[i].ok()) << got[i].error;
    EXPECT_TRUE(twin::equal(decode(files[i], {.backend = Backend::cpu}).pcm.bytes,
                            got[i].decoded.pcm.bytes));
  }
}

// The same on two real devices, each with its own engines, the parts landing in the caller's
// buffer; and a batch spread over them.
TEST(FlacMultiGpu, TwoDevicesEqualTheCpuDecode) {
  if (cuda_devices().size() < 2) GTEST_SKIP() << "fewer than two CUDA devices";
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  const auto f = libflac_file(44100 * 30, 6);
  const Decoded whole = decode(f, {.backend = Backend::cpu, .format = SampleFormat::s16});
  for (std::size_t parts : {0, 2, 4}) {
    SCOPED_TRACE(std::to_string(parts) + " parts");
    DecodeOptions o{.backend = Backend::cuda, .format = SampleFormat::s16};
    o.devices = {0, 1};
    o.parts = parts;
    std::vector<std::uint8_t> out(whole.pcm.bytes.size(), 0xAB);
    const Decoded d = decode_into(f, out, o);
    EXPECT_TRUE(d.report.ok());
    EXPECT_EQ(d.report.md5, Md5Check::match);
    EXPECT_TRUE(d.pcm.bytes.empty());
    EXPECT_TRUE(std::equal(out.begin(), out.end(), whole.pcm.bytes.begin()));
  }
  const auto files = small_files(9, 20000, 7000);
  std::vector<std::span<const std::uint8_t>> spans(files.begin(), files.end());
  DecodeOptions o{.backend = Backend::cuda};
  o.devices = {1, 0};
  const auto got = decode_batch(spans, o);
  ASSERT_EQ(got.size(), files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    ASSERT_TRUE(got[i].ok()) << got[i].error;
    EXPECT_TRUE(twin::equal(decode(files[i], {.backend = Backend::cpu}).pcm.bytes,
                            got[i].decoded.pcm.bytes));
  }
}

// The pool keeps nothing over its budget and decodes the same either way.
TEST(FlacMultiGpu, PoolBudgetBoundsWhatIsKept) {
  if (cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  const auto v = variable_file(300000);
  const auto want = decode(v, {.backend = Backend::cpu}).pcm.bytes;
  set_gpu_pool_budget(0);
  EXPECT_TRUE(twin::equal(want, decode(v, {.backend = Backend::cuda}).pcm.bytes));
  EXPECT_TRUE(twin::equal(want, decode(v, {.backend = Backend::cuda}).pcm.bytes));
  set_gpu_pool_budget(std::uint64_t{1} << 30);
  EXPECT_TRUE(twin::equal(want, decode(v, {.backend = Backend::cuda}).pcm.bytes));
  release_gpu_memory();
  EXPECT_TRUE(twin::equal(want, decode(v, {.backend = Backend::cuda}).pcm.bytes));
}

TEST(FlacMultiGpu, UnknownDeviceIsRefusedByName) {
  if (cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  const int missing = static_cast<int>(cuda_devices().size());
  DecodeOptions o{.backend = Backend::cuda};
  o.devices = {0, missing};
  try {
    decode(variable_file(20000), o);
    ADD_FAILURE() << "device " << missing << " accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("device " + std::to_string(missing) + " does not exist"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(parse_devices("0,0"), Error);
}
#endif

}  // namespace
}  // namespace sigpu::flac
