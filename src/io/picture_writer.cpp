#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include <sigpu/io.hpp>

#include "io/png.hpp"
#include "io/sample_bytes.hpp"

namespace sigpu::io {
namespace {

int plane_count(const PictureView& p) {
  return (p.chroma == Chroma::c400 ? 1 : 3) + p.alpha;
}

std::size_t samples_of(const PictureView& p) {
  std::size_t n = 0;
  for (int c = 0; c < plane_count(p); ++c)
    n += static_cast<std::size_t>(p.plane_width[c]) * p.plane_height[c];
  return n;
}

bool same_shape(const PictureView& a, const PictureView& b) {
  if (a.bit_depth != b.bit_depth || a.chroma != b.chroma || a.alpha != b.alpha) return false;
  for (int c = 0; c < 4; ++c)
    if (a.plane_width[c] != b.plane_width[c] || a.plane_height[c] != b.plane_height[c])
      return false;
  return true;
}

/// Y4M's colour space tag, as FFmpeg writes and reads it; empty when Y4M has none.
std::string y4m_colourspace(const PictureView& p) {
  // Built by appending: GCC 12 warns falsely (-Wrestrict) about literal + string chains.
  std::string tag;
  const bool wide = p.bit_depth > 8;
  switch (p.chroma) {
    case Chroma::c400:
      if (p.alpha) return "";
      tag = "mono";
      if (wide) tag += std::to_string(p.bit_depth);
      return tag;
    case Chroma::c420:
      if (p.alpha) return "";
      if (!wide) return "420jpeg";
      tag = "420";
      break;
    case Chroma::c422:
      if (p.alpha) return "";
      tag = "422";
      break;
    case Chroma::c444:
      if (p.alpha) return p.bit_depth == 8 ? "444alpha" : "";
      tag = "444";
      break;
  }
  if (wide) tag.append("p").append(std::to_string(p.bit_depth));
  return tag;
}

}  // namespace

struct PictureWriter::Impl {
  Output& out;
  PictureFormat format;
  VideoInfo info;
  PictureView first{};  ///< the first picture's shape (its pointers are not used)
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint8_t> npy_written;

  void put_planes(const PictureView& p) {
    const bool wide = p.bit_depth > 8;
    bytes.resize(samples_of(p) * (wide ? 2 : 1));
    std::uint8_t* o = bytes.data();
    for (int c = 0; c < plane_count(p); ++c) {
      const auto w = static_cast<std::size_t>(p.plane_width[c]);
      for (int y = 0; y < p.plane_height[c]; ++y) {
        const std::uint16_t* row = p.planes[c] + static_cast<std::size_t>(y) * p.stride[c];
        if (wide)
          samples_le16(row, w, o);
        else
          narrow_samples(row, w, o);
        o += wide ? 2 * w : w;
      }
    }
    out.write(bytes);
  }

  std::string y4m_header(const PictureView& p) const {
    const std::string cs = y4m_colourspace(p);
    if (cs.empty())
      throw UsageError("Y4M cannot hold " + std::to_string(p.bit_depth) + "-bit pictures" +
                       (p.alpha ? " with alpha" : "") + "; write .yuv or .npy instead");
    const char scan = p.scan == Scan::progressive       ? 'p'
                      : p.scan == Scan::top_field_first ? 't'
                                                        : 'b';
    std::string h = "YUV4MPEG2 W" + std::to_string(p.width) + " H" + std::to_string(p.height) +
                    " F" + std::to_string(info.fps_num) + ":" + std::to_string(info.fps_den) +
                    " I" + scan + " A" + std::to_string(info.sar_num) + ":" +
                    std::to_string(info.sar_den) + " C" + cs;
    if (p.bit_depth > 8) {
      std::string upper = cs;
      for (auto& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      h += " XYSCSS=" + upper;
    }
    if (info.range != Range::unknown)
      h += info.range == Range::limited ? " XCOLORRANGE=LIMITED" : " XCOLORRANGE=FULL";
    return h + "\n";
  }

  /// 128 bytes, rewritten in place at finish() with the final count.
  std::vector<std::uint8_t> npy_header(std::uint64_t pictures) const {
    const PictureView& p = first;
    bool equal = true;
    for (int c = 1; c < plane_count(p); ++c)
      equal &= p.plane_width[c] == p.plane_width[0] && p.plane_height[c] == p.plane_height[0];
    std::string dict = "{'descr': '";
    dict.append(p.bit_depth > 8 ? "<u2" : "|u1").append("', 'fortran_order': False, 'shape': (");
    dict.append(std::to_string(pictures)).append(", ");
    if (equal)
      dict.append(std::to_string(plane_count(p)))
          .append(", ")
          .append(std::to_string(p.plane_height[0]))
          .append(", ")
          .append(std::to_string(p.plane_width[0]));
    else
      dict.append(std::to_string(samples_of(p)));
    dict.append("), }");
    dict.resize(128 - 10 - 1, ' ');
    dict += '\n';
    std::string h("\x93NUMPY\x01\x00", 8);
    h += static_cast<char>(dict.size() & 0xFF);
    h += static_cast<char>(dict.size() >> 8);
    h += dict;
    return {h.begin(), h.end()};
  }
};

PictureWriter::PictureWriter(Output& out, PictureFormat format, const VideoInfo& info)
    : impl_(new Impl{out, format, info}) {
  if (format == PictureFormat::png && !png_available())
    throw UnsupportedError("PNG output needs libpng, which this build lacks");
  if (format == PictureFormat::npy && !info.expected_pictures && !out.seekable())
    throw UsageError("a .npy on " + out.name() +
                     " needs the picture count up front, and this input does not give it");
  // Y4M needs a rate and an aspect ratio: 25 fps and square pixels when the input states none.
  if (info.fps_num <= 0 || info.fps_den <= 0) impl_->info.fps_num = 25, impl_->info.fps_den = 1;
  if (info.sar_num <= 0 || info.sar_den <= 0) impl_->info.sar_num = impl_->info.sar_den = 1;
}

PictureWriter::~PictureWriter() = default;

bool PictureWriter::png_available() {
  return png::available();
}

void PictureWriter::write(const PictureView& p) {
  Impl& m = *impl_;
  if (pictures_ == 0) {
    m.first = p;
    if (m.format == PictureFormat::y4m) m.out.write(m.y4m_header(p));
    if (m.format == PictureFormat::npy) {
      m.npy_written = m.npy_header(m.info.expected_pictures);
      m.out.write(m.npy_written);
    }
  } else if (m.format == PictureFormat::png) {
    throw UsageError("a PNG holds one picture; choose one (e.g. --frame N) or write .y4m");
  } else if (m.format != PictureFormat::yuv && !same_shape(m.first, p)) {
    throw UsageError("picture " + std::to_string(pictures_) +
                     " has another size or format than "
                     "the first; a single .y4m or .npy cannot hold both (write .yuv)");
  }
  switch (m.format) {
    case PictureFormat::y4m:
      m.out.write("FRAME\n");
      [[fallthrough]];
    case PictureFormat::yuv:
    case PictureFormat::npy:
      m.put_planes(p);
      break;
    case PictureFormat::png:
      png::write(m.out, p, m.info.matrix);
      break;
  }
  ++pictures_;
}

void PictureWriter::finish() {
  Impl& m = *impl_;
  if (m.format == PictureFormat::npy && pictures_ > 0) {
    const auto header = m.npy_header(pictures_);
    if (header != m.npy_written) {
      if (!m.out.seekable())
        throw Error("cannot finish '" + m.out.name() + "': " + std::to_string(pictures_) +
                    " pictures written where " + std::to_string(m.info.expected_pictures) +
                    " were announced");
      m.out.seek(0);
      m.out.write(header);
    }
  }
  m.out.commit();
}

}  // namespace sigpu::io
