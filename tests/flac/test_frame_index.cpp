// Two shortcuts of the CUDA backend, checked against the frame index they stand for: the spans
// of the output that no frame covers (silenced, instead of clearing the whole output), and the
// frames of an unbroken chain (decoded while the host still builds the index).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "core/thread_pool.hpp"
#include "flac/backends.hpp"
#include "flac/frame_index.hpp"
#include "support/libflac_oracle.hpp"
#include "support/rng.hpp"
#include "support/signals.hpp"

namespace sigpu::flac {
namespace {

FrameIndex index_of(std::vector<std::pair<std::uint64_t, std::uint32_t>> frames,
                    std::uint64_t total) {
  FrameIndex index;
  for (auto [first, n] : frames) index.frames.push_back({0, 0, first, n});
  index.total_samples = total;
  return index;
}

TEST(FlacFrameIndex, UncoveredSamplesAreTheGapsBetweenFramesAndAtTheEnds) {
  using Spans = std::vector<SampleSpan>;
  EXPECT_EQ(uncovered_samples(index_of({{0, 100}, {100, 100}}, 200)), Spans{});
  EXPECT_EQ(uncovered_samples(index_of({}, 50)), (Spans{{0, 50}}));
  EXPECT_EQ(uncovered_samples(index_of({{10, 100}, {150, 50}}, 300)),
            (Spans{{0, 10}, {110, 150}, {200, 300}}));
  // A frame past the stream's length (STREAMINFO shorter than the frames) covers it to the end.
  EXPECT_EQ(uncovered_samples(index_of({{0, 100}, {180, 100}}, 200)), (Spans{{100, 180}}));
  EXPECT_EQ(uncovered_samples(index_of({{0, 100}, {250, 100}}, 200)), (Spans{{100, 200}}));
  // Overlapping frames (a hostile stream's numbering) cover the union of their spans.
  EXPECT_EQ(uncovered_samples(index_of({{0, 100}, {50, 20}, {100, 10}}, 120)), (Spans{{110, 120}}));
}

/// A libFLAC stream of music: its shape and encoder settings.
struct Encoded {
  unsigned channels, bps, level, blocksize;
  std::size_t samples;

  std::string what() const {
    return std::to_string(channels) + " ch, " + std::to_string(bps) + " bit, -" +
           std::to_string(level) + ", blocks of " + std::to_string(blocksize);
  }
  std::vector<std::uint8_t> bytes(unsigned seed) const {
    test::LibflacEncoderOptions o;
    o.level = level;
    o.blocksize = blocksize;
    const auto pcm = test::make_signal(test::Signal::music, channels, bps, samples, seed);
    return test::encode_with_libflac(pcm, channels, bps, 48000, o);
  }
};

TEST(FlacFrameIndex, ChainedFramesAreTheIndexOfAnUnbrokenStream) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  ThreadPool pool(2);
  for (const Encoded& k : {Encoded{2, 16, 8, 4096, 100000}, Encoded{1, 24, 0, 1152, 50000},
                           Encoded{6, 16, 5, 576, 30000}, Encoded{2, 16, 5, 4096, 4096}}) {
    const std::string what = k.what();
    auto f = k.bytes(3);
    const Stream st = parse_stream(f);
    const std::vector<Candidate> cands = search_frames_cpu(f, st, pool);
    const FrameIndex index = build_frame_index(cands, st, std::nullopt, f.size(), host_probe(f));
    std::vector<FrameEntry> chained(cands.size());
    // Without their successors (the GPU decodes before the links are made), the same frames.
    std::vector<Candidate> unlinked = cands;
    for (Candidate& c : unlinked) c.next = -1;
    std::vector<FrameEntry> early(cands.size());
    ASSERT_EQ(chained_frames(unlinked, st, false, early.data()), index.frames.size()) << what;
    ASSERT_EQ(chained_frames(cands, st, true, chained.data()), index.frames.size()) << what;
    for (std::size_t i = 0; i < chained.size(); ++i) {
      const FrameEntry& a = chained[i];
      const FrameEntry& b = index.frames[i];
      EXPECT_EQ(a.pos, b.pos) << what << ", frame " << i;
      EXPECT_EQ(a.end, i + 1 < chained.size() ? b.end : 0u) << what << ", frame " << i;
      EXPECT_EQ(a.out_sample, b.out_sample) << what << ", frame " << i;
      EXPECT_EQ(a.block_size, b.block_size) << what << ", frame " << i;
      EXPECT_TRUE(early[i].pos == a.pos && early[i].end == a.end &&
                  early[i].out_sample == a.out_sample && early[i].block_size == a.block_size)
          << what << ", frame " << i;
    }
    // A damaged frame breaks the chain. A damaged last frame does not, nor does a stream cut
    // inside its last frame: only a decode of that frame can tell, and the index built from
    // it then disagrees (the CUDA backend decodes again from the index).
    if (cands.size() < 3) continue;
    auto damaged = f;
    damaged[cands[cands.size() / 2].pos + 20] ^= 0x10;
    EXPECT_EQ(chained_frames(search_frames_cpu(damaged, st, pool), st, true, chained.data()), 0u)
        << what;
    f.resize(f.size() - 10);
    const std::vector<Candidate> cut = search_frames_cpu(f, st, pool);
    EXPECT_EQ(chained_frames(cut, st, true, chained.data()), cands.size()) << what;
    EXPECT_EQ(build_frame_index(cut, st, std::nullopt, f.size(), host_probe(f)).frames.size(),
              cands.size() - 1)
        << what;
  }
}

// An unbroken stream's index is made in one pass (unbroken_index); with its first frame left
// unlinked the walk makes it instead, and the two must agree in everything. Junk after the
// last frame, a cut last frame and a damaged frame are not unbroken: the walk makes both.
TEST(FlacFrameIndex, UnbrokenStreamsIndexAsTheWalkIndexesThem) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  ThreadPool pool(2);
  std::size_t compared = 0;
  for (const Encoded& k :
       {Encoded{2, 16, 8, 4096, 100000}, Encoded{1, 24, 0, 1152, 50000},
        Encoded{6, 16, 5, 576, 30000}, Encoded{2, 16, 5, 4096, 4096}, Encoded{2, 8, 3, 192, 7001}})
    for (int variant = 0; variant < 4; ++variant) {
      const std::string what = k.what() + ", variant " + std::to_string(variant);
      auto f = k.bytes(5);
      const Stream st = parse_stream(f);
      const std::size_t audio = st.audio_offset;
      if (variant == 1) f.insert(f.end(), {0x12, 0x34, 0x56});      // junk after the last frame
      if (variant == 2) f.resize(f.size() - 7);                     // the last frame cut
      if (variant == 3) f[audio + (f.size() - audio) / 2] ^= 0x08;  // a damaged frame
      const std::vector<Candidate> cands = search_frames_cpu(f, st, pool);
      ASSERT_FALSE(cands.empty()) << what;
      std::vector<Candidate> unlinked = cands;
      unlinked.front().next = -1;
      const FrameIndex a = build_frame_index(cands, st, std::nullopt, f.size(), host_probe(f));
      const FrameIndex b = build_frame_index(unlinked, st, std::nullopt, f.size(), host_probe(f));
      ASSERT_EQ(a.frames.size(), b.frames.size()) << what;
      for (std::size_t i = 0; i < a.frames.size(); ++i) {
        const FrameEntry &x = a.frames[i], &y = b.frames[i];
        ASSERT_TRUE(x.pos == y.pos && x.end == y.end && x.out_sample == y.out_sample &&
                    x.block_size == y.block_size)
            << what << ", frame " << i;
      }
      EXPECT_EQ(a.total_samples, b.total_samples) << what;
      EXPECT_EQ(a.warnings, b.warnings) << what;
      ASSERT_EQ(a.damage.size(), b.damage.size()) << what;
      for (std::size_t i = 0; i < a.damage.size(); ++i) {
        const Damage &x = a.damage[i], &y = b.damage[i];
        EXPECT_TRUE(x.byte_offset == y.byte_offset && x.byte_length == y.byte_length &&
                    x.frame_number == y.frame_number && x.first_sample == y.first_sample &&
                    x.samples == y.samples && x.what == y.what)
            << what << ", damage " << i;
      }
      EXPECT_EQ(a.damage.empty() && a.warnings.empty(), variant == 0) << what;
      ++compared;
    }
  EXPECT_EQ(compared, 20u);
}

// index_is_chain tells from counts alone that the index lists the chain's frames; here every
// frame is compared wherever it says so, over clean streams and hundreds of damaged copies
// (bytes flipped, cut, syncs planted in the audio, frames dropped or doubled).
TEST(FlacFrameIndex, IndexIsChainOnlyWhenItListsTheChain) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  ThreadPool pool(2);
  test::Rng rng{23};
  std::size_t held = 0, refused = 0;
  for (unsigned level : {0u, 8u}) {
    test::LibflacEncoderOptions o;
    o.level = level;
    o.blocksize = 576;
    const auto pcm = test::make_signal(test::Signal::music, 2, 16, 20000, 3 + level);
    const auto clean = test::encode_with_libflac(pcm, 2, 16, 48000, o);
    const Stream st = parse_stream(clean);
    const std::vector<Candidate> frames = search_frames_cpu(clean, st, pool);
    for (unsigned t = 0; t < 600; ++t) {
      auto f = clean;
      const std::size_t audio = frames.front().pos;
      auto frame = [&] { return frames[rng.below(static_cast<unsigned>(frames.size()))]; };
      switch (t % 6) {
        case 5: {  // whole: another encode
          test::LibflacEncoderOptions w;
          w.level = rng.below(9);
          w.blocksize = std::vector<unsigned>{192, 576, 1152, 4096}[rng.below(4)];
          f = test::encode_with_libflac(
              test::make_signal(test::Signal::music, 2, 16, 5000 + rng.below(20000), t), 2, 16,
              48000, w);
          break;
        }
        case 0:  // bits flipped anywhere in the audio
          for (unsigned k = 1 + rng.below(3); k > 0; --k)
            f[audio + rng.below(static_cast<unsigned>(f.size() - audio))] ^=
                std::uint8_t(1u << rng.below(8));
          break;
        case 1:  // cut
          f.resize(audio + rng.below(static_cast<unsigned>(f.size() - audio)) + 1);
          break;
        case 2: {  // a frame's header copied into the middle of another frame
          const Candidate a = frame(), b = frame();
          const std::size_t at = b.pos + 8 + rng.below(200);
          if (at + 16 < f.size()) std::copy_n(clean.begin() + a.pos, 16, f.begin() + at);
          break;
        }
        case 3: {  // a frame dropped
          const Candidate a = frame();
          const auto next = std::find_if(frames.begin(), frames.end(),
                                         [&](const Candidate& c) { return c.pos > a.pos; });
          if (next != frames.end())
            f.erase(f.begin() + a.pos, f.begin() + static_cast<std::ptrdiff_t>(next->pos));
          break;
        }
        default: {  // a frame doubled
          const Candidate a = frame();
          const auto next = std::find_if(frames.begin(), frames.end(),
                                         [&](const Candidate& c) { return c.pos > a.pos; });
          const std::size_t end = next != frames.end() ? next->pos : f.size();
          f.insert(f.begin() + static_cast<std::ptrdiff_t>(end), clean.begin() + a.pos,
                   clean.begin() + static_cast<std::ptrdiff_t>(end));
          break;
        }
      }
      const Stream fs = parse_stream(f);
      const std::vector<Candidate> cands = search_frames_cpu(f, fs, pool);
      std::vector<FrameEntry> chain(cands.size());
      chain.resize(chained_frames(cands, fs, false, chain.data()));
      FrameIndex index;
      try {
        index = build_frame_index(cands, fs, std::nullopt, f.size(), host_probe(f));
      } catch (const Error&) {
        continue;  // a stream the index refuses is decoded by no one
      }
      if (chain.empty()) continue;  // nothing decoded early: nothing to compare
      if (!index_is_chain(index, chain.size())) {
        ++refused;
        continue;
      }
      ++held;
      const std::string what = "level " + std::to_string(level) + ", case " + std::to_string(t);
      for (std::size_t k = 0; k < chain.size(); ++k) {
        const FrameEntry& a = chain[k];
        const FrameEntry& b = index.frames[k];
        ASSERT_TRUE(a.pos == b.pos && a.out_sample == b.out_sample &&
                    a.block_size == b.block_size && (k + 1 == chain.size() || a.end == b.end))
            << what << ", frame " << k;
      }
    }
  }
  // Both answers were met often where a chain was found (flips in the audio mostly leave it
  // whole, and the frames' CRC-16 then tells the index).
  EXPECT_GT(held, 50u);
  EXPECT_GT(refused, 50u);
}

}  // namespace
}  // namespace sigpu::flac
