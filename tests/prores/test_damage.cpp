// Hostile input: truncated frames, overrunning slice sizes, impossible dimensions, corrupt
// coefficient data. Each gives a clear report naming frame and slice; damaged slices are
// concealed (grey) and everything else decodes exactly as from the clean frame.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <sigpu/prores.hpp>

#include "prores/clips.hpp"
#include "prores/frame_parse.hpp"

namespace sigpu::prores {
namespace {

const testing::ClipSpec* spec_named(const std::string& name) {
  for (const auto& s : testing::standard_clips())
    if (s.name == name) return &s;
  return nullptr;
}

class ProresDamage : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto path = testing::clip_path(*spec_named("ks_p3"));
    if (path.empty()) GTEST_SKIP() << "ffmpeg not available";
#ifndef SIGPU_PRORES_HAVE_MOV
    GTEST_SKIP() << "built without libavformat";
#endif
    clip_ = open_file(path.string());
    bytes_ = testing::frame_bytes(clip_, 0);
    parsed_ = parse_frame(bytes_, 10);
    DecodeReport r;
    clean_ = decode_frame(bytes_, 10, r, {.backend = Backend::cpu});
    ASSERT_TRUE(r.ok());
  }
  // Samples of slice `s`'s luma area equal between two frames?
  static bool luma_equal(const Frame& a, const Frame& b, const SliceGeometry& g) {
    for (int y = g.mb_y * 16; y < std::min(a.height, g.mb_y * 16 + 16); ++y)
      for (int x = g.mb_x * 16; x < std::min(a.width, (g.mb_x + (1 << g.log2_mbs)) * 16); ++x)
        if (a.plane(0)[y * a.width + x] != b.plane(0)[y * a.width + x]) return false;
    return true;
  }
  SliceGeometry geometry(int s) const {
    return slice_geometry(s, parsed_.shape.mb_width, parsed_.picture[0].log2_slice_mbs);
  }
  Clip clip_;
  std::vector<std::uint8_t> bytes_;
  ParsedFrame parsed_;
  Frame clean_;
};

TEST_F(ProresDamage, ZeroedLumaIsReportedAndConcealedOthersExact) {
  const int victim = 7;
  const SliceRef& s = parsed_.slices[victim];
  const int hdr = bytes_[s.offset] >> 3;
  const int luma = (bytes_[s.offset + 2] << 8) | bytes_[s.offset + 3];
  std::fill(bytes_.begin() + s.offset + hdr, bytes_.begin() + s.offset + hdr + luma, 0);
  DecodeReport r;
  const Frame f = decode_frame(bytes_, 10, r, {.backend = Backend::cpu}, 5);
  ASSERT_EQ(r.damage.size(), 1u);
  EXPECT_EQ(r.damage[0].frame, 5u);
  EXPECT_EQ(r.damage[0].slice, victim);
  EXPECT_NE(r.damage[0].message().find("frame 5 slice 7"), std::string::npos)
      << r.damage[0].message();
  EXPECT_NE(r.damage[0].message().find("luma"), std::string::npos);
  const SliceGeometry g = geometry(victim);
  EXPECT_EQ(f.plane(0)[g.mb_y * 16 * f.width + g.mb_x * 16], 512);  // grey
  for (int i = 0; i < static_cast<int>(parsed_.slices.size()); ++i)
    if (i != victim) {
      EXPECT_TRUE(luma_equal(f, clean_, geometry(i))) << "slice " << i;
    }
}

TEST_F(ProresDamage, TruncatedFrameKeepsTheSlicesItHas) {
  const SliceRef& cut = parsed_.slices[20];
  std::vector<std::uint8_t> head(bytes_.begin(), bytes_.begin() + cut.offset + 3);
  DecodeReport r;
  const Frame f = decode_frame(head, 10, r, {.backend = Backend::cpu_parallel});
  ASSERT_EQ(r.damage.size(), parsed_.slices.size() - 20);
  EXPECT_EQ(r.damage[0].slice, 20);
  EXPECT_NE(r.damage[0].what.find("outside the frame"), std::string::npos);
  for (int i = 0; i < 20; ++i) EXPECT_TRUE(luma_equal(f, clean_, geometry(i))) << i;
}

TEST_F(ProresDamage, OverrunningSliceSizeIsCaught) {
  // The last slice's table entry claims 64 KB: it runs past the frame.
  const int last = static_cast<int>(parsed_.slices.size()) - 1;
  const std::size_t pic = 8 + parsed_.header.header_size;
  const std::size_t entry = pic + (bytes_[pic] >> 3) + 2 * last;
  bytes_[entry] = bytes_[entry + 1] = 0xFF;
  DecodeReport r;
  decode_frame(bytes_, 10, r);
  ASSERT_EQ(r.damage.size(), 1u);
  EXPECT_EQ(r.damage[0].slice, last);
}

TEST_F(ProresDamage, ImpossibleDimensionsAreRefused) {
  bytes_[8 + 8] = bytes_[8 + 9] = 0;  // width 0
  DecodeReport r;
  try {
    decode_frame(bytes_, 10, r, {}, 3);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("frame 3"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("dimensions"), std::string::npos) << e.what();
  }
  bytes_[8 + 8] = bytes_[8 + 9] = bytes_[8 + 10] = bytes_[8 + 11] = 0xFF;  // 65535x65535
  EXPECT_THROW(decode_frame(bytes_, 10, r), Error);
  // Larger dimensions than the slice table covers: the missing slices are reported.
  bytes_[8 + 8] = 2048 >> 8;
  bytes_[8 + 9] = 0;
  bytes_[8 + 10] = 1080 >> 8;
  bytes_[8 + 11] = 1080 & 0xFF;
  DecodeReport r2;
  decode_frame(bytes_, 10, r2);
  EXPECT_FALSE(r2.ok());
}

TEST_F(ProresDamage, BadFrameInAClipIsConcealedAndTheRestGoesOn) {
  // The same frame table over the file's bytes held in memory, one of them broken.
  Clip c = clip_;
  c.bytes = testing::read_file(clip_.path);
  c.source = nullptr;
  c.bytes[c.frames[1].offset + 5] = 'X';  // breaks 'icpf'
  const Decoded d = decode(c, {.backend = Backend::cpu});
  ASSERT_EQ(d.frames.size(), 2u);
  ASSERT_EQ(d.report.damage.size(), 1u);
  EXPECT_EQ(d.report.damage[0].frame, 1u);
  EXPECT_EQ(d.report.damage[0].slice, -1);
  EXPECT_EQ(d.frames[1].plane(0)[0], 512);
  EXPECT_TRUE(d.frames[0].samples == clean_.samples);
  EXPECT_THROW(decode(c, {.backend = Backend::cpu, .stop_on_damage = true}), Error);
}

TEST_F(ProresDamage, EveryTruncationLengthIsSafe) {
  // Walks cut points through the headers and the first slices: never a crash, always a report.
  for (std::size_t n = 0; n < std::min<std::size_t>(bytes_.size(), 400); n += 7) {
    std::vector<std::uint8_t> head(bytes_.begin(), bytes_.begin() + n);
    DecodeReport r;
    try {
      decode_frame(head, 10, r);
      EXPECT_FALSE(r.ok()) << n;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("frame 0"), std::string::npos);
    }
  }
}

TEST_F(ProresDamage, RawFramesReadLikeTheMov) {
  const auto dir = std::filesystem::temp_directory_path() / "sigpu-prores-raw";
  std::filesystem::create_directories(dir);
  const auto raw = dir / "two.icpf";
  {
    std::ofstream out(raw, std::ios::binary);
    for (std::size_t i = 0; i < clip_.frames.size(); ++i) {
      const auto f = testing::frame_bytes(clip_, i);
      out.write(reinterpret_cast<const char*>(f.data()), static_cast<std::streamsize>(f.size()));
    }
    out.write(reinterpret_cast<const char*>(bytes_.data()), 100);  // truncated third frame
  }
  const Clip c = open_file(raw.string());
  EXPECT_EQ(c.container, "raw");
  ASSERT_EQ(c.frames.size(), 3u);
  const Decoded d = decode(c, {.backend = Backend::cpu});
  EXPECT_TRUE(d.frames[0].samples == clean_.samples);
  ASSERT_FALSE(d.report.ok());
  EXPECT_EQ(d.report.damage[0].frame, 2u);
  std::vector<std::uint8_t> junk(64, 0x55);
  EXPECT_THROW(read_raw(junk, "junk"), Error);
}

}  // namespace
}  // namespace sigpu::prores
