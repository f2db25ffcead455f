// Input, Output and the format rules every command relies on.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <sigpu/io.hpp>

namespace sigpu::io {
namespace {

namespace fs = std::filesystem;

class IoFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("sigpu_io_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }
  static std::string read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  static void write(const std::string& path, const std::string& text) {
    std::ofstream(path, std::ios::binary) << text;
  }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir_), {}));
  }

  fs::path dir_;
};

TEST_F(IoFiles, OutputAppearsOnlyWhenCommitted) {
  {
    Output out(file("a.wav"));
    out.write("hello");
    EXPECT_FALSE(fs::exists(file("a.wav")));
    EXPECT_EQ(entries(), 1u) << "the temporary file, hidden in the same folder";
    out.commit();
  }
  EXPECT_EQ(read(file("a.wav")), "hello");
  EXPECT_EQ(entries(), 1u);
  {
    Output out(file("b.wav"));
    out.write("half");
  }
  EXPECT_FALSE(fs::exists(file("b.wav")));
  EXPECT_EQ(entries(), 1u) << "an unfinished output leaves nothing";
}

TEST_F(IoFiles, ExistingOutputNeedsForce) {
  write(file("a.wav"), "precious");
  EXPECT_THROW(Output(file("a.wav")), UsageError);
  EXPECT_EQ(read(file("a.wav")), "precious");
  Output out(file("a.wav"), {.force = true});
  out.write("new");
  out.commit();
  EXPECT_EQ(read(file("a.wav")), "new");
}

TEST_F(IoFiles, FileThatAppearsMeanwhileIsNotReplaced) {
  Output out(file("a.wav"));
  out.write("late");
  write(file("a.wav"), "first");
  EXPECT_THROW(out.commit(), UsageError);
  EXPECT_EQ(read(file("a.wav")), "first");
}

TEST_F(IoFiles, NeverAnInputWhateverThePath) {
  write(file("in.flac"), "input");
  Input in(file("in.flac"));
  fs::create_hard_link(file("in.flac"), file("hard"));
  fs::create_symlink(file("in.flac"), file("soft"));
  for (const char* name : {"in.flac", "hard", "soft"})
    EXPECT_THROW(Output(file(name), {.force = true, .inputs = {&in}}), UsageError) << name;
  EXPECT_EQ(read(file("in.flac")), "input");
}

TEST_F(IoFiles, OutputErrorsNameThePlace) {
  try {
    Output out(file("no/such/folder/x.wav"));
    FAIL();
  } catch (const OutputError& e) {
    EXPECT_NE(std::string(e.what()).find("no/such/folder"), std::string::npos) << e.what();
  }
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  Output full("/dev/full");
  EXPECT_THROW(
      {
        full.write(std::string(2 << 20, 'x'));
        full.commit();
      },
      OutputError);
  EXPECT_TRUE(fs::exists("/dev/full")) << "devices are written, never replaced";
}

TEST_F(IoFiles, InputErrors) {
  EXPECT_THROW(Input(file("missing")), InputError);
  EXPECT_THROW(Input(dir_.string()), InputError);
  write(file("x"), "0123456789");
  Input in(file("x"));
  EXPECT_TRUE(in.seekable());
  EXPECT_EQ(in.size(), 10u);
  EXPECT_EQ(in.map().size(), 10u);
  std::uint8_t b[4];
  EXPECT_EQ(in.read_at(8, b), 2u);
  EXPECT_EQ(b[0], '8');
}

TEST_F(IoFiles, StreamsAreReadWholeOnlyUpToALimit) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], "abcdefgh", 8), 8);
  ::close(fds[1]);
  ASSERT_EQ(::dup2(fds[0], 0), 0);
  ::close(fds[0]);
  Input in("-");
  EXPECT_FALSE(in.seekable());
  EXPECT_EQ(in.name(), "stdin");
  EXPECT_THROW(in.map(), UsageError);
  EXPECT_EQ(in.all(100).size(), 8u);
}

TEST(IoFormats, FromTheOptionOrTheExtension) {
  EXPECT_EQ(pcm_format("", "a.WAV"), PcmFormat::wav);
  EXPECT_EQ(pcm_format("", "dir.x/a.npy"), PcmFormat::npy);
  EXPECT_EQ(pcm_format("raw", "a.pcm"), PcmFormat::raw);
  EXPECT_EQ(pcm_format("", "-"), PcmFormat::wav);
  EXPECT_EQ(pcm_format("", "/dev/null"), PcmFormat::wav) << "a device is written like stdout";
  EXPECT_EQ(picture_format("", "/dev/null"), PictureFormat::y4m);
  EXPECT_THROW(pcm_format("", "a.mp3"), UsageError);
  EXPECT_THROW(pcm_format("", "noext"), UsageError);
  EXPECT_THROW(pcm_format("raw", "a.wav"), UsageError) << "the two disagree";
  EXPECT_THROW(pcm_format("ogg", "a.wav"), UsageError);
  EXPECT_EQ(picture_format("", "a.yuv"), PictureFormat::yuv);
  EXPECT_EQ(picture_format("raw", "-"), PictureFormat::yuv);
  EXPECT_EQ(picture_format("", "-"), PictureFormat::y4m);
  EXPECT_EQ(picture_format("", "x.PNG"), PictureFormat::png);
  EXPECT_EQ(default_output("music/a.flac", ".wav"), "music/a.wav");
  EXPECT_THROW(default_output("-", ".wav"), UsageError);
}

TEST_F(IoFiles, PicturesAsY4mAndNpy) {
  std::vector<std::uint16_t> y(4 * 2, 1000), c(2 * 1, 512);
  PictureView p;
  p.width = 4;
  p.height = 2;
  p.bit_depth = 10;
  p.chroma = Chroma::c420;
  p.planes[0] = y.data();
  p.planes[1] = p.planes[2] = c.data();
  p.plane_width[0] = p.stride[0] = 4;
  p.plane_height[0] = 2;
  p.plane_width[1] = p.plane_width[2] = p.stride[1] = p.stride[2] = 2;
  p.plane_height[1] = p.plane_height[2] = 1;
  {
    Output out(file("a.y4m"));
    PictureWriter w(out, PictureFormat::y4m, {});
    w.write(p);
    w.write(p);
    w.finish();
  }
  const std::string header = "YUV4MPEG2 W4 H2 F25:1 Ip A1:1 C420p10 XYSCSS=420P10\n";
  const std::string y4m = read(file("a.y4m"));
  ASSERT_EQ(y4m.substr(0, header.size()), header);
  EXPECT_EQ(y4m.size(), header.size() + 2 * (6 + 12 * 2));
  {
    Output out(file("a.npy"));
    PictureWriter w(out, PictureFormat::npy, {});
    w.write(p);
    w.write(p);
    w.write(p);
    w.finish();
  }
  const std::string npy = read(file("a.npy"));
  EXPECT_NE(npy.find("'descr': '<u2'"), std::string::npos);
  EXPECT_NE(npy.find("'shape': (3, 12)"), std::string::npos) << npy.substr(0, 128);
  EXPECT_EQ(npy.size(), 128u + 3 * 12 * 2);
  if (!PictureWriter::png_available()) return;
  Output out(file("b.png"));
  PictureWriter png(out, PictureFormat::png, {});
  png.write(p);
  EXPECT_THROW(png.write(p), UsageError) << "a PNG holds one picture";
}

}  // namespace
}  // namespace sigpu::io
