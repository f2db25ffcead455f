#include "hevc/records.hpp"

namespace sigpu::hevc {

void PictureRecords::clear() {
  ctb_rs.clear();
  ctb_cu_begin.clear();
  parsed_ = {};
  truncate_to_parsed();
}

void PictureRecords::truncate_to_parsed() {
  const auto cut = [](auto& v, std::size_t n) { v.resize(n); };
  const auto cut_all = [&cut](std::size_t n, auto&... v) { (cut(v, n), ...); };
  cut_all(parsed_.cu, cu.x, cu.y, cu.log2, cu.flags, cu.luma_modes, cu.chroma_mode, cu.pu_begin,
          cu.tu_begin, cu.pcm_begin);
  cut_all(parsed_.pu, pu.x, pu.y, pu.w, pu.h, pu.mv, pu.ref_idx, pu.slice);
  cut_all(parsed_.tu, tu.x, tu.y, tu.log2, tu.comp, tu.mode, tu.qp, tu.flags, tu.avail, tu.cols,
          tu.rows, tu.coeff_begin, tu.coeff_count);
  coeffs.resize(parsed_.coeffs);
  pcm.resize(parsed_.pcm);
}

}  // namespace sigpu::hevc
