#include "hevc/cabac.hpp"

#include <algorithm>

namespace sigpu::hevc {
namespace {

// initValue by initType (Tables 9-5 to 9-37), in the order of enum Ctx. Elements of inter slices
// only are 154 (unused) for initType 0.
constexpr std::uint8_t kInit[3][kCtxCount] = {
    {
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
        127, 111, 79,  108, 123, 63,  // last_sig_coeff_x/y_prefix
        91,  171, 134, 141,           // coded_sub_block_flag
        111, 111, 125, 110, 110, 94,  124, 108, 124, 107, 125, 141, 179, 153, 125,
        107, 125, 141, 179, 153, 125, 107, 125, 141, 179, 153, 125, 140, 139, 182,
        182, 152, 136, 152, 136, 153, 136, 139, 111, 136, 139, 111, 141, 111,  // sig_coeff_flag
        140, 92,  137, 138, 140, 152, 138, 139, 153, 74,  149, 92,  139, 107, 122,
        152, 140, 179, 166, 182, 140, 227, 122, 197,  // coeff_abs_level_greater1_flag
        138, 153, 136, 167, 152, 152,                 // coeff_abs_level_greater2_flag
        154, 154, 154, 154, 154, 154, 154, 154, 154, 154, 154, 154, 154, 154, 154,
        154, 154, 154, 154, 154,  // inter elements
    },
    {
        153,                      // sao_merge_left/up_flag
        185,                      // sao_type_idx
        107, 139, 126,            // split_cu_flag
        154,                      // cu_transquant_bypass_flag
        154,                      // part_mode
        154,                      // prev_intra_luma_pred_flag
        152,                      // intra_chroma_pred_mode
        124, 138, 94,             // split_transform_flag
        153, 111,                 // cbf_luma
        149, 107, 167, 154, 154,  // cbf_cb, cbf_cr
        154, 154,                 // cu_qp_delta_abs
        139, 139,                 // transform_skip_flag
        125, 110, 94,  110, 95,  79,  125, 111, 110, 78,  110, 111, 111, 95,  94,
        108, 123, 108, 125, 110, 94,  110, 95,  79,  125, 111, 110, 78,  110, 111,
        111, 95,  94,  108, 123, 108,  // last_sig_coeff_x/y_prefix
        121, 140, 61,  154,            // coded_sub_block_flag
        155, 154, 139, 153, 139, 123, 123, 63,  153, 166, 183, 140, 136, 153, 154,
        166, 183, 140, 136, 153, 154, 166, 183, 140, 136, 153, 154, 170, 153, 123,
        123, 107, 121, 107, 121, 167, 151, 183, 140, 151, 183, 140, 140, 140,  // sig_coeff_flag
        154, 196, 196, 167, 154, 152, 167, 182, 182, 134, 149, 136, 153, 121, 136,
        137, 169, 194, 166, 167, 154, 167, 137, 182,  // coeff_abs_level_greater1_flag
        107, 167, 91,  122, 107, 167,                 // coeff_abs_level_greater2_flag
        197, 185, 201,                                // cu_skip_flag
        149,                                          // pred_mode_flag
        139, 154, 154,                                // part_mode ctxInc 1..3
        110,                                          // merge_flag
        122,                                          // merge_idx
        95,  79,  63,  31,  31,                       // inter_pred_idc
        153, 153,                                     // ref_idx_l0/l1
        140,                                          // abs_mvd_greater0_flag
        198,                                          // abs_mvd_greater1_flag
        168,                                          // mvp_l0/l1_flag
        79,                                           // rqt_root_cbf
    },
    {
        153,                      // sao_merge_left/up_flag
        160,                      // sao_type_idx
        107, 139, 126,            // split_cu_flag
        154,                      // cu_transquant_bypass_flag
        154,                      // part_mode
        183,                      // prev_intra_luma_pred_flag
        152,                      // intra_chroma_pred_mode
        224, 167, 122,            // split_transform_flag
        153, 111,                 // cbf_luma
        149, 92,  167, 154, 154,  // cbf_cb, cbf_cr
        154, 154,                 // cu_qp_delta_abs
        139, 139,                 // transform_skip_flag
        125, 110, 124, 110, 95,  94,  125, 111, 111, 79,  125, 126, 111, 111, 79,
        108, 123, 93,  125, 110, 124, 110, 95,  94,  125, 111, 111, 79,  125, 126,
        111, 111, 79,  108, 123, 93,  // last_sig_coeff_x/y_prefix
        121, 140, 61,  154,           // coded_sub_block_flag
        170, 154, 139, 153, 139, 123, 123, 63,  124, 166, 183, 140, 136, 153, 154,
        166, 183, 140, 136, 153, 154, 166, 183, 140, 136, 153, 154, 170, 153, 138,
        138, 122, 121, 122, 121, 167, 151, 183, 140, 151, 183, 140, 140, 140,  // sig_coeff_flag
        154, 196, 167, 167, 154, 152, 167, 182, 182, 134, 149, 136, 153, 121, 136,
        122, 169, 208, 166, 167, 154, 152, 167, 182,  // coeff_abs_level_greater1_flag
        107, 167, 91,  107, 107, 167,                 // coeff_abs_level_greater2_flag
        197, 185, 201,                                // cu_skip_flag
        134,                                          // pred_mode_flag
        139, 154, 154,                                // part_mode ctxInc 1..3
        154,                                          // merge_flag
        137,                                          // merge_idx
        95,  79,  63,  31,  31,                       // inter_pred_idc
        153, 153,                                     // ref_idx_l0/l1
        169,                                          // abs_mvd_greater0_flag
        198,                                          // abs_mvd_greater1_flag
        168,                                          // mvp_l0/l1_flag
        79,                                           // rqt_root_cbf
    },
};

}  // namespace

int cabac_lps_range(int state, int q_range_idx) {
  return cabac_tables::kLpsRange[state][q_range_idx];
}
int cabac_trans_idx_lps(int state) {
  return cabac_tables::kTransIdxLps[state];
}

ContextSet init_contexts(int slice_qp, int init_type) {
  ContextSet c{};
  const int qp = std::clamp(slice_qp, 0, 51);
  for (int i = 0; i < kCtxCount; ++i) {
    const std::uint8_t v = kInit[init_type][i];
    const int slope = v >> 4, offset = v & 15;
    const int m = slope * 5 - 45, n = (offset << 3) - 16;
    const int pre = std::clamp(((m * qp) >> 4) + n, 1, 126);
    const int mps = pre <= 63 ? 0 : 1;
    const int state = mps ? pre - 64 : 63 - pre;
    c[i] = static_cast<std::uint8_t>((state << 1) | mps);
  }
  return c;
}

bool Cabac::init(const std::uint8_t* data, std::size_t size, std::size_t start) {
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
  return value_ < range_;
}

}  // namespace sigpu::hevc
