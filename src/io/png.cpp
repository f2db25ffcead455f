#include "io/png.hpp"

#include <algorithm>
#include <vector>

#ifdef SIGPU_HAVE_LIBPNG
#include <png.h>
#endif

namespace sigpu::io::png {

#ifdef SIGPU_HAVE_LIBPNG
namespace {

std::vector<std::uint8_t> to_rgb16(const PictureView& p, int matrix) {
  const double kr = (matrix == 5 || matrix == 6) ? 0.299 : 0.2126;
  const double kb = (matrix == 5 || matrix == 6) ? 0.114 : 0.0722, kg = 1 - kr - kb;
  const double unit = double(1 << (p.bit_depth - 8));
  const double amax = double((1 << p.bit_depth) - 1);
  const bool mono = p.chroma == Chroma::c400;
  const int channels = 3 + p.alpha;
  const int alpha_plane = mono ? 1 : 3;
  const int sx = p.chroma == Chroma::c420 || p.chroma == Chroma::c422 ? 1 : 0;
  const int sy = p.chroma == Chroma::c420 ? 1 : 0;
  std::vector<std::uint8_t> rgb(static_cast<std::size_t>(p.width) * p.height * channels * 2);
  auto store = [](std::uint8_t* o, double v) {
    const int u = static_cast<int>(std::clamp(v, 0.0, 1.0) * 65535.0 + 0.5);
    o[0] = static_cast<std::uint8_t>(u >> 8);
    o[1] = static_cast<std::uint8_t>(u & 0xFF);
  };
  for (int j = 0; j < p.height; ++j)
    for (int i = 0; i < p.width; ++i) {
      const double Y =
          (p.planes[0][static_cast<std::size_t>(j) * p.stride[0] + i] - 16 * unit) / (219 * unit);
      double B = 0, R = 0;
      if (!mono) {
        const std::size_t ci = static_cast<std::size_t>(j >> sy) * p.stride[1] + (i >> sx);
        const std::size_t ri = static_cast<std::size_t>(j >> sy) * p.stride[2] + (i >> sx);
        B = (p.planes[1][ci] - 128 * unit) / (224 * unit);
        R = (p.planes[2][ri] - 128 * unit) / (224 * unit);
      }
      std::uint8_t* o = &rgb[(static_cast<std::size_t>(j) * p.width + i) * channels * 2];
      store(o, Y + 2 * (1 - kr) * R);
      store(o + 2, Y - 2 * kb * (1 - kb) / kg * B - 2 * kr * (1 - kr) / kg * R);
      store(o + 4, Y + 2 * (1 - kb) * B);
      if (p.alpha)
        store(
            o + 6,
            p.planes[alpha_plane][static_cast<std::size_t>(j) * p.stride[alpha_plane] + i] / amax);
    }
  return rgb;
}

extern "C" void write_to_output(png_structp png, png_bytep data, png_size_t n) {
  auto* out = static_cast<Output*>(png_get_io_ptr(png));
  try {
    out->write({data, n});
  } catch (...) {
    png_error(png, "write failed");
  }
}

extern "C" void flush_nothing(png_structp) {}

}  // namespace

bool available() {
  return true;
}

void write(Output& out, const PictureView& p, int matrix) {
  const std::vector<std::uint8_t> rgb = to_rgb16(p, matrix);
  const int channels = 3 + p.alpha;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw OutputError("cannot write the PNG " + out.name());
  }
  png_set_write_fn(png, &out, write_to_output, flush_nothing);
  png_set_IHDR(png, info, static_cast<png_uint_32>(p.width), static_cast<png_uint_32>(p.height), 16,
               channels == 4 ? PNG_COLOR_TYPE_RGBA : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int j = 0; j < p.height; ++j)
    png_write_row(
        png, const_cast<png_bytep>(&rgb[static_cast<std::size_t>(j) * p.width * channels * 2]));
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
}

#else

bool available() {
  return false;
}

void write(Output&, const PictureView&, int) {
  throw UnsupportedError("PNG output needs libpng, which this build lacks");
}

#endif

}  // namespace sigpu::io::png
