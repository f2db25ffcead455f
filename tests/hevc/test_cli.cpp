// `sigpu hevc info` and `sigpu hevc decode` on a real x265 stream.
#include <gtest/gtest.h>
#include <algorithm>

#include <filesystem>

#include "hevc/streams.hpp"
#include "support/shell.hpp"

namespace sigpu::hevc {
namespace {

namespace fs = std::filesystem;
const std::string& kSigpu = sigpu::test::kSigpuBinary;

std::string run(const std::string& command, int& status) {
  const auto r = sigpu::test::run_command(command);
  status = r.code;
  return r.output;
}

TEST(HevcCli, InfoAndDecodeMatchFfmpeg) {
  if (!fs::exists(kSigpu)) GTEST_SKIP() << "CLI not built";
  const testing::StreamSpec spec{"cli_10bit", "testsrc2=size=96x64:rate=25", 2, 10,
                                 "--no-deblock --no-sao --ctu 32"};
  const fs::path in = testing::stream_path(spec);
  if (in.empty()) GTEST_SKIP() << "x265 or ffmpeg not installed";
  int status = 0;
  const std::string info = run(kSigpu + " hevc info " + in.string(), status);
  EXPECT_EQ(status, 0) << info;
  EXPECT_NE(info.find("SPS 0: profile 4"), std::string::npos) << info;
  EXPECT_NE(info.find("10/10 bit"), std::string::npos) << info;
  EXPECT_NE(info.find("2 pictures"), std::string::npos) << info;

  const fs::path dir = fs::temp_directory_path() / "sigpu-hevc-cli";
  fs::create_directories(dir);
  const fs::path yuv = dir / "out.yuv", y4m = dir / "out.y4m";
  const std::string dec =
      run(kSigpu + " hevc decode -f " + in.string() + " -o " + yuv.string(), status);
  EXPECT_EQ(status, 0) << dec;
  EXPECT_NE(dec.find("2 pictures, 2 hashes matched"), std::string::npos) << dec;
  EXPECT_TRUE(testing::read_file(yuv) == testing::reference(spec));

  run(kSigpu + " hevc decode -f " + in.string() + " -o " + y4m.string(), status);
  EXPECT_EQ(status, 0);
  const auto y = testing::read_file(y4m);
  const std::string head(y.begin(), y.begin() + 40);
  EXPECT_EQ(head.rfind("YUV4MPEG2 W96 H64", 0), 0u) << head;
  const auto header = static_cast<std::size_t>(std::find(y.begin(), y.end(), '\n') - y.begin());
  EXPECT_EQ(y.size(), 2 * (96 * 64 * 3) + header + 1 + 2 * 6);  // 10-bit: 2 bytes each

  const std::string bad = run(kSigpu + " hevc decode /nonexistent.hevc -o " + yuv.string(), status);
  EXPECT_EQ(status, 3) << bad;
}

}  // namespace
}  // namespace sigpu::hevc
