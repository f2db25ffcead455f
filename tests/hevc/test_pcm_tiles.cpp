// Synthetic all-PCM streams (tests/hevc/pcm_stream.cpp) for what x265 never writes: PCM with
// its bit depths and alignment, tiles, WPP with a dependent slice segment, entry points. The
// output must be the PCM samples exactly; with deblocking on, pcm_loop_filter_disabled_flag
// keeps the filters off them. FFmpeg, where installed, must decode the same samples (an oracle
// independent of the writer); FFmpeg 5.1 does not follow WPP rows inside tiles, so streams
// with both are checked against the samples only.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <sigpu/hevc.hpp>

#include "hevc/pcm_stream.hpp"
#include "hevc/streams.hpp"

namespace sigpu::hevc {
namespace {

using testing::PcmStreamConfig;

void check_with_ffmpeg(const PcmStreamConfig& c, const testing::PcmStream& s) {
  if (!testing::have_tools() || (c.wpp && c.tile_cols * c.tile_rows > 1)) return;
  namespace fs = std::filesystem;
  // A folder of this process's own: ctest runs the tests of this file side by side.
  const fs::path dir = fs::temp_directory_path() / ("sigpu-hevc-pcm-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  struct Remove {
    fs::path dir;
    ~Remove() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } remove{dir};
  const fs::path in = dir / (std::to_string(c.seed) + ".hevc"), out = dir / "out.yuv";
  std::ofstream(in, std::ios::binary)
      .write(reinterpret_cast<const char*>(s.bytes.data()),
             static_cast<std::streamsize>(s.bytes.size()));
  ASSERT_EQ(
      std::system(("ffmpeg -v error -nostdin -y -i " + in.string() + " -f rawvideo -pix_fmt " +
                   testing::pix_fmt(c.bit_depth, false) + " " + out.string())
                      .c_str()),
      0);
  std::vector<std::uint8_t> expect;
  for (const auto& plane : s.expected)
    for (std::uint16_t v : plane) {
      expect.push_back(static_cast<std::uint8_t>(v & 0xff));
      if (c.bit_depth > 8) expect.push_back(static_cast<std::uint8_t>(v >> 8));
    }
  EXPECT_TRUE(testing::read_file(out) == expect) << "FFmpeg decodes other samples";
}

void check(const PcmStreamConfig& c, Backend backend = Backend::cpu) {
  const testing::PcmStream s = testing::make_pcm_stream(c);
  check_with_ffmpeg(c, s);
  Decoder dec({.backend = backend});
  int frames = 0;
  dec.decode(s.bytes, [&](const Frame& f) {
    ++frames;
    EXPECT_EQ(f.hash, HashStatus::absent);
    for (int p = 0; p < 3; ++p) EXPECT_TRUE(f.planes[p] == s.expected[p]) << "plane " << p;
  });
  for (const auto& p : dec.problems()) ADD_FAILURE() << p.message;
  EXPECT_EQ(frames, 1);
}

TEST(HevcPcmTiles, PcmEightBit) {
  check({.width = 64, .height = 64});
}

TEST(HevcPcmTiles, PcmShiftedTo10Bit) {
  check({.width = 96,
         .height = 64,
         .bit_depth = 10,
         .pcm_bits_luma = 7,
         .pcm_bits_chroma = 5,
         .seed = 2});
}

TEST(HevcPcmTiles, TwoTileColumns) {
  check({.width = 128, .height = 64, .tile_cols = 2, .seed = 3});
}

TEST(HevcPcmTiles, TilesTwoByTwoWithWpp) {
  check({.width = 128, .height = 128, .tile_cols = 2, .tile_rows = 2, .wpp = true, .seed = 4});
}

TEST(HevcPcmTiles, WppWithDependentSliceSegment) {
  check({.width = 128,
         .height = 96,
         .bit_depth = 10,
         .pcm_bits_luma = 9,
         .pcm_bits_chroma = 8,
         .wpp = true,
         .dependent_from_ctb = 4,
         .seed = 5});
}

TEST(HevcPcmTiles, DependentSegmentMidRow) {
  check({.width = 128, .height = 64, .dependent_from_ctb = 2, .seed = 6});
}

TEST(HevcPcmTiles, DeblockingLeavesPcmAlone) {
  if (!Decoder::filters_available()) GTEST_SKIP() << "no hevc_filter module in this build";
  const PcmStreamConfig c{
      .width = 128, .height = 64, .tile_cols = 2, .deblocking = true, .seed = 7};
  check(c);
  check(c, Backend::cpu_parallel);
}

}  // namespace
}  // namespace sigpu::hevc
