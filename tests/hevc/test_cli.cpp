// `sigpu hevc info` and `sigpu hevc decode` on a real x265 stream.
#include <gtest/gtest.h>
#include <algorithm>

#include <filesystem>
#include <fstream>

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

const testing::StreamSpec& spec_named(const std::vector<testing::StreamSpec>& specs,
                                      const std::string& name) {
  const auto it =
      std::find_if(specs.begin(), specs.end(), [&](const auto& s) { return s.name == name; });
  if (it == specs.end()) throw std::runtime_error("no test stream " + name);
  return *it;
}

/// A Y4M file's pictures without its header and FRAME lines (their count and form checked).
std::vector<std::uint8_t> y4m_pictures(const std::vector<std::uint8_t>& y4m, int pictures) {
  const auto end_of_header = std::find(y4m.begin(), y4m.end(), '\n');
  if (end_of_header == y4m.end()) return {};
  const std::string frame = "FRAME\n";
  const auto body = static_cast<std::size_t>(y4m.end() - end_of_header - 1);
  if (body % pictures != 0) return {};
  const std::size_t each = body / pictures;
  std::vector<std::uint8_t> out;
  for (int k = 0; k < pictures; ++k) {
    const auto at = end_of_header + 1 + static_cast<std::ptrdiff_t>(k * each);
    if (!std::equal(frame.begin(), frame.end(), at)) return {};
    out.insert(out.end(), at + static_cast<std::ptrdiff_t>(frame.size()),
               at + static_cast<std::ptrdiff_t>(each));
  }
  return out;
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

// Pictures go to the output on a writer thread: many of them, reordered (B pictures), 8 and 10
// bit, still come out as FFmpeg's, in order, as .yuv and .y4m.
TEST(HevcCli, ManyPicturesWriteFfmpegsBytes) {
  if (!fs::exists(kSigpu)) GTEST_SKIP() << "CLI not built";
  const fs::path dir = fs::temp_directory_path() / "sigpu-hevc-cli-many";
  fs::create_directories(dir);
  for (const std::string name : {"odd_200x104", "b4_no_pyramid"}) {
    const testing::StreamSpec& spec = spec_named(testing::inter_streams(), name);
    const fs::path in = testing::stream_path(spec);
    if (in.empty()) GTEST_SKIP() << "x265 or ffmpeg not installed";
    if (!testing::ffmpeg_verified(spec)) continue;  // FFmpeg's output is no oracle for it
    const std::vector<std::uint8_t> ref = testing::reference(spec);
    const fs::path yuv = dir / (name + ".yuv"), y4m = dir / (name + ".y4m");
    int status = 0;
    std::string out = run(
        kSigpu + " hevc decode -f --backend cpu-parallel " + in.string() + " -o " + yuv.string(),
        status);
    EXPECT_EQ(status, 0) << out;
    EXPECT_TRUE(testing::read_file(yuv) == ref) << name << ".yuv differs from FFmpeg's";
    out = run(
        kSigpu + " hevc decode -f --backend cpu-parallel " + in.string() + " -o " + y4m.string(),
        status);
    EXPECT_EQ(status, 0) << out;
    const auto pictures = y4m_pictures(testing::read_file(y4m), spec.frames);
    EXPECT_EQ(pictures.size(), ref.size()) << name << ".y4m: not " << spec.frames << " FRAMEs";
    EXPECT_TRUE(pictures == ref) << name << ".y4m's pictures differ from FFmpeg's";
  }
  fs::remove_all(dir);
}

// An error on the writer thread ends the run as one on the decoder's thread did: its exit code
// and message (docs/cli.md), no output left behind, and no hang.
TEST(HevcCli, WriteErrorsGiveTheirExitCode) {
  if (!fs::exists(kSigpu)) GTEST_SKIP() << "CLI not built";
  // Each picture is larger than the output's buffer, so the writes fail on the writer thread
  // while the decoder runs, not when the output is finished.
  const testing::StreamSpec large{"cli_1024x576_10bit", "testsrc2=size=1024x576:rate=25", 3, 10,
                                  "--preset ultrafast"};
  const fs::path in = testing::stream_path(large);
  if (in.empty()) GTEST_SKIP() << "x265 or ffmpeg not installed";
  int status = 0;
  if (fs::exists("/dev/full")) {
    const std::string out =
        run("timeout 120 " + kSigpu + " hevc decode " + in.string() + " -o /dev/full --format yuv",
            status);
    EXPECT_EQ(status, 5) << out;
    EXPECT_NE(out.find(in.string() + ": cannot write '/dev/full': No space left on device"),
              std::string::npos)
        << out;
  }

  // A picture of another size than the first cannot go into the same .y4m (a usage error
  // raised by the writer); .yuv takes both sizes.
  const fs::path dir = fs::temp_directory_path() / "sigpu-hevc-cli-sizes";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto& small = spec_named(testing::standard_streams(), "plain8_ctu16");
  const auto& other = spec_named(testing::standard_streams(), "filt8_ctu32");
  const fs::path both = dir / "both.hevc";
  {
    std::ofstream f(both, std::ios::binary);
    for (const auto* s : {&small, &other}) {
      const auto bytes = testing::read_file(testing::stream_path(*s));
      f.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    }
  }
  std::string out = run("timeout 120 " + kSigpu + " hevc decode " + both.string() + " -o " +
                            (dir / "both.y4m").string(),
                        status);
  EXPECT_EQ(status, 2) << out;
  EXPECT_NE(out.find("picture 2 has another size or format than the first"), std::string::npos)
      << out;
  out =
      run(kSigpu + " hevc decode " + both.string() + " -o " + (dir / "both.yuv").string(), status);
  EXPECT_EQ(status, 0) << out;
  if (testing::ffmpeg_verified(small) && testing::ffmpeg_verified(other)) {
    auto want = testing::reference(small);
    const auto second = testing::reference(other);
    want.insert(want.end(), second.begin(), second.end());
    EXPECT_TRUE(testing::read_file(dir / "both.yuv") == want);
  }
  std::vector<std::string> left;
  for (const auto& e : fs::directory_iterator(dir)) left.push_back(e.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"both.hevc", "both.yuv"})) << "no .y4m, no temporary";
  fs::remove_all(dir);
}

}  // namespace
}  // namespace sigpu::hevc
