#include "hevc/cabac.hpp"

#include <algorithm>

namespace sigpu::hevc {
namespace {

// Table 9-52 (rangeTabLps) and 9-53 (transIdxLps).
constexpr std::uint8_t kLpsRange[64][4] = {
    {128, 176, 208, 240}, {128, 167, 197, 227}, {128, 158, 187, 216}, {123, 150, 178, 205},
    {116, 142, 169, 195}, {111, 135, 160, 185}, {105, 128, 152, 175}, {100, 122, 144, 166},
    {95, 116, 137, 158},  {90, 110, 130, 150},  {85, 104, 123, 142},  {81, 99, 117, 135},
    {77, 94, 111, 128},   {73, 89, 105, 122},   {69, 85, 100, 116},   {66, 80, 95, 110},
    {62, 76, 90, 104},    {59, 72, 86, 99},     {56, 69, 81, 94},     {53, 65, 77, 89},
    {51, 62, 73, 85},     {48, 59, 69, 80},     {46, 56, 66, 76},     {43, 53, 63, 72},
    {41, 50, 59, 69},     {39, 48, 56, 65},     {37, 45, 54, 62},     {35, 43, 51, 59},
    {33, 41, 48, 56},     {32, 39, 46, 53},     {30, 37, 43, 50},     {29, 35, 41, 48},
    {27, 33, 39, 45},     {26, 31, 37, 43},     {24, 30, 35, 41},     {23, 28, 33, 39},
    {22, 27, 32, 37},     {21, 26, 30, 35},     {20, 24, 29, 33},     {19, 23, 27, 31},
    {18, 22, 26, 30},     {17, 21, 25, 28},     {16, 20, 23, 27},     {15, 19, 22, 25},
    {14, 18, 21, 24},     {14, 17, 20, 23},     {13, 16, 19, 22},     {12, 15, 18, 21},
    {12, 14, 17, 20},     {11, 14, 16, 19},     {11, 13, 15, 18},     {10, 12, 15, 17},
    {10, 12, 14, 16},     {9, 11, 13, 15},      {9, 11, 12, 14},      {8, 10, 12, 14},
    {8, 9, 11, 13},       {7, 9, 11, 12},       {7, 9, 10, 12},       {7, 8, 10, 11},
    {6, 8, 9, 11},        {6, 7, 9, 10},        {6, 7, 8, 9},         {2, 2, 2, 2},
};
constexpr std::uint8_t kTransIdxLps[64] = {
    0,  0,  1,  2,  2,  4,  4,  5,  6,  7,  8,  9,  9,  11, 11, 12, 13, 13, 15, 15, 16, 16,
    18, 18, 19, 19, 21, 21, 22, 22, 23, 24, 24, 25, 26, 26, 27, 27, 28, 29, 29, 30, 30, 30,
    31, 32, 32, 33, 33, 33, 34, 34, 35, 35, 35, 36, 36, 36, 37, 37, 37, 38, 38, 63,
};

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
  return kLpsRange[state][q_range_idx];
}
int cabac_trans_idx_lps(int state) {
  return kTransIdxLps[state];
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
  range_ = 510;
  value_ = next_byte() << 8;
  value_ |= next_byte();
  extra_ = 7;  // 16 bits read, the top 9 are ivlOffset
}

int Cabac::decode(std::uint8_t& ctx) {
  const int state = ctx >> 1;
  int bin = ctx & 1;
  const std::uint32_t lps = kLpsRange[state][(range_ >> 6) & 3];
  range_ -= lps;
  const std::uint32_t scaled = range_ << extra_;
  if (value_ < scaled) {
    ctx = static_cast<std::uint8_t>((std::min(state + 1, 62) << 1) | bin);
    if (range_ < 256) renorm(1);
  } else {
    value_ -= scaled;
    const int n = __builtin_clz(lps) - 23;  // shifts that bring lps to 256..510
    range_ = lps;
    if (state == 0) ctx ^= 1;
    ctx = static_cast<std::uint8_t>((kTransIdxLps[state] << 1) | (ctx & 1));
    bin ^= 1;
    renorm(n);
  }
  return bin;
}

int Cabac::bypass() {
  if (extra_ == 0) {
    value_ = (value_ << 8) | next_byte();
    extra_ = 8;
  }
  --extra_;
  const std::uint32_t scaled = range_ << extra_;
  if (value_ >= scaled) {
    value_ -= scaled;
    return 1;
  }
  return 0;
}

std::uint32_t Cabac::bypass_bits(int n) {
  std::uint32_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 1) | static_cast<std::uint32_t>(bypass());
  return v;
}

int Cabac::terminate() {
  range_ -= 2;
  if (value_ >= (range_ << extra_)) return 1;
  if (range_ < 256) renorm(1);
  return 0;
}

}  // namespace sigpu::hevc
