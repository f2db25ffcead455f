#include "hevc/nal.hpp"

#include <algorithm>

#include "hevc/errors.hpp"

namespace sigpu::hevc {

std::vector<NalSpan> split_annexb(std::span<const std::uint8_t> s) {
  std::vector<NalSpan> out;
  const std::size_t n = s.size();
  std::size_t i = 0;
  auto find_start = [&](std::size_t from) {
    for (std::size_t j = from; j + 2 < n; ++j)
      if (s[j] == 0 && s[j + 1] == 0 && s[j + 2] == 1) return j;
    return n;
  };
  i = find_start(0);
  while (i < n) {
    const std::size_t prefix = (i > 0 && s[i - 1] == 0) ? i - 1 : i;
    const std::size_t begin = i + 3;
    const std::size_t next = find_start(begin);
    std::size_t end = next;
    while (end > begin && s[end - 1] == 0) --end;  // trailing_zero_8bits and the next zero_byte
    out.push_back({prefix, begin, end});
    i = next;
  }
  return out;
}

std::size_t NalUnit::rbsp_offset(std::size_t escaped) const {
  // The k-th removed byte sat at escaped position removed[k] + k.
  std::size_t k = 0;
  while (k < removed.size() && removed[k] + k < escaped) ++k;
  return escaped - k;
}

NalUnit parse_nal(std::span<const std::uint8_t> nal) {
  if (nal.size() < 2) throw DecodeError("NAL unit shorter than its 2-byte header");
  NalUnit u;
  if (nal[0] & 0x80) throw DecodeError("forbidden_zero_bit is 1");
  u.type = (nal[0] >> 1) & 0x3f;
  u.layer_id = ((nal[0] & 1) << 5) | (nal[1] >> 3);
  const int tid_plus1 = nal[1] & 7;
  if (tid_plus1 == 0) throw DecodeError("nuh_temporal_id_plus1 is 0");
  u.temporal_id = tid_plus1 - 1;
  u.rbsp.reserve(nal.size() - 2);
  int zeros = 0;
  for (std::size_t i = 2; i < nal.size(); ++i) {
    const std::uint8_t b = nal[i];
    if (zeros >= 2 && b == 3) {
      u.removed.push_back(u.rbsp.size());
      zeros = 0;
      continue;
    }
    zeros = b == 0 ? zeros + 1 : 0;
    u.rbsp.push_back(b);
  }
  return u;
}

const char* nal_type_name(int t) {
  switch (t) {
    case 0:
      return "TRAIL_N";
    case 1:
      return "TRAIL_R";
    case 2:
      return "TSA_N";
    case 3:
      return "TSA_R";
    case 4:
      return "STSA_N";
    case 5:
      return "STSA_R";
    case 6:
      return "RADL_N";
    case 7:
      return "RADL_R";
    case 8:
      return "RASL_N";
    case 9:
      return "RASL_R";
    case 16:
      return "BLA_W_LP";
    case 17:
      return "BLA_W_RADL";
    case 18:
      return "BLA_N_LP";
    case 19:
      return "IDR_W_RADL";
    case 20:
      return "IDR_N_LP";
    case 21:
      return "CRA_NUT";
    case 32:
      return "VPS";
    case 33:
      return "SPS";
    case 34:
      return "PPS";
    case 35:
      return "AUD";
    case 36:
      return "EOS";
    case 37:
      return "EOB";
    case 38:
      return "FD";
    case 39:
      return "PREFIX_SEI";
    case 40:
      return "SUFFIX_SEI";
    default:
      return "reserved";
  }
}

}  // namespace sigpu::hevc
