#include "prores/frame_parse.hpp"

#include <string>

#include "prores/vld.hpp"

namespace sigpu::prores {
namespace {

std::uint32_t rb32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         p[3];
}
int rb16(const std::uint8_t* p) {
  return (p[0] << 8) | p[1];
}

// Parses picture `pic` starting at `pos`; returns the byte after it (pic_data_size) or the end.
std::size_t parse_picture(std::span<const std::uint8_t> f, std::size_t pos, ParsedFrame& out,
                          int pic) {
  PictureRef& p = out.picture[pic];
  p.first_slice = static_cast<int>(out.slices.size());
  const int mbw = out.shape.mb_width, mbh = out.shape.mb_height;
  const std::size_t left = f.size() - pos;
  const std::uint8_t* b = f.data() + pos;
  auto fail = [&](int log2) {
    p.error = kVldBadPicture;
    p.log2_slice_mbs = log2;
    p.slice_count = mbh * slices_per_row(mbw, log2);
    out.slices.resize(out.slices.size() + p.slice_count, SliceRef{0, 0, kVldBadPicture});
    return f.size();
  };
  if (left < 8) return fail(3);
  const int hdr = b[0] >> 3;
  const std::uint32_t data_size = rb32(b + 1);
  const int log2w = b[7] >> 4, log2h = b[7] & 15;
  // A picture larger than what is left is a truncated frame: its slices are checked one by one.
  if (hdr < 8 || static_cast<std::size_t>(hdr) > left || log2w > 3 || log2h)
    return fail(log2w > 3 ? 3 : log2w);
  p.log2_slice_mbs = log2w;
  // QuickTime (and FFmpeg) ignore the coded slice count and derive it from the geometry.
  p.slice_count = mbh * slices_per_row(mbw, log2w);
  if (static_cast<std::size_t>(hdr) + 2 * static_cast<std::size_t>(p.slice_count) > left)
    return fail(log2w);
  const std::uint8_t* table = b + hdr;
  std::size_t data = pos + hdr + 2 * static_cast<std::size_t>(p.slice_count);
  for (int i = 0; i < p.slice_count; ++i) {
    SliceRef s;
    s.size = static_cast<std::uint32_t>(rb16(table + 2 * i));
    s.offset = static_cast<std::uint32_t>(data);
    data += s.size;
    if (data > f.size())
      s.error = kVldOutOfFrame;
    else if (s.size < 6)
      s.error = kVldSliceTooSmall;
    out.slices.push_back(s);
  }
  return data_size > left ? f.size() : pos + data_size;
}

}  // namespace

int default_bit_depth(std::uint32_t fourcc, const FrameHeader& header) {
  if (fourcc == 0) return header.chroma == Chroma::c444 ? 12 : 10;
  const bool is4444 = fourcc == 0x61703468u /* ap4h */ || fourcc == 0x61703478u /* ap4x */;
  return is4444 ? 12 : 10;
}

FrameHeader parse_frame_header(std::span<const std::uint8_t> f) {
  if (f.size() < 28) throw Error("frame of " + std::to_string(f.size()) + " bytes is too short");
  if (f[4] != 'i' || f[5] != 'c' || f[6] != 'p' || f[7] != 'f')
    throw Error("frame does not start with an 'icpf' box");
  const std::uint8_t* b = f.data() + 8;
  const std::size_t left = f.size() - 8;
  FrameHeader h;
  h.header_size = rb16(b);
  if (h.header_size < 20 || static_cast<std::size_t>(h.header_size) > left)
    throw Error("frame header size " + std::to_string(h.header_size) + " does not fit the frame");
  h.version = rb16(b + 2);
  if (h.version > 1) throw Error("unsupported frame header version " + std::to_string(h.version));
  h.vendor.assign(reinterpret_cast<const char*>(b + 4), 4);
  for (char& c : h.vendor)
    if (c < 32 || c > 126) c = '?';
  h.width = rb16(b + 8);
  h.height = rb16(b + 10);
  // FFmpeg's av_image_check_size limit, and zero sizes.
  if (h.width == 0 || h.height == 0 ||
      static_cast<std::int64_t>(h.width + 128) * (h.height + 128) >= 0x7FFFFFFF / 8)
    throw Error("impossible frame dimensions " + std::to_string(h.width) + "x" +
                std::to_string(h.height));
  h.chroma = (b[12] & 0xC0) == 0xC0 ? Chroma::c444 : Chroma::c422;
  const int frame_type = (b[12] >> 2) & 3;
  // FFmpeg treats any non-zero interlace mode other than 1 as bottom field first.
  h.scan = frame_type == 0   ? Scan::progressive
           : frame_type == 1 ? Scan::top_field_first
                             : Scan::bottom_field_first;
  h.color_primaries = b[14];
  h.transfer = b[15];
  h.matrix = b[16];
  h.alpha_info = b[17] & 15;
  if (h.alpha_info > 2) throw Error("invalid alpha mode " + std::to_string(h.alpha_info));
  const int flags = b[19];
  std::size_t pos = 20;
  h.luma_matrix.fill(4);
  if (flags & 2) {
    if (pos + 64 > static_cast<std::size_t>(h.header_size))
      throw Error("frame header truncated in the luma quantisation matrix");
    for (int i = 0; i < 64; ++i) h.luma_matrix[i] = b[pos + i];
    h.custom_luma_matrix = true;
    pos += 64;
  }
  h.chroma_matrix = h.luma_matrix;  // FFmpeg 5.1 reuses the luma matrix when none is coded
  if (flags & 1) {
    if (pos + 64 > static_cast<std::size_t>(h.header_size))
      throw Error("frame header truncated in the chroma quantisation matrix");
    for (int i = 0; i < 64; ++i) h.chroma_matrix[i] = b[pos + i];
    h.custom_chroma_matrix = true;
  }
  return h;
}

ParsedFrame parse_frame(std::span<const std::uint8_t> f, int bit_depth) {
  ParsedFrame out;
  out.header = parse_frame_header(f);
  const FrameHeader& h = out.header;
  FrameShape& s = out.shape;
  s.width = h.width;
  s.height = h.height;
  s.chroma444 = h.chroma == Chroma::c444;
  s.interlaced = h.scan != Scan::progressive;
  s.top_first = h.scan != Scan::bottom_field_first;
  s.alpha_bits = h.alpha_info == 0 ? 0 : (h.alpha_info == 1 ? 8 : 16);
  s.bit_depth = bit_depth;
  s.mb_width = (h.width + 15) >> 4;
  s.mb_height = s.interlaced ? (h.height + 31) >> 5 : (h.height + 15) >> 4;
  out.format = {bit_depth, h.chroma, h.alpha_info != 0};
  out.pictures = s.interlaced ? 2 : 1;

  std::size_t pos = 8 + static_cast<std::size_t>(h.header_size);
  pos = parse_picture(f, pos, out, 0);
  if (out.pictures == 2) {
    if (pos >= f.size()) {
      // No second field: FFmpeg leaves it unwritten; here it is concealed and reported.
      out.picture[1].first_slice = static_cast<int>(out.slices.size());
      out.picture[1].error = kVldBadPicture;
      out.picture[1].slice_count = s.mb_height * slices_per_row(s.mb_width, 3);
      out.slices.resize(out.slices.size() + out.picture[1].slice_count,
                        SliceRef{0, 0, kVldBadPicture});
    } else {
      parse_picture(f, pos, out, 1);
    }
  }
  return out;
}

}  // namespace sigpu::prores
