// Bit-exactness with FFmpeg's ProRes decoder on clips made by FFmpeg's two ProRes encoders:
// every plane of every frame, serial and parallel CPU backends.
#include <gtest/gtest.h>

#include <cstring>

#include <sigpu/prores.hpp>

#include "prores/clips.hpp"

namespace sigpu::prores {
namespace {

using testing::ClipSpec;

class ProresVsFfmpeg : public ::testing::TestWithParam<ClipSpec> {};

// The decoded frames as FFmpeg's rawvideo muxer writes them (planes of 16-bit LE words).
std::vector<std::uint8_t> as_raw(const std::vector<Frame>& frames) {
  std::vector<std::uint8_t> out;
  for (const Frame& f : frames) {
    const std::size_t at = out.size();
    out.resize(at + f.samples.size() * 2);
    for (std::size_t i = 0; i < f.samples.size(); ++i) {
      out[at + 2 * i] = static_cast<std::uint8_t>(f.samples[i] & 0xFF);
      out[at + 2 * i + 1] = static_cast<std::uint8_t>(f.samples[i] >> 8);
    }
  }
  return out;
}

// Names the first differing sample: frame, plane, x, y.
std::string first_difference(const std::vector<Frame>& frames,
                             const std::vector<std::uint8_t>& ref) {
  std::size_t byte = 0;
  for (std::size_t fi = 0; fi < frames.size(); ++fi)
    for (int p = 0; p < frames[fi].format.planes(); ++p) {
      const auto plane = frames[fi].plane(p);
      for (std::size_t i = 0; i < plane.size(); ++i, byte += 2) {
        if (byte + 1 >= ref.size()) return "reference too short";
        const int r = ref[byte] | (ref[byte + 1] << 8);
        if (plane[i] != r)
          return "frame " + std::to_string(fi) + " plane " + std::to_string(p) + " x " +
                 std::to_string(i % frames[fi].plane_width(p)) + " y " +
                 std::to_string(i / frames[fi].plane_width(p)) + ": got " +
                 std::to_string(plane[i]) + ", FFmpeg " + std::to_string(r);
      }
    }
  return "sizes differ";
}

TEST_P(ProresVsFfmpeg, EveryPlaneMatches) {
  const ClipSpec& spec = GetParam();
  const auto path = testing::clip_path(spec);
  if (path.empty()) {
    if (testing::have_ffmpeg()) FAIL() << "ffmpeg failed to make " << spec.name;
    GTEST_SKIP() << "ffmpeg not available to make " << spec.name;
  }
#ifndef SIGPU_PRORES_HAVE_MOV
  GTEST_SKIP() << "built without libavformat";
#endif
  std::string pix_fmt;
  const auto ref = testing::reference(spec, pix_fmt);
  const Clip clip = open_file(path.string());
  ASSERT_EQ(clip.frames.size(), static_cast<std::size_t>(spec.frames));
  const Decoded serial = decode(clip, {.backend = Backend::cpu});
  ASSERT_TRUE(serial.report.ok()) << serial.report.damage[0].message();
  ASSERT_EQ(serial.frames[0].format.name(), pix_fmt);
  // The clip really has what its name says (the encoder options took effect).
  const auto has = [&](const char* s) { return spec.name.find(s) != std::string::npos; };
  const Scan expect_scan = has("tff")                ? Scan::top_field_first
                           : has("bff") || has("_i") ? Scan::bottom_field_first
                                                     : Scan::progressive;
  EXPECT_EQ(serial.frames[0].scan, expect_scan);
  EXPECT_EQ(serial.frames[0].format.alpha, has("alpha"));
  const auto raw = as_raw(serial.frames);
  ASSERT_EQ(raw.size(), ref.size());
  EXPECT_TRUE(raw == ref) << first_difference(serial.frames, ref);

  const Decoded parallel = decode(clip, {.backend = Backend::cpu_parallel});
  ASSERT_EQ(parallel.frames.size(), serial.frames.size());
  for (std::size_t i = 0; i < serial.frames.size(); ++i)
    EXPECT_TRUE(parallel.frames[i].samples == serial.frames[i].samples) << "frame " << i;
}

INSTANTIATE_TEST_SUITE_P(Clips, ProresVsFfmpeg, ::testing::ValuesIn(testing::standard_clips()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace sigpu::prores
