#include "hevc/inter_stage.hpp"

#include <string>

#include "hevc/errors.hpp"

namespace sigpu::hevc {

InterSlice inter_slice(const SliceHeader& sh, const std::int8_t (&ref)[2][16]) {
  InterSlice s{};
  for (int l = 0; l < 2; ++l)
    for (int i = 0; i < 16; ++i) s.ref[l][i] = i < sh.num_ref_idx[l] ? ref[l][i] : -1;
  s.weighted = sh.weighted;
  if (sh.weighted) {
    s.log2_denom[0] = static_cast<std::uint8_t>(sh.weights.log2_denom[0]);
    s.log2_denom[1] = static_cast<std::uint8_t>(sh.weights.log2_denom[1]);
    for (int l = 0; l < 2; ++l)
      for (int i = 0; i < 16; ++i)
        for (int c = 0; c < 3; ++c) {
          s.weight[l][i][c] = sh.weights.weight[l][i][c];
          s.offset[l][i][c] = sh.weights.offset[l][i][c];
        }
  }
  return s;
}

void check_inter_records(const PuRecords& pu, std::span<const InterSlice> slices, int ref_count,
                         int width, int height, const InterParams& params) {
  if (params.chroma_format > 1)
    throw Unsupported("inter stage: chroma format " + std::to_string(params.chroma_format) +
                      " (4:0:0 and 4:2:0 only)");
  for (std::size_t p = 0; p < pu.size(); ++p) {
    auto fail = [&](const char* what) {
      throw DecodeError("inter stage: PU " + std::to_string(p) + " " + what);
    };
    if (pu.w[p] < 4 || pu.w[p] > 64 || pu.h[p] < 4 || pu.h[p] > 64 || pu.x[p] % 4 || pu.y[p] % 4 ||
        pu.x[p] + pu.w[p] > width || pu.y[p] + pu.h[p] > height)
      fail("lies outside the picture");
    if (pu.slice[p] >= slices.size()) fail("names no slice of the table");
    const InterSlice& s = slices[pu.slice[p]];
    int used = 0;
    for (int l = 0; l < 2; ++l) {
      const int r = pu.ref_idx[p][static_cast<std::size_t>(l)];
      if (r < 0) continue;
      ++used;
      if (r >= 16 || s.ref[l][r] < 0 || s.ref[l][r] >= ref_count)
        fail("names no reference picture");
    }
    if (!used) fail("uses no reference list");
  }
}

void inter_stage_cpu(const PuRecords& pu, std::span<const InterSlice> slices,
                     std::span<const RefPicture> refs, const InterParams& p,
                     const InterPlanes& out) {
  const PuArrays arrays = pu_arrays(pu);
  const int comps = p.chroma_format == 0 ? 1 : 3;
  for (std::size_t k = 0; k < pu.size(); ++k) {
    const PuView v = arrays[k];
    for (int c = 0; c < comps; ++c)
      for (int j = 0; j < pu_comp_height(v, c); ++j)
        for (int i = 0; i < pu_comp_width(v, c); ++i)
          predict_pu_sample(v, c, i, j, slices[v.slice], refs.data(), p, out);
  }
}

}  // namespace sigpu::hevc
