#include "hevc/residual_stage.hpp"

#include <algorithm>

#include "hevc/transform.hpp"

namespace sigpu::hevc {
namespace {

// Zeroes the first `rows` rows of an n-wide block over a constant width W <= n (the coded
// columns rounded up), so that the compiler writes a few vector stores instead of calling
// memset for each row.
template <int W>
void clear_rows(std::int32_t* c, int n, int rows) {
  for (int j = 0; j < rows; ++j) std::fill_n(c + j * n, W, 0);
}

}  // namespace

BlockResidual ResidualBlock::compute(const TuView& t, const std::uint32_t* coeffs,
                                     const ResidualParams& p) {
  const int log2 = t.log2, n = 1 << log2, count = t.coeff_count;
  const int bit_depth = tu_bit_depth(p, t);
  const TuKind kind = tu_kind(t);
  if (kind == TuKind::bypass) {
    for (int k = 0; k < count; ++k) coeffs_[coeff_index(coeffs[k])] = coeff_level(coeffs[k]);
  } else {
    const Dequantizer scale(log2, t.qp, bit_depth, tu_scaling(p, t));
    for (int k = 0; k < count; ++k) {
      const int i = coeff_index(coeffs[k]);
      coeffs_[i] = scale(coeff_level(coeffs[k]), i);
    }
  }
  if (kind == TuKind::bypass || kind == TuKind::skip) {
    if (kind == TuKind::skip)
      transform_skip_residual(coeffs_, residual_, log2, bit_depth);
    else
      std::copy_n(coeffs_, n * n, residual_);
    std::fill_n(coeffs_, n * n, 0);
    return {residual_, 0};
  }
  if (t.cols == 1 && t.rows == 1 && kind == TuKind::dct) {  // DC only: a constant residual
    const std::int32_t dc = inverse_dc(coeffs_[0], bit_depth);
    coeffs_[0] = 0;
    return {nullptr, dc};
  }
  inverse_transform(coeffs_, residual_, log2, kind == TuKind::dst, bit_depth, t.cols, t.rows);
  // Back to all zero for the next block: only the region that held coefficients.
  if (t.cols <= 4)
    clear_rows<4>(coeffs_, n, t.rows);
  else if (t.cols <= 8)
    clear_rows<8>(coeffs_, n, t.rows);
  else if (t.cols <= 16)
    clear_rows<16>(coeffs_, n, t.rows);
  else
    clear_rows<32>(coeffs_, n, t.rows);
  return {residual_, 0};
}

ResidualParams residual_params(const Sps& sps, const Pps& pps, ScalingFactors& storage) {
  ResidualParams p;
  p.bit_depth[0] = sps.bit_depth_luma;
  p.bit_depth[1] = sps.bit_depth_chroma;
  if (sps.scaling_list_enabled) {
    storage = (pps.scaling_list_present ? pps.scaling_list : sps.scaling_list).factors();
    p.scaling = storage.table.data();
  }
  return p;
}

void residual_stage_cpu(const PictureRecords& rec, const ResidualParams& p,
                        const ResidualPlanes& out) {
  const TuArrays tus = tu_arrays(rec.tu);
  ResidualBlock block;
  for (std::size_t i = 0; i < rec.tu.size(); ++i) {
    const TuView t = tus[i];
    if (!(t.flags & kTuCoded)) continue;
    const BlockResidual r = block.compute(t, rec.coeffs.data() + t.coeff_begin, p);
    const int n = 1 << t.log2;
    std::int16_t* dst = out.data[t.comp] + t.y * out.stride[t.comp] + t.x;
    for (int y = 0; y < n; ++y)
      for (int x = 0; x < n; ++x)
        dst[y * out.stride[t.comp] + x] = saturate16(r.samples ? r.samples[y * n + x] : r.value);
  }
}

void order_coded_tus(const TuRecords& tu, TuOrder& out) {
  std::uint32_t count[4] = {};
  for (std::size_t i = 0; i < tu.size(); ++i)
    if (tu.flags[i] & kTuCoded) ++count[tu.log2[i] - 2];
  out.begin[0] = 0;
  for (int s = 0; s < 4; ++s) out.begin[s + 1] = out.begin[s] + count[s];
  out.tu.resize(out.begin[4]);
  std::uint32_t next[4] = {out.begin[0], out.begin[1], out.begin[2], out.begin[3]};
  for (std::size_t i = 0; i < tu.size(); ++i)
    if (tu.flags[i] & kTuCoded) out.tu[next[tu.log2[i] - 2]++] = static_cast<std::uint32_t>(i);
}

}  // namespace sigpu::hevc
