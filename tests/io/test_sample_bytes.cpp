// Picture samples to file bytes (io/sample_bytes.hpp, PictureWriter's raw planes) against a
// plain loop over samples: every length around the vector width, unaligned rows, odd widths and
// strides, samples with every bit set.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <sigpu/io.hpp>

#include "io/sample_bytes.hpp"
#include "support/rng.hpp"

namespace sigpu::io {
namespace {

/// The bytes a sample is in the file: its low byte, then (above 8 bits) its high byte.
void put_sample(std::uint16_t s, bool wide, std::vector<std::uint8_t>& out) {
  out.push_back(static_cast<std::uint8_t>(s & 0xFF));
  if (wide) out.push_back(static_cast<std::uint8_t>(s >> 8));
}

std::vector<std::uint16_t> random_samples(test::Rng& rng, std::size_t n) {
  std::vector<std::uint16_t> v(n);
  for (auto& s : v) s = static_cast<std::uint16_t>(rng.next());
  return v;
}

TEST(SampleBytes, EveryLengthAndAlignmentMatchesAPlainLoop) {
  test::Rng rng{7};
  constexpr std::uint8_t kGuard = 0xA5;
  for (const bool wide : {false, true})
    for (std::size_t n = 0; n <= 70; ++n)
      for (std::size_t shift = 0; shift < 4; ++shift) {
        const auto in = random_samples(rng, n + shift);
        std::vector<std::uint8_t> want;
        for (std::size_t i = 0; i < n; ++i) put_sample(in[shift + i], wide, want);
        // Output at an odd offset too, with guard bytes on both sides.
        std::vector<std::uint8_t> out(want.size() + shift + 16, kGuard);
        std::uint8_t* o = out.data() + shift;
        if (wide)
          samples_le16(in.data() + shift, n, o);
        else
          narrow_samples(in.data() + shift, n, o);
        ASSERT_EQ(std::vector<std::uint8_t>(o, o + want.size()), want)
            << (wide ? "16-bit" : "8-bit") << ", " << n << " samples, shift " << shift;
        for (std::size_t i = 0; i < out.size(); ++i) {
          if (i >= shift && i < shift + want.size()) continue;
          ASSERT_EQ(out[i], kGuard) << "byte " << i << " written outside, " << n << " samples";
        }
      }
}

TEST(SampleBytes, PictureWriterPlanesWithOddWidthsAndStrides) {
  namespace fs = std::filesystem;
  const fs::path path =
      fs::temp_directory_path() / ("sigpu_sample_bytes_" + std::to_string(::getpid()) + ".yuv");
  test::Rng rng{11};
  for (const int depth : {8, 10, 16})
    for (int trial = 0; trial < 6; ++trial) {
      PictureView p;
      p.width = 1 + static_cast<int>(rng.below(80));
      p.height = 1 + static_cast<int>(rng.below(9));
      p.bit_depth = depth;
      p.chroma = Chroma::c444;
      p.alpha = trial % 2 == 1;
      std::vector<std::uint16_t> planes[4];
      std::vector<std::uint8_t> want;
      for (int c = 0; c < 3 + p.alpha; ++c) {
        // Each plane its own width (luma-sized or not) and a stride beyond it by 0 to 20.
        const int w = c == 0 ? p.width : 1 + static_cast<int>(rng.below(80));
        const int stride = w + static_cast<int>(rng.below(21));
        planes[c] = random_samples(rng, static_cast<std::size_t>(stride) * p.height);
        p.planes[c] = planes[c].data();
        p.plane_width[c] = w;
        p.plane_height[c] = p.height;
        p.stride[c] = stride;
        for (int y = 0; y < p.height; ++y)
          for (int x = 0; x < w; ++x)
            put_sample(planes[c][static_cast<std::size_t>(y) * stride + x], depth > 8, want);
      }
      {
        Output out(path.string(), {.force = true});
        PictureWriter writer(out, PictureFormat::yuv, {});
        writer.write(p);
        writer.finish();
      }
      std::ifstream f(path, std::ios::binary);
      const std::vector<std::uint8_t> got{std::istreambuf_iterator<char>(f), {}};
      EXPECT_EQ(got, want) << depth << "-bit " << p.width << "x" << p.height << ", trial " << trial;
    }
  fs::remove(path);
}

}  // namespace
}  // namespace sigpu::io
