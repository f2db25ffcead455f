// P and B pictures: bit-exact decoding of x265 inter streams against FFmpeg and every picture's
// MD5 SEI, the same frames from every schedule, and a stream started at a CRA picture.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include <sigpu/hevc.hpp>

#include "hevc/schedule.hpp"
#include "hevc/streams.hpp"

namespace sigpu::hevc {
namespace {

using testing::StreamSpec;

using testing::problems_text;
using Decoded = testing::RawDecode;

Decoded run(const std::vector<std::uint8_t>& data, const Schedule& schedule) {
  Decoded d;
  d.problems = decode_with(schedule, {}, data, [&](const Frame& f) { d.add(f); });
  return d;
}

class HevcInter : public ::testing::TestWithParam<StreamSpec> {};

// Every picture matches its MD5 SEI and FFmpeg's frame, in output order; the parallel schedule,
// the pipelined one (with the CPU filter here) and the record pipeline's (with the stages' CPU
// twins) give the same frames.
TEST_P(HevcInter, BitExactWithFfmpegAndMd5OnEverySchedule) {
  const StreamSpec& spec = GetParam();
  if (!testing::have_tools()) GTEST_SKIP() << "x265 or ffmpeg not installed";
  if (!Decoder::filters_available()) GTEST_SKIP() << "inter pictures need the hevc_filter module";
  const auto path = testing::stream_path(spec);
  ASSERT_FALSE(path.empty()) << "could not make " << spec.name;
  const auto data = testing::read_file(path);
  const auto ref = testing::reference(spec);
  const Decoded d = run(data, schedule_for(Backend::cpu));
  EXPECT_TRUE(d.problems.empty()) << problems_text(d.problems);
  ASSERT_EQ(d.frames.size(), static_cast<std::size_t>(spec.frames));
  for (std::size_t i = 0; i < d.frames.size(); ++i) {
    EXPECT_EQ(d.frames[i].hash, HashStatus::matched) << "frame " << i;
    if (i > 0) {
      EXPECT_GT(d.frames[i].poc, d.frames[i - 1].poc) << "frame " << i;
    }
  }
  ASSERT_EQ(d.bytes.size(), ref.size());
  if (testing::ffmpeg_verified(spec))
    EXPECT_TRUE(d.bytes == ref) << spec.name << ": output differs from FFmpeg's";
  else
    EXPECT_FALSE(d.bytes == ref) << spec.name << ": FFmpeg failed its MD5 check, yet matches";

  const Schedule pipelined{.parallel = true, .pipelined = true, .filter = Backend::cpu};
  const Schedule records{.parallel = true, .records = Backend::cpu};
  for (const Schedule& s : {schedule_for(Backend::cpu_parallel), pipelined, records}) {
    const Decoded p = run(data, s);
    EXPECT_TRUE(p.bytes == d.bytes)
        << "pipelined " << s.pipelined << ", records " << s.records.has_value();
    EXPECT_EQ(problems_text(p.problems), problems_text(d.problems));
    ASSERT_EQ(p.frames.size(), d.frames.size());
    for (std::size_t i = 0; i < p.frames.size(); ++i) EXPECT_EQ(p.frames[i].hash, d.frames[i].hash);
  }
}

std::string name_of(const ::testing::TestParamInfo<StreamSpec>& i) {
  return i.param.name;
}

INSTANTIATE_TEST_SUITE_P(Streams, HevcInter, ::testing::ValuesIn(testing::inter_streams()),
                         name_of);

const StreamSpec& spec_named(const std::string& name) {
  for (const StreamSpec& s : testing::inter_streams())
    if (s.name == name) return s;
  throw std::runtime_error("no stream " + name);
}

// A sink that takes each frame by swapping in one it took before, filled with junk of another
// size, gets the frames a copying sink gets: the decoder reuses what it is left, never reads it.
TEST(HevcInterFrames, ASinkMayTakeTheFrameAndLeaveAnotherInItsPlace) {
  if (!testing::have_tools()) GTEST_SKIP() << "x265 or ffmpeg not installed";
  if (!Decoder::filters_available()) GTEST_SKIP() << "inter pictures need the hevc_filter module";
  const StreamSpec& spec = spec_named("b3_pyramid");
  const auto data = testing::read_file(testing::stream_path(spec));
  for (const Backend b : {Backend::cpu, Backend::cpu_parallel}) {
    Decoded copied, taken;
    std::vector<std::vector<std::uint16_t>> luma;
    Decoder(DecodeOptions{.backend = b}).decode(data, [&](const Frame& f) {
      copied.add(f);
      luma.push_back(f.planes[0]);
    });
    std::vector<Frame> kept;
    Frame spent;
    Decoder(DecodeOptions{.backend = b}).decode(data, [&](Frame& f) {
      taken.add(f);
      std::swap(f, spent);  // the decoder gets the junk frame, the sink the picture
      kept.push_back(spent);
      for (auto& plane : spent.planes) plane.assign(7 + kept.size(), 0xffff);
    });
    ASSERT_EQ(taken.frames.size(), static_cast<std::size_t>(spec.frames));
    EXPECT_TRUE(taken.bytes == copied.bytes) << "backend " << static_cast<int>(b);
    for (std::size_t i = 0; i < kept.size(); ++i)
      EXPECT_TRUE(kept[i].planes[0] == luma[i]) << "frame " << i;
  }
}

// Frames stay on the device only where the GPU reconstructs them; elsewhere the option is
// refused before any byte is decoded.
TEST(HevcInterFrames, FramesOnTheDeviceAreRefusedWithoutTheRecordPipelineOnTheGpu) {
  for (const Backend b : {Backend::cpu, Backend::cpu_parallel})
    EXPECT_THROW(Decoder(DecodeOptions{.backend = b, .frames_on_device = true}), UsageError);
  const Schedule records_on_cpu{.parallel = true, .records = Backend::cpu};
  EXPECT_THROW(decode_with(records_on_cpu, {.frames_on_device = true}, {}, [](Frame&) {}),
               UsageError);
  Frame host;  // a frame on the host is left as it is
  host.planes[0] = {1, 2, 3};
  copy_to_host(host);
  EXPECT_EQ(host.planes[0], (std::vector<std::uint16_t>{1, 2, 3}));
}

// Offsets of the NAL units' start codes (00 00 01) and their types.
std::vector<std::pair<std::size_t, int>> nal_units(const std::vector<std::uint8_t>& d) {
  std::vector<std::pair<std::size_t, int>> v;
  for (std::size_t i = 0; i + 3 < d.size(); ++i)
    if (d[i] == 0 && d[i + 1] == 0 && d[i + 2] == 1) v.emplace_back(i, (d[i + 3] >> 1) & 63);
  return v;
}

// A stream cut just before its second CRA picture (with the parameter sets x265 repeats there):
// the RASL pictures after the CRA refer to pictures before it and are skipped; every other
// picture decodes, matches its MD5, and the frames are FFmpeg's for the same bytes.
TEST(HevcInterCut, StartsAtCraAndSkipsItsRaslPictures) {
  if (!testing::have_tools()) GTEST_SKIP() << "x265 or ffmpeg not installed";
  if (!Decoder::filters_available()) GTEST_SKIP() << "inter pictures need the hevc_filter module";
  const StreamSpec& spec = spec_named("open_gop");
  const auto path = testing::stream_path(spec);
  ASSERT_FALSE(path.empty());
  const auto data = testing::read_file(path);
  const auto nals = nal_units(data);
  std::size_t k = 0;
  int cras = 0, rasl = 0;
  for (std::size_t i = 0; i < nals.size(); ++i) {
    if (nals[i].second == 21 && ++cras == 2) k = i;
    if (cras >= 2 && (nals[i].second == 8 || nals[i].second == 9)) ++rasl;
  }
  ASSERT_GT(k, 0u) << "the stream has no second CRA picture";
  ASSERT_GT(rasl, 0) << "the second CRA picture has no RASL pictures";
  while (k > 0 && nals[k - 1].second >= 32 && nals[k - 1].second <= 39) --k;  // VPS..prefix SEI
  std::size_t start = nals[k].first;
  if (start > 0 && data[start - 1] == 0) --start;  // the four-byte start code
  const std::vector<std::uint8_t> cut(data.begin() + static_cast<std::ptrdiff_t>(start),
                                      data.end());
  const auto cut_path = testing::data_dir("hevc-streams") / "open_gop_cut.hevc";
  {
    std::ofstream(cut_path, std::ios::binary)
        .write(reinterpret_cast<const char*>(cut.data()), static_cast<std::streamsize>(cut.size()));
  }
  const auto ref_path = testing::data_dir("hevc-streams") / "open_gop_cut.ref";
  ASSERT_EQ(
      std::system(("ffmpeg -hide_banner -loglevel error -nostdin -y -i \"" + cut_path.string() +
                   "\" -f rawvideo -pix_fmt yuv420p \"" + ref_path.string() + "\"")
                      .c_str()),
      0);
  const auto ref = testing::read_file(ref_path);
  const Decoded d = run(cut, schedule_for(Backend::cpu));
  EXPECT_TRUE(d.problems.empty()) << problems_text(d.problems);
  ASSERT_FALSE(d.frames.empty());
  for (const Frame& f : d.frames) EXPECT_EQ(f.hash, HashStatus::matched) << "POC " << f.poc;
  EXPECT_TRUE(d.bytes == ref) << "differs from FFmpeg's decoding of the cut stream";
}

// A stream cut inside its first GOP: pictures before the first IRAP are skipped and reported,
// never output; decoding resumes at the next IRAP picture.
TEST(HevcInterCut, PicturesBeforeTheFirstIrapAreSkipped) {
  if (!testing::have_tools()) GTEST_SKIP() << "x265 or ffmpeg not installed";
  if (!Decoder::filters_available()) GTEST_SKIP() << "inter pictures need the hevc_filter module";
  const auto path = testing::stream_path(spec_named("open_gop"));
  ASSERT_FALSE(path.empty());
  const auto data = testing::read_file(path);
  const auto nals = nal_units(data);
  std::size_t cut_at = 0;
  for (const auto& [pos, type] : nals)
    if (type == 1) {  // the first TRAIL_R picture
      cut_at = pos;
      break;
    }
  ASSERT_GT(cut_at, 0u);
  // Parameter sets from the start, then the stream from a P/B picture on.
  std::vector<std::uint8_t> cut(data.begin(),
                                data.begin() + static_cast<std::ptrdiff_t>(nals[4].first));
  cut.insert(cut.end(), data.begin() + static_cast<std::ptrdiff_t>(cut_at), data.end());
  const Decoded d = run(cut, schedule_for(Backend::cpu));
  ASSERT_FALSE(d.problems.empty());
  EXPECT_NE(d.problems[0].message.find("before the first IRAP"), std::string::npos)
      << problems_text(d.problems);
  ASSERT_FALSE(d.frames.empty());
  for (const Frame& f : d.frames) EXPECT_EQ(f.hash, HashStatus::matched) << "POC " << f.poc;
}

// Unfiltered output would need unfiltered references, which no encoder predicted from: refused,
// naming the reason.
TEST(HevcInter, UnfilteredOutputRefusesInterSlices) {
  if (!testing::have_tools()) GTEST_SKIP() << "x265 or ffmpeg not installed";
  const auto data = testing::read_file(testing::stream_path(spec_named("p_ultrafast")));
  Decoder dec({.unfiltered = true});
  std::size_t frames = 0;
  dec.decode(data, [&](const Frame&) { ++frames; });
  EXPECT_EQ(frames, 1u);  // the IDR picture
  ASSERT_FALSE(dec.problems().empty());
  EXPECT_NE(dec.problems()[0].message.find("--unfiltered"), std::string::npos);
}

}  // namespace
}  // namespace sigpu::hevc
