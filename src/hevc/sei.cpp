#include "hevc/sei.hpp"

#include <bit>

#include "core/md5.hpp"
#include "hevc/syntax_reader.hpp"

namespace sigpu::hevc {

std::optional<PictureHash> parse_sei_picture_hash(std::span<const std::uint8_t> rbsp,
                                                  int components) {
  SyntaxReader r(rbsp);
  std::optional<PictureHash> found;
  do {
    std::uint32_t type = 0, size = 0, b;
    do {
      b = r.u(8, "sei last_payload_type_byte");
      type += b;
    } while (b == 0xff && type < 1u << 20);
    do {
      b = r.u(8, "sei last_payload_size_byte");
      size += b;
    } while (b == 0xff && size < 1u << 24);
    if (std::uint64_t{size} * 8 > r.bits_left())
      SyntaxReader::fail("sei_payload", "payload size beyond the NAL unit");
    if (type == 132) {
      SyntaxReader p(rbsp.subspan(r.byte_position(), size));
      PictureHash h;
      h.type = static_cast<int>(p.u(8, "hash_type"));
      if (h.type > 2) SyntaxReader::fail("hash_type", "reserved value " + std::to_string(h.type));
      for (int c = 0; c < components; ++c) {
        if (h.type == 0)
          for (auto& byte : h.md5[c]) byte = static_cast<std::uint8_t>(p.u(8, "picture_md5"));
        else if (h.type == 1)
          h.value[c] = p.u(16, "picture_crc");
        else
          h.value[c] = p.u(32, "picture_checksum");
      }
      found = h;
    }
    r.skip_bits(std::uint64_t{size} * 8, "sei_payload");
  } while (r.more_rbsp_data(rbsp));
  return found;
}

unsigned hash_mismatches(const PictureHash& h, const DecodedPicture& pic) {
  unsigned mask = 0;
  const int comps = pic.sps->chroma_format_idc == 0 ? 1 : 3;
  for (int c = 0; c < comps; ++c) {
    const int depth = c ? pic.sps->bit_depth_chroma : pic.sps->bit_depth_luma;
    const auto& plane = pic.planes[c];
    const int w = pic.width[c], ht = pic.height[c];
    const bool wide = depth > 8;
    if (h.type == 0) {
      Md5 md5;
      if (wide && std::endian::native == std::endian::little) {
        // The samples' bytes in memory are already the hash's order: low byte, then high byte.
        md5.update(plane.data(), static_cast<std::size_t>(w) * ht * sizeof(plane[0]));
        if (md5.finish() != h.md5[c]) mask |= 1u << c;
        continue;
      }
      std::vector<std::uint8_t> row(static_cast<std::size_t>(w) * (wide ? 2 : 1));
      for (int y = 0; y < ht; ++y) {
        for (int x = 0; x < w; ++x) {
          const std::uint16_t v = plane[static_cast<std::size_t>(y) * w + x];
          if (wide) {
            row[2 * x] = static_cast<std::uint8_t>(v & 0xff);
            row[2 * x + 1] = static_cast<std::uint8_t>(v >> 8);
          } else {
            row[x] = static_cast<std::uint8_t>(v);
          }
        }
        md5.update(row.data(), row.size());
      }
      if (md5.finish() != h.md5[c]) mask |= 1u << c;
    } else if (h.type == 1) {
      std::uint32_t crc = 0xffff;
      auto feed = [&crc](std::uint32_t byte) {  // MSB first
        for (int i = 7; i >= 0; --i) {
          const std::uint32_t msb = (crc >> 15) & 1;
          crc = (((crc << 1) + ((byte >> i) & 1)) & 0xffff) ^ (msb * 0x1021);
        }
      };
      for (int y = 0; y < ht; ++y)
        for (int x = 0; x < w; ++x) {  // the low byte, then above 8 bits the high one
          const std::uint32_t v = plane[static_cast<std::size_t>(y) * w + x];
          feed(v & 0xff);
          if (wide) feed(v >> 8);
        }
      for (int i = 0; i < 16; ++i) {
        const std::uint32_t msb = (crc >> 15) & 1;
        crc = ((crc << 1) & 0xffff) ^ (msb * 0x1021);
      }
      if (crc != h.value[c]) mask |= 1u << c;
    } else {
      std::uint32_t sum = 0;
      for (int y = 0; y < ht; ++y)
        for (int x = 0; x < w; ++x) {
          const std::uint32_t v = plane[static_cast<std::size_t>(y) * w + x];
          const std::uint32_t mask = (x & 0xff) ^ (y & 0xff) ^ (x >> 8) ^ (y >> 8);
          sum += (v & 0xff) ^ mask;
          if (wide) sum += (v >> 8) ^ mask;
        }
      if (sum != h.value[c]) mask |= 1u << c;
    }
  }
  return mask;
}

}  // namespace sigpu::hevc
