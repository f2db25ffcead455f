// The CUDA backend against the CPU reference: every standard clip, damaged slices, frames of
// mixed shapes in one call, large batches and device-resident output.
#include <gtest/gtest.h>

#include <sigpu/prores.hpp>

#include "prores/clips.hpp"
#include "prores/frame_parse.hpp"

namespace sigpu::prores {
namespace {

bool have_gpu() {
  return cuda_compiled() && !cuda_devices().empty();
}

class ProresGpuVsCpu : public ::testing::TestWithParam<testing::ClipSpec> {};

TEST_P(ProresGpuVsCpu, IdenticalToSerialCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const auto path = testing::find_clip(GetParam());
  if (path.empty()) GTEST_SKIP() << "clip not available";
  const Clip clip = open_file(path.string());
  const Decoded cpu = decode(clip, {.backend = Backend::cpu});
  const Decoded gpu = decode(clip, {.backend = Backend::cuda, .batch = 3});
  ASSERT_EQ(gpu.frames.size(), cpu.frames.size());
  EXPECT_TRUE(gpu.report.ok());
  for (std::size_t i = 0; i < cpu.frames.size(); ++i) {
    EXPECT_EQ(gpu.frames[i].format.name(), cpu.frames[i].format.name());
    EXPECT_TRUE(gpu.frames[i].samples == cpu.frames[i].samples) << "frame " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Clips, ProresGpuVsCpu, ::testing::ValuesIn(testing::standard_clips()),
                         [](const auto& info) { return info.param.name; });

const testing::ClipSpec& spec(const std::string& name) {
  for (const auto& s : testing::standard_clips())
    if (s.name == name) return s;
  throw Error("no clip " + name);
}

TEST(ProresGpu, DamagedSlicesMatchCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  for (const char* name : {"ks_p3", "ks_4444_alpha16", "ks_tff"}) {
    const auto path = testing::find_clip(spec(name));
    if (path.empty()) GTEST_SKIP() << "clip not available";
    const Clip clip = open_file(path.string());
    std::vector<std::uint8_t> f = testing::frame_bytes(clip, 0);
    const ParsedFrame pf = parse_frame(f, clip.bit_depth(parse_frame_header(f)));
    // Zero one slice's data, break another's header, and cut the frame short.
    const SliceRef& a = pf.slices[3];
    std::fill(f.begin() + a.offset + 8, f.begin() + a.offset + a.size, 0);
    f[pf.slices[9].offset + 2] = 0xFF;
    f.resize(pf.slices[pf.slices.size() - 5].offset + 10);
    const int depth = clip.bit_depth(pf.header);
    DecodeReport rc, rg;
    const Frame cpu = decode_frame(f, depth, rc, {.backend = Backend::cpu});
    CudaDecoder gpu;
    const std::span<const std::uint8_t> spans[] = {f};
    const auto out = gpu.decode(spans, depth, rg);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_TRUE(out[0].samples == cpu.samples) << name;
    ASSERT_EQ(rg.damage.size(), rc.damage.size()) << name;
    for (std::size_t i = 0; i < rc.damage.size(); ++i)
      EXPECT_EQ(rg.damage[i].message(), rc.damage[i].message());
  }
}

TEST(ProresGpu, MixedShapesAndLargeBatches) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  std::vector<std::vector<std::vector<std::uint8_t>>> clips;  // frames of each clip
  for (const char* name : {"ks_p2", "tiny_16x16", "ks_4444xq_alpha8", "aw_tff"}) {
    const auto path = testing::find_clip(spec(name));
    if (path.empty()) GTEST_SKIP() << "clip not available";
    const Clip clip = open_file(path.string());
    clips.emplace_back();
    for (std::size_t i = 0; i < clip.frames.size(); ++i)
      clips.back().push_back(testing::frame_bytes(clip, i));
  }
  // 200 frames cycling through the clips (same bit depth per call: 10 for the 4:2:2 ones).
  std::vector<std::span<const std::uint8_t>> spans;
  std::vector<Frame> expect;
  for (int i = 0; i < 200; ++i) {
    const auto& c = clips[i % 2 == 0 ? 0 : (i % 4 == 1 ? 1 : 3)];
    spans.push_back(c[i % c.size()]);
    DecodeReport r;
    expect.push_back(decode_frame(spans.back(), 10, r, {.backend = Backend::cpu}));
  }
  CudaDecoder gpu;
  DecodeReport r;
  const auto got = gpu.decode(spans, 10, r);
  ASSERT_EQ(got.size(), expect.size());
  EXPECT_TRUE(r.ok());
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_TRUE(got[i].samples == expect[i].samples) << "frame " << i;

  // Device-resident: one shape, 64 frames of 4444 XQ with alpha.
  const std::span<const std::uint8_t> xq1 = clips[2][1];
  std::vector<std::span<const std::uint8_t>> same(64, xq1);
  DecodeReport r2;
  const BatchFrames d = gpu.decode_device(same, 12, r2);
  EXPECT_EQ(d.count, 64u);
  EXPECT_EQ(d.format.name(), "yuva444p12le");
  const auto stages = gpu.last_kernel_seconds();
  EXPECT_GT(stages.clear, 0.0);
  EXPECT_GT(stages.vld, 0.0);
  EXPECT_GT(stages.idct, 0.0);
  EXPECT_DOUBLE_EQ(stages.total(), stages.clear + stages.vld + stages.idct);
  DecodeReport r3;
  const Frame ref = decode_frame(xq1, 12, r3, {.backend = Backend::cpu});
  std::vector<std::uint16_t> last(d.frame_samples);
  gpu.download(d, 63, last.data());
  EXPECT_TRUE(last == ref.samples);
}

}  // namespace
}  // namespace sigpu::prores
