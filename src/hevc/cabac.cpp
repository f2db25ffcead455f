#include "hevc/cabac.hpp"

#include <algorithm>

namespace sigpu::hevc {
namespace {

// initValue for initType 0 (Tables 9-5 to 9-37), in the order of enum Ctx.
constexpr std::uint8_t kInitI[kCtxCount] = {
    153,                      // sao_merge_left/up_flag
    200,                      // sao_type_idx
    139, 141, 157,            // split_cu_flag
    154,                      // cu_transquant_bypass_flag
    184,                      // part_mode
    184,                      // prev_intra_luma_pred_flag
    63,                       // intra_chroma_pred_mode
    153, 138, 138,            // split_transform_flag
    111, 141,                 // cbf_luma
    94,  138, 182, 154, 154,  // cbf_cb, cbf_cr
    154, 154,                 // cu_qp_delta_abs
    139, 139,                 // transform_skip_flag
    110, 110, 124, 125, 140, 153, 125, 127, 140, 109, 111, 143, 127, 111, 79,
    108, 123, 63,  110, 110, 124, 125, 140, 153, 125, 127, 140, 109, 111, 143,
    127, 111, 79,  108, 123, 63,  91,  171, 134, 141,  // coded_sub_block_flag
    111, 111, 125, 110, 110, 94,  124, 108, 124, 107, 125, 141, 179, 153, 125,
    107, 125, 141, 179, 153, 125, 107, 125, 141, 179, 153, 125, 140, 139, 182,
    182, 152, 136, 152, 136, 153, 136, 139, 111, 136, 139, 111, 141, 111,  // sig_coeff_flag
    140, 92,  137, 138, 140, 152, 138, 139, 153, 74,  149, 92,  139, 107, 122,
    152, 140, 179, 166, 182, 140, 227, 122, 197,  // coeff_abs_level_greater1_flag
    138, 153, 136, 167, 152, 152,                 // coeff_abs_level_greater2_flag
};

}  // namespace

int cabac_lps_range(int state, int q_range_idx) {
  return cabac_tables::kLpsRange[state][q_range_idx];
}
int cabac_trans_idx_lps(int state) {
  return cabac_tables::kTransIdxLps[state];
}

ContextSet init_contexts(int slice_qp) {
  ContextSet c{};
  const int qp = std::clamp(slice_qp, 0, 51);
  for (int i = 0; i < kCtxCount; ++i) {
    const int slope = kInitI[i] >> 4, offset = kInitI[i] & 15;
    const int m = slope * 5 - 45, n = (offset << 3) - 16;
    const int pre = std::clamp(((m * qp) >> 4) + n, 1, 126);
    const int mps = pre <= 63 ? 0 : 1;
    const int state = mps ? pre - 64 : 63 - pre;
    c[i] = static_cast<std::uint8_t>((state << 1) | mps);
  }
  return c;
}

void Cabac::init(const std::uint8_t* data, std::size_t size, std::size_t start) {
  data_ = data;
  size_ = size;
  pos_ = start;
  range_ = std::uint64_t{510} << kShift;
  value_ = 0;
  bits_left_ = 0;
  refill();
  // ivlOffset: the first 9 bits.
  value_ <<= 9;
  bits_left_ -= 9;
  refill();
}

}  // namespace sigpu::hevc
