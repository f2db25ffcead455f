#include "hevc/records.hpp"

#include <algorithm>

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

void PictureRecords::append(const PictureRecords& o, std::size_t ctbs) {
  ctbs = std::min(ctbs, o.ctb_rs.size());
  // Where the kept CTBs end in each of o's arrays: at the first dropped CTB's first entries.
  const std::size_t n_cu = ctbs < o.ctb_rs.size() ? o.ctb_cu_begin[ctbs] : o.parsed_.cu;
  const std::size_t n_pu = n_cu < o.cu.size() ? o.cu.pu_begin[n_cu] : o.parsed_.pu;
  const std::size_t n_tu = n_cu < o.cu.size() ? o.cu.tu_begin[n_cu] : o.parsed_.tu;
  const std::size_t n_pcm = n_cu < o.cu.size() ? o.cu.pcm_begin[n_cu] : o.parsed_.pcm;
  const std::size_t n_coeffs = n_tu < o.tu.size() ? o.tu.coeff_begin[n_tu] : o.parsed_.coeffs;
  const auto base_cu = static_cast<std::uint32_t>(cu.size());
  const auto base_pu = static_cast<std::uint32_t>(pu.size());
  const auto base_tu = static_cast<std::uint32_t>(tu.size());
  const auto base_pcm = static_cast<std::uint32_t>(pcm.size());
  const auto base_coeffs = static_cast<std::uint32_t>(coeffs.size());
  const auto copy = [](auto& to, const auto& from, std::size_t n) {
    to.insert(to.end(), from.begin(), from.begin() + static_cast<std::ptrdiff_t>(n));
  };
  const auto shifted = [](auto& to, const auto& from, std::size_t n, std::uint32_t base) {
    for (std::size_t i = 0; i < n; ++i) to.push_back(from[i] + base);
  };
  copy(ctb_rs, o.ctb_rs, ctbs);
  shifted(ctb_cu_begin, o.ctb_cu_begin, ctbs, base_cu);
  copy(cu.x, o.cu.x, n_cu);
  copy(cu.y, o.cu.y, n_cu);
  copy(cu.log2, o.cu.log2, n_cu);
  copy(cu.flags, o.cu.flags, n_cu);
  copy(cu.luma_modes, o.cu.luma_modes, n_cu);
  copy(cu.chroma_mode, o.cu.chroma_mode, n_cu);
  shifted(cu.pu_begin, o.cu.pu_begin, n_cu, base_pu);
  shifted(cu.tu_begin, o.cu.tu_begin, n_cu, base_tu);
  shifted(cu.pcm_begin, o.cu.pcm_begin, n_cu, base_pcm);
  copy(pu.x, o.pu.x, n_pu);
  copy(pu.y, o.pu.y, n_pu);
  copy(pu.w, o.pu.w, n_pu);
  copy(pu.h, o.pu.h, n_pu);
  copy(pu.mv, o.pu.mv, n_pu);
  copy(pu.ref_idx, o.pu.ref_idx, n_pu);
  copy(pu.slice, o.pu.slice, n_pu);
  copy(tu.x, o.tu.x, n_tu);
  copy(tu.y, o.tu.y, n_tu);
  copy(tu.log2, o.tu.log2, n_tu);
  copy(tu.comp, o.tu.comp, n_tu);
  copy(tu.mode, o.tu.mode, n_tu);
  copy(tu.qp, o.tu.qp, n_tu);
  copy(tu.flags, o.tu.flags, n_tu);
  copy(tu.avail, o.tu.avail, n_tu);
  copy(tu.cols, o.tu.cols, n_tu);
  copy(tu.rows, o.tu.rows, n_tu);
  shifted(tu.coeff_begin, o.tu.coeff_begin, n_tu, base_coeffs);
  copy(tu.coeff_count, o.tu.coeff_count, n_tu);
  copy(coeffs, o.coeffs, n_coeffs);
  copy(pcm, o.pcm, n_pcm);
  parsed_ = {cu.size(), pu.size(), tu.size(), coeffs.size(), pcm.size()};
}

}  // namespace sigpu::hevc
