#include "hevc/inter_cases.hpp"

#include <algorithm>
#include <random>

#include "hevc/inter_pred.hpp"
#include "hevc/inter_stage.hpp"
#include "hevc/parsed_pictures.hpp"
#include "hevc/streams.hpp"
#include "support/twin.hpp"

namespace sigpu::hevc::testing {
namespace {

struct Random {
  std::mt19937_64 rng;
  int below(int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); }
  int between(int lo, int hi) { return lo + below(hi - lo + 1); }
};

// A motion vector component: mostly near, at times far outside the picture or at the int16
// extremes.
std::int16_t random_mv(Random& r) {
  switch (r.below(8)) {
    case 0:
      return static_cast<std::int16_t>(r.between(-1200, 1200));
    case 1:
      return static_cast<std::int16_t>(r.below(2) ? r.between(-32768, -32700)
                                                  : r.between(32700, 32767));
    default:
      return static_cast<std::int16_t>(r.between(-80, 80));
  }
}

void push_pu(InterCase& ic, Random& r, int x, int y, int w, int h) {
  PuRecords& pu = ic.pu;
  pu.x.push_back(static_cast<std::uint16_t>(x));
  pu.y.push_back(static_cast<std::uint16_t>(y));
  pu.w.push_back(static_cast<std::uint8_t>(w));
  pu.h.push_back(static_cast<std::uint8_t>(h));
  const int slice = r.below(static_cast<int>(ic.slices.size()));
  pu.slice.push_back(static_cast<std::uint16_t>(slice));
  const int use = r.below(3);  // L0, L1, both
  std::array<std::int8_t, 2> ref{-1, -1};
  std::array<std::int16_t, 4> mv{};
  for (int l = 0; l < 2; ++l) {
    if (use != 2 && use != l) continue;
    int count = 0;
    while (count < 16 && ic.slices[slice].ref[l][count] >= 0) ++count;
    ref[l] = static_cast<std::int8_t>(r.below(count));
    mv[2 * l] = random_mv(r);
    mv[2 * l + 1] = random_mv(r);
  }
  pu.ref_idx.push_back(ref);
  pu.mv.push_back(mv);
}

// A CU of `size` at (x, y): split further at random, else its PUs by a random PartMode.
void push_cu(InterCase& ic, Random& r, int x, int y, int size) {
  if (size > 8 && r.below(3) == 0) {
    const int h = size / 2;
    for (int k = 0; k < 4; ++k) push_cu(ic, r, x + (k & 1) * h, y + (k >> 1) * h, h);
    return;
  }
  const int s = size, h = size / 2, q = size / 4;
  switch (r.below(size > 8 ? 8 : 4)) {
    case 0:  // 2Nx2N
      return push_pu(ic, r, x, y, s, s);
    case 1:  // 2NxN
      push_pu(ic, r, x, y, s, h);
      return push_pu(ic, r, x, y + h, s, h);
    case 2:  // Nx2N
      push_pu(ic, r, x, y, h, s);
      return push_pu(ic, r, x + h, y, h, s);
    case 3:  // NxN
      for (int k = 0; k < 4; ++k) push_pu(ic, r, x + (k & 1) * h, y + (k >> 1) * h, h, h);
      return;
    case 4:  // 2NxnU
      push_pu(ic, r, x, y, s, q);
      return push_pu(ic, r, x, y + q, s, s - q);
    case 5:  // 2NxnD
      push_pu(ic, r, x, y, s, s - q);
      return push_pu(ic, r, x, y + s - q, s, q);
    case 6:  // nLx2N
      push_pu(ic, r, x, y, q, s);
      return push_pu(ic, r, x + q, y, s - q, s);
    default:  // nRx2N
      push_pu(ic, r, x, y, s - q, s);
      return push_pu(ic, r, x + s - q, y, q, s);
  }
}

}  // namespace

std::vector<RefPicture> InterCase::ref_table() const {
  std::vector<RefPicture> t(refs.size());
  for (std::size_t k = 0; k < refs.size(); ++k)
    for (int c = 0; c < planes; ++c)
      t[k].plane[c] = {refs[k][c].data(), width[c], width[c], height[c]};
  return t;
}

InterCase random_inter_case(std::uint64_t seed, int width, int height) {
  Random r{std::mt19937_64(seed)};
  InterCase ic;
  ic.name = "random " + std::to_string(seed);
  ic.params.bit_depth[0] = seed % 2 ? 10 : 8;
  ic.params.bit_depth[1] = seed % 3 ? ic.params.bit_depth[0] : 18 - ic.params.bit_depth[0];
  ic.params.chroma_format = seed % 4 == 3 ? 0 : 1;
  ic.planes = ic.params.chroma_format ? 3 : 1;
  ic.width[0] = width;
  ic.height[0] = height;
  for (int c = 1; c < ic.planes; ++c) {
    ic.width[c] = ic.width[0] / 2;
    ic.height[c] = ic.height[0] / 2;
  }
  // Smooth gradients with noise, so that neighbouring filter taps see different samples.
  ic.refs.resize(3);
  for (auto& ref : ic.refs)
    for (int c = 0; c < ic.planes; ++c) {
      const int max = (1 << ic.params.bit_depth[c ? 1 : 0]) - 1;
      const int ax = r.between(-6, 6), ay = r.between(-6, 6), noise = r.between(1, max / 4);
      ref[c].resize(ic.plane_size(c));
      for (int y = 0; y < ic.height[c]; ++y)
        for (int x = 0; x < ic.width[c]; ++x)
          ref[c][y * ic.width[c] + x] = static_cast<std::uint16_t>(
              std::clamp(max / 2 + ax * x + ay * y + r.between(-noise, noise), 0, max));
    }
  for (int s = 0; s < 3; ++s) {
    InterSlice sl{};
    for (int l = 0; l < 2; ++l) {
      const int count = r.between(1, 4);
      for (int i = 0; i < 16; ++i)
        sl.ref[l][i] = static_cast<std::int8_t>(i < count ? r.below(3) : -1);
    }
    sl.weighted = s > 0;
    if (sl.weighted)
      for (int k = 0; k < 2; ++k) {
        const int denom = r.below(8);
        sl.log2_denom[k] = static_cast<std::uint8_t>(denom);
        const int shift = ic.params.bit_depth[k] - 8;
        for (int l = 0; l < 2; ++l)
          for (int i = 0; i < 16; ++i)
            for (int c = k; c < (k ? 3 : 1); ++c) {
              sl.weight[l][i][c] = static_cast<std::int16_t>((1 << denom) + r.between(-128, 127));
              sl.offset[l][i][c] = static_cast<std::int16_t>(r.between(-128, 127) * (1 << shift));
            }
      }
    ic.slices.push_back(sl);
  }
  for (int y = 0; y < ic.height[0]; y += 64)
    for (int x = 0; x < ic.width[0]; x += 64) push_cu(ic, r, x, y, 64);
  return ic;
}

std::vector<InterCase> inter_stream_cases() {
  std::vector<InterCase> out;
  // The third picture of the B streams is a B picture (bi-prediction, both lists); its records
  // are whole although parse_pictures gives it the wrong references.
  struct Pick {
    const char* name;
    std::size_t picture;
  };
  const Pick picks[] = {{"p_ultrafast", 2},  {"medium10", 2},   {"b3_pyramid", 3},
                        {"merge5", 2},       {"weighted10", 3}, {"amp_rect", 2},
                        {"ctu16_slices", 3}, {"odd_200x104", 2}};
  const auto& all = inter_streams();
  for (const Pick& pick : picks) {
    const auto spec =
        std::find_if(all.begin(), all.end(), [&](const auto& s) { return s.name == pick.name; });
    if (spec == all.end()) continue;
    const auto path = stream_path(*spec);
    if (path.empty()) continue;
    const auto parsed = parse_pictures(read_file(path), pick.picture);
    if (!parsed || parsed->failed_slices) continue;
    const DecodedPicture& ref = *parsed->pics.front();
    const DecodedPicture& pic = *parsed->pics.back();
    InterCase ic;
    ic.name = pick.name;
    ic.pu = pic.records.pu;
    ic.params.bit_depth[0] = pic.sps->bit_depth_luma;
    ic.params.bit_depth[1] = pic.sps->bit_depth_chroma;
    ic.params.chroma_format = pic.sps->chroma_format_idc;
    ic.planes = pic.sps->chroma_format_idc == 0 ? 1 : 3;
    // parse_pictures makes every reference the first picture: reference picture 0.
    const std::int8_t first[2][16] = {};
    for (const SliceHeader& sh : parsed->headers.back())
      ic.slices.push_back(inter_slice(sh, first));
    ic.refs.resize(1);
    for (int c = 0; c < ic.planes; ++c) {
      ic.width[c] = pic.width[c];
      ic.height[c] = pic.height[c];
      ic.refs[0][c].assign(ref.planes[c].begin(), ref.planes[c].end());
    }
    out.push_back(std::move(ic));
  }
  return out;
}

std::vector<std::vector<std::uint16_t>> cpu_prediction(const InterCase& c) {
  std::vector<std::vector<std::uint16_t>> planes(c.planes);
  InterPlanes out;
  for (int k = 0; k < c.planes; ++k) {
    planes[k].assign(c.plane_size(k), sigpu::test::twin::poisoned<std::uint16_t>());
    out.data[k] = planes[k].data();
    out.stride[k] = c.width[k];
  }
  const auto refs = c.ref_table();
  check_inter_records(c.pu, c.slices, static_cast<int>(refs.size()), c.width[0], c.height[0],
                      c.params);
  inter_stage_cpu(c.pu, c.slices, refs, c.params, out);
  return planes;
}

std::vector<std::vector<std::uint16_t>> block_prediction(const InterCase& c) {
  std::vector<std::vector<std::uint16_t>> planes(c.planes);
  for (int k = 0; k < c.planes; ++k)
    planes[k].assign(c.plane_size(k), sigpu::test::twin::poisoned<std::uint16_t>());
  const auto refs = c.ref_table();
  std::int16_t pred[2][64 * 64];
  for (std::size_t p = 0; p < c.pu.size(); ++p) {
    const InterSlice& s = c.slices[c.pu.slice[p]];
    const auto& ref_idx = c.pu.ref_idx[p];
    const auto& mv = c.pu.mv[p];
    const bool bi = ref_idx[0] >= 0 && ref_idx[1] >= 0;
    for (int k = 0; k < c.planes; ++k) {
      const int sh = k ? 1 : 0, bit_depth = c.params.bit_depth[sh];
      const int w = c.pu.w[p] >> sh, h = c.pu.h[p] >> sh, x = c.pu.x[p] >> sh, y = c.pu.y[p] >> sh;
      int lists[2], n = 0;
      for (int l = 0; l < 2; ++l) {
        if (ref_idx[static_cast<std::size_t>(l)] < 0) continue;
        const RefPlane& plane = refs[s.ref[l][ref_idx[static_cast<std::size_t>(l)]]].plane[k];
        const int mvx = mv[static_cast<std::size_t>(2 * l)],
                  mvy = mv[static_cast<std::size_t>(2 * l + 1)];
        if (k == 0)
          interpolate(plane, x + (mvx >> 2), y + (mvy >> 2), mvx & 3, mvy & 3, w, h, true,
                      bit_depth, pred[n]);
        else
          interpolate(plane, x + (mvx >> 3), y + (mvy >> 3), mvx & 7, mvy & 7, w, h, false,
                      bit_depth, pred[n]);
        lists[n++] = l;
      }
      std::uint16_t* dst = planes[k].data() + y * c.width[k] + x;
      ExplicitWeights e;
      if (s.weighted) {
        const int r0 = ref_idx[static_cast<std::size_t>(lists[0])];
        e.log2_denom = s.log2_denom[sh];
        e.w0 = s.weight[lists[0]][r0][k];
        e.o0 = s.offset[lists[0]][r0][k];
        if (bi) {
          e.w1 = s.weight[1][ref_idx[1]][k];
          e.o1 = s.offset[1][ref_idx[1]][k];
        }
      }
      weighted_prediction(pred[0], bi ? pred[1] : nullptr, w, h, bit_depth,
                          s.weighted ? &e : nullptr, dst, c.width[k]);
    }
  }
  return planes;
}

}  // namespace sigpu::hevc::testing
