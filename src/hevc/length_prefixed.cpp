#include "hevc/length_prefixed.hpp"

#include <sigpu/core.hpp>

namespace sigpu::hevc {
namespace {

constexpr std::uint8_t kStartCode[4] = {0, 0, 0, 1};

std::size_t read_be(std::span<const std::uint8_t> b, std::size_t at, int n) {
  std::size_t v = 0;
  for (int i = 0; i < n; ++i) v = v << 8 | b[at + i];
  return v;
}

}  // namespace

bool is_hvcc(std::span<const std::uint8_t> e) {
  return e.size() > 3 && (e[0] || e[1] || e[2] > 1);
}

Hvcc parse_hvcc(std::span<const std::uint8_t> r) {
  // 22 bytes of profile, level and format fields; the last holds lengthSizeMinusOne.
  if (r.size() < 23) throw InputError("hvcC: " + std::to_string(r.size()) + " bytes, under 23");
  Hvcc h;
  h.length_size = (r[21] & 3) + 1;
  if (h.length_size == 3) throw InputError("hvcC: lengthSizeMinusOne is 2");
  const int arrays = r[22];
  std::size_t at = 23;
  for (int a = 0; a < arrays; ++a) {
    if (at + 3 > r.size())
      throw InputError("hvcC: array " + std::to_string(a) + " of " + std::to_string(arrays) +
                       " cut short at byte " + std::to_string(at));
    const std::size_t count = read_be(r, at + 1, 2);
    at += 3;
    for (std::size_t i = 0; i < count; ++i) {
      if (at + 2 > r.size())
        throw InputError("hvcC: nalUnitLength of array " + std::to_string(a) + " cut short");
      const std::size_t len = read_be(r, at, 2);
      at += 2;
      if (len > r.size() - at)
        throw InputError("hvcC: NAL unit of " + std::to_string(len) + " bytes at byte " +
                         std::to_string(at) + " runs past the record's " +
                         std::to_string(r.size()) + " bytes");
      h.annexb.insert(h.annexb.end(), kStartCode, kStartCode + 4);
      h.annexb.insert(h.annexb.end(), r.begin() + at, r.begin() + at + len);
      at += len;
    }
  }
  return h;
}

std::string append_annexb(std::span<const std::uint8_t> s, int length_size,
                          std::vector<std::uint8_t>& out) {
  const std::size_t n = static_cast<std::size_t>(length_size);
  std::size_t at = 0;
  while (at < s.size()) {
    if (n > s.size() - at)
      return "a " + std::to_string(n) + "-byte NAL unit length at byte " + std::to_string(at) +
             " of a " + std::to_string(s.size()) + "-byte sample is cut short";
    const std::size_t len = read_be(s, at, length_size);
    at += n;
    if (len > s.size() - at)
      return "NAL unit length " + std::to_string(len) + " at byte " + std::to_string(at - n) +
             " runs past the " + std::to_string(s.size()) + "-byte sample";
    out.insert(out.end(), kStartCode, kStartCode + 4);
    out.insert(out.end(), s.begin() + at, s.begin() + at + len);
    at += len;
  }
  return "";
}

}  // namespace sigpu::hevc
