#include "hevc/residual_stage.hpp"

namespace sigpu::hevc {

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
