// decode_batch: every file's result equals what decode() gives for it alone (bytes, damage,
// MD5), in order, with bad files reported one by one and the rest decoded. On the GPU the
// files of one channel count and bit depth share launches; mixed shapes, planar output (not
// packed), damage inside frames (one frame's CRC-16 alone included) and a poisoned output buffer
// check the packing.
#include <gtest/gtest.h>

#include <sigpu/flac.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/thread_pool.hpp"
#include "flac/backends.hpp"
#include "support/libflac_oracle.hpp"
#include "support/signals.hpp"
#include "support/twin.hpp"
#include "support/var_encoder.hpp"

#ifdef SIGPU_HAVE_CUDA
#include "core/cuda/buffer.hpp"
#include "flac/cuda/decode_path.hpp"
#endif

namespace sigpu::flac {
namespace {

namespace twin = test::twin;

struct Corpus {
  std::vector<std::vector<std::uint8_t>> files;
  std::vector<bool> bad;  ///< expected to fail as a whole (not a FLAC stream)
};

/// Clips of several shapes, one truncated, one damaged, one not FLAC at all.
Corpus make_corpus(unsigned clips) {
  Corpus c;
  auto add = [&](std::vector<std::uint8_t> f, bool bad = false) {
    c.files.push_back(std::move(f));
    c.bad.push_back(bad);
  };
  for (unsigned i = 0; i < clips; ++i) {
    const unsigned ch = 1 + i % 3, bps = i % 4 == 3 ? 24 : 16;
    const auto pcm = test::make_signal(test::Signal::music, ch, bps, 3000 + 997 * i, 40 + i);
    test::VarEncoderOptions o;
    o.channels = ch;
    o.bits_per_sample = bps;
    o.variable_blocksize = i % 2 == 0;
    o.max_block = 4608;
    o.seed = i;
    add(test::var_encode(pcm, o));
  }
  auto truncated = c.files[0];
  truncated.resize(truncated.size() * 2 / 3);
  add(truncated);
  auto damaged = c.files[1];
  for (std::size_t p = damaged.size() / 2; p < damaged.size() / 2 + 40; ++p) damaged[p] ^= 0x5A;
  add(damaged);
  // A frame whose CRC-16 alone is wrong: it still parses as its header says, so only a check of
  // the CRC finds it (the GPU batch links frames by numbers and checks the CRC as it decodes).
  auto crc_only = c.files[2];
  ThreadPool one(1);
  const std::vector<Candidate> cands = search_frames_cpu(crc_only, parse_stream(crc_only), one);
  for (const Candidate& x : cands)
    if (x.next >= 0 && x.pos > crc_only.size() / 3) {
      crc_only[cands[std::size_t(x.next)].pos - 1] ^= 0x01;
      break;
    }
  add(crc_only);
  add(std::vector<std::uint8_t>(5000, 0x42), true);
  add({}, true);
  return c;
}

void expect_batch_matches_single(const Corpus& c, const DecodeOptions& o) {
  std::vector<std::span<const std::uint8_t>> spans(c.files.begin(), c.files.end());
  const std::vector<BatchResult> batch = decode_batch(spans, o);
  ASSERT_EQ(batch.size(), c.files.size());
  for (std::size_t i = 0; i < c.files.size(); ++i) {
    SCOPED_TRACE("file " + std::to_string(i));
    if (c.bad[i]) {
      EXPECT_FALSE(batch[i].error.empty());
      EXPECT_FALSE(batch[i].ok());
      continue;
    }
    ASSERT_TRUE(batch[i].error.empty()) << batch[i].error;
    const Decoded& got = batch[i].decoded;
    // cpu-parallel batches give short files one core each: the serial reference, whose damage
    // reports count frames its own way; compare with the backend that ran.
    DecodeOptions single = o;
    single.backend = got.report.backend;
    const Decoded alone = decode(c.files[i], single);
    EXPECT_EQ(got.pcm.samples, alone.pcm.samples);
    EXPECT_EQ(got.pcm.channels, alone.pcm.channels);
    EXPECT_TRUE(twin::equal(alone.pcm.bytes, got.pcm.bytes)) << "PCM differs";
    EXPECT_EQ(got.report.md5, alone.report.md5);
    ASSERT_EQ(got.report.damage.size(), alone.report.damage.size());
    for (std::size_t d = 0; d < got.report.damage.size(); ++d)
      EXPECT_EQ(got.report.damage[d].message(), alone.report.damage[d].message());
  }
}

/// decode_batch_into over `arena` (at least the sum of the outputs, which follow each other
/// there): every good file gets an output of its single decode's size, which must receive the
/// PCM (its result without bytes), but with `short_ones` every fifth gets one a sample short,
/// which must be left alone (the PCM in its result's bytes, as decode_into does). The inputs
/// are `inputs` when given (the corpus's files elsewhere), else the corpus's own.
void expect_batch_into_matches_single(const Corpus& c, const DecodeOptions& o, std::uint8_t* arena,
                                      bool short_ones = true,
                                      std::vector<std::span<const std::uint8_t>> inputs = {}) {
  std::vector<std::span<const std::uint8_t>> spans =
      inputs.empty() ? std::vector<std::span<const std::uint8_t>>(c.files.begin(), c.files.end())
                     : inputs;
  std::vector<Decoded> alone(c.files.size());
  std::vector<std::span<std::uint8_t>> outs(c.files.size());
  for (std::size_t i = 0, at = 0; i < c.files.size(); ++i) {
    if (c.bad[i]) continue;
    DecodeOptions single = o;
    single.backend = o.backend == Backend::cpu_parallel ? Backend::cpu : o.backend;
    alone[i] = decode(c.files[i], single);
    const bool shorter = short_ones && i % 5 == 4;
    const std::size_t bytes = alone[i].pcm.bytes.size() - (shorter ? 4 : 0);
    std::memset(arena + at, 0x5A, bytes);
    outs[i] = {arena + at, bytes};
    at += bytes;
  }
  const std::vector<BatchResult> batch = decode_batch_into(spans, outs, o);
  ASSERT_EQ(batch.size(), c.files.size());
  for (std::size_t i = 0; i < c.files.size(); ++i) {
    SCOPED_TRACE("file " + std::to_string(i));
    if (c.bad[i]) {
      EXPECT_FALSE(batch[i].error.empty());
      continue;
    }
    ASSERT_TRUE(batch[i].error.empty()) << batch[i].error;
    const Decoded& got = batch[i].decoded;
    EXPECT_EQ(got.pcm.samples, alone[i].pcm.samples);
    EXPECT_EQ(got.report.md5, alone[i].report.md5);
    EXPECT_EQ(got.report.damage.size(), alone[i].report.damage.size());
    if ((short_ones && i % 5 == 4) || alone[i].pcm.bytes.empty()) {
      EXPECT_TRUE(twin::equal(alone[i].pcm.bytes, got.pcm.bytes)) << "PCM differs";
      EXPECT_TRUE(std::all_of(outs[i].begin(), outs[i].end(), [](auto b) { return b == 0x5A; }))
          << "an output of the wrong size was written";
    } else {
      EXPECT_TRUE(got.pcm.bytes.empty()) << "the PCM did not land in the output";
      EXPECT_TRUE(twin::equal(alone[i].pcm.bytes, ByteBuffer(outs[i].begin(), outs[i].end())))
          << "PCM differs";
    }
  }
}

std::size_t arena_bytes(const Corpus& c) {
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < c.files.size(); ++i)
    if (!c.bad[i]) bytes += decode(c.files[i], {.backend = Backend::cpu}).pcm.bytes.size();
  return bytes;
}

TEST(FlacBatch, IntoTheCallersOutputs) {
  const Corpus c = make_corpus(12);
  ByteBuffer arena(arena_bytes(c));
  expect_batch_into_matches_single(c, {.backend = Backend::cpu_parallel}, arena.data());
  std::vector<std::span<const std::uint8_t>> spans(c.files.begin(), c.files.end());
  std::vector<std::span<std::uint8_t>> too_few(2);
  EXPECT_THROW(decode_batch_into(spans, too_few, {}), UsageError);
}

TEST(FlacBatch, CpuParallelMatchesSingleDecodes) {
  const Corpus c = make_corpus(12);
  expect_batch_matches_single(c, {.backend = Backend::cpu_parallel});
  expect_batch_matches_single(c, {.backend = Backend::cpu, .format = SampleFormat::s16});
}

TEST(FlacBatch, StopOnDamageFailsOnlyTheDamagedFile) {
  const Corpus c = make_corpus(4);
  std::vector<std::span<const std::uint8_t>> spans(c.files.begin(), c.files.end());
  const auto batch =
      decode_batch(spans, {.backend = Backend::cpu_parallel, .stop_on_damage = true});
  for (std::size_t i = 0; i < 4; ++i) EXPECT_TRUE(batch[i].ok()) << batch[i].error;
  EXPECT_FALSE(batch[4].error.empty()) << "the truncated file";
  EXPECT_FALSE(batch[5].error.empty()) << "the damaged file";
}

#ifdef SIGPU_HAVE_CUDA
class FlacBatchGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
    cuda::set_output_fill(twin::kPoison);  // a sample the packed launch forgets shows up
  }
  void TearDown() override {
    cuda::set_output_fill(0);
    cuda::set_decode_path(cuda::DecodePath::automatic);
  }
};

TEST_F(FlacBatchGpu, PackedLaunchesMatchSingleDecodes) {
  const Corpus c = make_corpus(40);
  for (auto path : {cuda::DecodePath::fast, cuda::DecodePath::fast_warp_parse,
                    cuda::DecodePath::fast_flat, cuda::DecodePath::plain}) {
    cuda::set_decode_path(path);
    for (auto fmt : {SampleFormat::raw32, SampleFormat::s16, SampleFormat::f32})
      expect_batch_matches_single(c, {.backend = Backend::cuda, .format = fmt});
  }
  expect_batch_matches_single(c, {.backend = Backend::cuda, .layout = Layout::planar});
}

// Pageable outputs come down through staging, pinned ones by DMA (outputs that follow each other
// in one copy); inputs from pageable or pinned memory (runs of three files that follow each
// other, which go up in one copy and are spread on the device, then a gap of 5 bytes); the
// devices split the batch.
TEST_F(FlacBatchGpu, IntoTheCallersOutputs) {
  const Corpus c = make_corpus(30);
  const std::size_t bytes = arena_bytes(c);
  ByteBuffer pageable(bytes);
  sigpu::cuda::PinnedBuffer<std::uint8_t> pinned(bytes);
  std::size_t in_bytes = 0;
  for (const auto& f : c.files) in_bytes += f.size() + 5;
  sigpu::cuda::PinnedBuffer<std::uint8_t> pinned_in(in_bytes);
  std::vector<std::span<const std::uint8_t>> inputs;
  for (std::size_t i = 0, at = 0; i < c.files.size(); ++i) {
    std::copy(c.files[i].begin(), c.files[i].end(), pinned_in.get() + at);
    inputs.emplace_back(pinned_in.get() + at, c.files[i].size());
    at += c.files[i].size() + (i % 3 == 2 ? 5 : 0);
  }
  std::vector<int> devices;
  for (const auto& d : cuda_devices()) devices.push_back(d.index);
  for (auto* arena : {pageable.data(), pinned.get()}) {
    SCOPED_TRACE(arena == pinned.get() ? "pinned" : "pageable");
    for (bool short_ones : {true, false}) {
      SCOPED_TRACE(short_ones ? "some outputs short" : "every output its size");
      const DecodeOptions one{.backend = Backend::cuda};
      const DecodeOptions all{.backend = Backend::cuda, .devices = devices};
      expect_batch_into_matches_single(c, one, arena, short_ones);
      expect_batch_into_matches_single(c, all, arena, short_ones);
      expect_batch_into_matches_single(c, one, arena, short_ones, inputs);
      expect_batch_into_matches_single(c, all, arena, short_ones, inputs);
    }
  }
}

TEST_F(FlacBatchGpu, LibflacClipsOfOneShape) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  Corpus c;
  for (unsigned i = 0; i < 30; ++i) {
    const auto pcm = test::make_signal(test::Signal::music, 2, 16, 20000 + 311 * i, i);
    test::LibflacEncoderOptions o;
    o.level = i % 9;
    c.files.push_back(test::encode_with_libflac(pcm, 2, 16, 48000, o));
    c.bad.push_back(false);
  }
  expect_batch_matches_single(c, {.backend = Backend::cuda, .format = SampleFormat::s16});
}
#endif

}  // namespace
}  // namespace sigpu::flac
