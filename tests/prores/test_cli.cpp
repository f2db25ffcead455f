// `sigpu prores info|decode` end to end on real files: raw output and Y4M byte-identical to
// FFmpeg's, a 16-bit PNG, damage reported with frame and slice and a failing exit code.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "prores/clips.hpp"
#include "support/shell.hpp"

namespace sigpu::prores {
namespace {

namespace fs = std::filesystem;

using Result = sigpu::test::CommandResult;
const std::string& kSigpu = sigpu::test::kSigpuBinary;

Result run(const std::string& command) {
  return sigpu::test::run_command(command);
}
Result sigpu(const std::string& args) {
  return sigpu::test::run_sigpu(args);
}

class ProresCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kSigpu)) GTEST_SKIP() << "sigpu CLI not built";
#ifndef SIGPU_PRORES_HAVE_MOV
    GTEST_SKIP() << "built without libavformat";
#endif
    dir_ = fs::temp_directory_path() / ("sigpu-prores-cli-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path clip(const std::string& name, std::string* ref_fmt = nullptr,
                std::vector<std::uint8_t>* ref = nullptr) {
    for (const auto& s : testing::standard_clips())
      if (s.name == name) {
        const auto p = testing::clip_path(s);
        if (!p.empty() && ref) *ref = testing::reference(s, *ref_fmt);
        return p;
      }
    return {};
  }
  std::string out(const std::string& name) const {
    return (dir_ / name).string();
  }
  fs::path dir_;
};

TEST_F(ProresCli, InfoNamesProfileFormatAndAlpha) {
  const auto mov = clip("ks_4444_alpha16");
  if (mov.empty()) GTEST_SKIP() << "ffmpeg not available";
  const Result r = sigpu("prores info '" + mov.string() + "'");
  EXPECT_EQ(r.code, 0) << r.output;
  for (const char* want : {"ap4h (ProRes 4444)", "320x180", "16-bit", "yuva444p12le", "Lavc"})
    EXPECT_NE(r.output.find(want), std::string::npos) << want << "\n" << r.output;
}

TEST_F(ProresCli, RawOutputIsFfmpegs) {
  std::string fmt;
  std::vector<std::uint8_t> ref;
  const auto mov = clip("odd_1000x562_i", &fmt, &ref);
  if (mov.empty()) GTEST_SKIP() << "ffmpeg not available";
  for (const char* backend : {"cpu", "cpu-parallel"}) {
    const Result r = sigpu("prores decode -f --backend " + std::string(backend) + " '" +
                           mov.string() + "' -o '" + out("a.yuv") + "'");
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_TRUE(testing::read_file(out("a.yuv")) == ref) << backend;
  }
  // An existing output is not overwritten without --force.
  EXPECT_EQ(sigpu("prores decode '" + mov.string() + "' -o '" + out("a.yuv") + "'").code, 2);
}

TEST_F(ProresCli, Y4mIsFfmpegs) {
  const auto mov = clip("ks_tff");
  if (mov.empty() || !testing::have_ffmpeg()) GTEST_SKIP() << "ffmpeg not available";
  ASSERT_EQ(run("ffmpeg -v error -nostdin -y -i '" + mov.string() +
                "' -f yuv4mpegpipe -strict -1 '" + out("ref.y4m") + "'")
                .code,
            0);
  const Result r = sigpu("prores decode -q '" + mov.string() + "' -o '" + out("a.y4m") + "'");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(testing::read_file(out("a.y4m")) == testing::read_file(out("ref.y4m")));
}

TEST_F(ProresCli, PngOfOneFrame) {
  const auto mov = clip("ks_4444_alpha16");
  if (mov.empty()) GTEST_SKIP() << "ffmpeg not available";
  const Result r =
      sigpu("prores decode --frame 1 '" + mov.string() + "' -o '" + out("f.png") + "'");
  if (r.output.find("needs libpng") != std::string::npos) GTEST_SKIP() << "no libpng";
  ASSERT_EQ(r.code, 0) << r.output;
  const auto png = testing::read_file(out("f.png"));
  ASSERT_GT(png.size(), 33u);
  EXPECT_EQ(png[1], 'P');
  auto be32 = [&](std::size_t at) {
    return (png[at] << 24) | (png[at + 1] << 16) | (png[at + 2] << 8) | png[at + 3];
  };
  EXPECT_EQ(be32(16), 320);
  EXPECT_EQ(be32(20), 180);
  EXPECT_EQ(png[24], 16);  // bit depth
  EXPECT_EQ(png[25], 6);   // RGBA
  EXPECT_EQ(sigpu("prores decode --frame 9 '" + mov.string() + "' -o '" + out("g.png") + "'").code,
            2);
}

TEST_F(ProresCli, DamageIsReportedWithFrameAndSlice) {
  const auto mov = clip("ks_p2");
  if (mov.empty()) GTEST_SKIP() << "ffmpeg not available";
  // Raw frames: frame 0 intact, frame 1 with one slice's data zeroed.
  const Result raw = run("ffmpeg -v error -nostdin -y -i '" + mov.string() +
                         "' -c copy -f rawvideo '" + out("two.icpf") + "'");
  if (raw.code != 0) GTEST_SKIP() << "ffmpeg could not extract frames";
  auto bytes = testing::read_file(out("two.icpf"));
  const std::size_t second =
      (std::size_t{bytes[0]} << 24) | (bytes[1] << 16) | (bytes[2] << 8) | bytes[3];
  const std::size_t hdr = (bytes[second + 8] << 8) | bytes[second + 9];
  const std::size_t pic = second + 8 + hdr;
  const std::size_t table = pic + (bytes[pic] >> 3);
  const std::size_t slices = 12 * 3;  // 320x180: 12 macroblock rows of 3 slices
  const std::size_t first_slice = table + 2 * slices;
  const std::size_t size0 = (bytes[table] << 8) | bytes[table + 1];
  std::fill(bytes.begin() + first_slice + 8, bytes.begin() + first_slice + size0, 0);
  {
    std::ofstream f(out("bad.icpf"), std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  }
  const Result r = sigpu("prores decode '" + out("bad.icpf") + "' -o '" + out("bad.yuv") + "'");
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("frame 1 slice 0"), std::string::npos) << r.output;
  EXPECT_EQ(fs::file_size(out("bad.yuv")), 2u * 2 * 320 * 180 * 2);
}

}  // namespace
}  // namespace sigpu::prores
