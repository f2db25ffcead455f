// Bit-exact decoding of x265 all-intra streams against FFmpeg, and every picture's hash SEI.
#include <gtest/gtest.h>

#include <sigpu/hevc.hpp>

#include "hevc/streams.hpp"

namespace sigpu::hevc {
namespace {

using testing::StreamSpec;

using testing::problems_text;
using Decoded = testing::RawDecode;

Decoded decode_all(const std::vector<std::uint8_t>& data, DecodeOptions o) {
  Decoded d;
  Decoder dec(o);
  dec.decode(data, [&](const Frame& f) { d.add(f); });
  d.problems = dec.problems();
  return d;
}

class HevcVsFfmpeg : public ::testing::TestWithParam<StreamSpec> {};

TEST_P(HevcVsFfmpeg, BitExactAndHashesMatch) {
  const StreamSpec& spec = GetParam();
  if (!testing::have_tools()) GTEST_SKIP() << "x265 or ffmpeg not installed";
  if (spec.filtered() && !Decoder::filters_available())
    GTEST_SKIP() << "stream needs deblocking/SAO and this build has no hevc_filter module";
  const auto path = testing::stream_path(spec);
  ASSERT_FALSE(path.empty()) << "could not make " << spec.name;
  const auto data = testing::read_file(path);
  const auto ref = testing::reference(spec);
  const Decoded d = decode_all(data, {.backend = Backend::cpu});
  EXPECT_TRUE(d.problems.empty()) << problems_text(d.problems);
  ASSERT_EQ(d.frames.size(), static_cast<std::size_t>(spec.frames));
  for (const Frame& f : d.frames) {
    EXPECT_EQ(f.hash, HashStatus::matched) << "picture " << f.decode_index;
    EXPECT_TRUE(f.filtered);
  }
  ASSERT_EQ(d.bytes.size(), ref.size());
  if (testing::ffmpeg_verified(spec))
    EXPECT_TRUE(d.bytes == ref) << spec.name << ": output differs from FFmpeg's";
  else
    EXPECT_FALSE(d.bytes == ref) << spec.name << ": FFmpeg failed its MD5 check, yet matches";
}

// cpu-parallel decodes whole pictures on the thread pool (and filters them there): the same
// frames, in the same order, with the same hash results and problems.
TEST_P(HevcVsFfmpeg, ParallelBackendIdentical) {
  const StreamSpec& spec = GetParam();
  if (!testing::have_tools()) GTEST_SKIP() << "x265 or ffmpeg not installed";
  const auto path = testing::stream_path(spec);
  ASSERT_FALSE(path.empty());
  const auto data = testing::read_file(path);
  const Decoded a = decode_all(data, {.backend = Backend::cpu});
  const Decoded b = decode_all(data, {.backend = Backend::cpu_parallel});
  EXPECT_TRUE(a.bytes == b.bytes);
  ASSERT_EQ(a.frames.size(), b.frames.size());
  for (std::size_t i = 0; i < a.frames.size(); ++i) {
    EXPECT_EQ(a.frames[i].poc, b.frames[i].poc);
    EXPECT_EQ(a.frames[i].decode_index, b.frames[i].decode_index);
    EXPECT_EQ(a.frames[i].hash, b.frames[i].hash);
  }
  EXPECT_EQ(problems_text(a.problems), problems_text(b.problems));
}

std::string name_of(const ::testing::TestParamInfo<StreamSpec>& i) {
  return i.param.name;
}

INSTANTIATE_TEST_SUITE_P(Streams, HevcVsFfmpeg, ::testing::ValuesIn(testing::standard_streams()),
                         name_of);

// The unfiltered reconstruction differs from the filtered picture, and its hash is reported as
// not checked rather than as a mismatch.
TEST(HevcUnfiltered, OutputIsBeforeTheFiltersAndHashUnchecked) {
  if (!testing::have_tools()) GTEST_SKIP() << "x265 or ffmpeg not installed";
  const StreamSpec& spec = testing::standard_streams()[3];  // filt8_ctu16
  ASSERT_TRUE(spec.filtered());
  const auto data = testing::read_file(testing::stream_path(spec));
  const Decoded raw = decode_all(data, {.unfiltered = true});
  EXPECT_TRUE(raw.problems.empty()) << problems_text(raw.problems);
  ASSERT_EQ(raw.frames.size(), 2u);
  for (const Frame& f : raw.frames) {
    EXPECT_FALSE(f.filtered);
    EXPECT_EQ(f.hash, HashStatus::unchecked);
  }
  if (!Decoder::filters_available()) return;
  const Decoded filtered = decode_all(data, {});
  EXPECT_FALSE(raw.bytes == filtered.bytes);
}

}  // namespace
}  // namespace sigpu::hevc
