#include "hevc/intra_cases.hpp"

#include <algorithm>

#include "hevc/parsed_pictures.hpp"
#include "hevc/residual_stage.hpp"
#include "hevc/streams.hpp"
#include "support/rng.hpp"

namespace sigpu::hevc::testing {
namespace {

void push_tu(TuRecords& tu, int c, int x, int y, int log2, int mode, int flags,
             std::uint32_t avail) {
  tu.x.push_back(static_cast<std::uint16_t>(x));
  tu.y.push_back(static_cast<std::uint16_t>(y));
  tu.log2.push_back(static_cast<std::uint8_t>(log2));
  tu.comp.push_back(static_cast<std::uint8_t>(c));
  tu.mode.push_back(static_cast<std::uint8_t>(mode));
  tu.qp.push_back(0);
  tu.flags.push_back(static_cast<std::uint8_t>(flags));
  tu.avail.push_back(avail);
  tu.cols.push_back(0);
  tu.rows.push_back(0);
  tu.coeff_begin.push_back(0);
  tu.coeff_count.push_back(0);
}

struct RandomTiler {
  IntraCase& ic;
  sigpu::test::Rng& rng;
  std::array<std::vector<std::uint8_t>, 3> decoded;  ///< per component, per unit
  int c = 0, unit = 4, cw = 0, ch = 0;

  bool done(int ux, int uy) const {
    return ux >= 0 && uy >= 0 && ux < cw && uy < ch && decoded[c][std::size_t(uy) * cw + ux];
  }

  void tree(int x, int y, int log2) {
    const int max_log2 = c ? 4 : 5;
    if (log2 > max_log2 || (log2 > 2 && rng.below(3) == 0)) {
      const int h = 1 << (log2 - 1);
      for (int i = 0; i < 4; ++i) tree(x + (i & 1) * h, y + (i >> 1) * h, log2 - 1);
      return;
    }
    const int n = 1 << log2, ux = x / unit, uy = y / unit, m = n / unit, units = 2 * m;
    if (rng.below(6) == 0) {  // inter: recorded when coded, its samples final
      if (rng.below(2)) push_tu(ic.tu, c, x, y, log2, 0, kTuCoded, 0);
    } else {
      // Available where decoded; some units dropped, every unit for some blocks.
      const unsigned drop = rng.below(4) == 0 ? 2 : (rng.below(8) == 0 ? 1 : 0);
      auto keep = [&] { return drop == 0 || (drop == 2 && rng.below(2) == 0); };
      std::uint32_t left = 0, top = 0;
      for (int u = 0; u < units; ++u) {
        if (done(ux - 1, uy + u) && keep()) left |= 1u << u;
        if (done(ux + u, uy - 1) && keep()) top |= 1u << u;
      }
      const bool corner = done(ux - 1, uy - 1) && keep();
      const int flags = kTuIntra | (rng.below(4) ? kTuCoded : 0) | (corner ? kTuCorner : 0);
      push_tu(ic.tu, c, x, y, log2, static_cast<int>(rng.below(35)), flags,
              left | top << kAvailTopShift);
    }
    for (int j = 0; j < m; ++j)
      for (int i = 0; i < m; ++i) decoded[c][std::size_t(uy + j) * cw + ux + i] = 1;
  }
};

}  // namespace

IntraCase random_intra_case(std::uint64_t seed, int width, int height) {
  sigpu::test::Rng rng{seed * 0x2545F4914F6CDD1Dull + 7};
  IntraCase ic;
  ic.name = "random seed " + std::to_string(seed);
  static constexpr int kDepths[3] = {8, 10, 12};
  ic.params.bit_depth[0] = kDepths[seed % 3];
  ic.params.bit_depth[1] = kDepths[rng.below(3)];
  ic.params.filter_refs = rng.below(4) != 0;
  ic.params.strong_smoothing = rng.below(2) != 0;
  ic.params.chroma_format = seed % 4 == 3 ? 0 : 1;
  ic.planes = ic.params.chroma_format == 0 ? 1 : 3;
  for (int c = 0; c < ic.planes; ++c) {
    ic.width[c] = c ? width / 2 : width;
    ic.height[c] = c ? height / 2 : height;
    const int bd = ic.params.bit_depth[c ? 1 : 0], max = (1 << bd) - 1;
    // Smooth in places (so that strong smoothing's flatness tests pass), noisy in others.
    ic.start[c].resize(ic.plane_size(c));
    for (int y = 0; y < ic.height[c]; ++y)
      for (int x = 0; x < ic.width[c]; ++x) {
        const bool flat = (x / 32 + y / 32) % 2 == 0;
        const int v = flat ? (x + 2 * y) % 384 * (max - 1) / 384 + static_cast<int>(rng.below(2))
                           : static_cast<int>(rng.below(static_cast<unsigned>(max) + 1));
        ic.start[c][std::size_t(y) * ic.width[c] + x] = static_cast<std::uint16_t>(v);
      }
    ic.residual[c].resize(ic.plane_size(c));
    for (std::int16_t& r : ic.residual[c]) {
      const unsigned kind = rng.below(16);
      r = static_cast<std::int16_t>(kind == 0 ? 32767
                                    : kind == 1
                                        ? -32768
                                        : static_cast<int>(rng.below(2u << bd)) - (1 << bd));
    }
  }
  RandomTiler tiler{ic, rng, {}};
  for (int c = 0; c < ic.planes; ++c)
    tiler.decoded[c].assign(ic.plane_size(c) / (avail_unit(c) * avail_unit(c)), 0);
  constexpr int kCtb = 32;
  for (int y = 0; y < height; y += kCtb)
    for (int x = 0; x < width; x += kCtb)
      for (int c = 0; c < ic.planes; ++c) {
        tiler.c = c;
        tiler.unit = avail_unit(c);
        tiler.cw = ic.width[c] / tiler.unit;
        tiler.ch = ic.height[c] / tiler.unit;
        tiler.tree(c ? x / 2 : x, c ? y / 2 : y, c ? 4 : 5);
      }
  return ic;
}

std::vector<IntraCase> intra_stream_cases() {
  std::vector<IntraCase> out;
  struct Pick {
    const char* name;
    bool inter;
    std::size_t picture;
  };
  const Pick picks[] = {{"plain8_ctu16", false, 1},
                        {"plain10_ctu64", false, 1},
                        {"filt8_ctu32", false, 1},
                        {"main12", false, 1},
                        {"mono8", false, 1},
                        {"no_sdh_no_smoothing", false, 1},
                        {"cu_lossless", false, 1},
                        {"tskip10", false, 1},
                        {"odd_208x120", false, 1},
                        {"constrained_intra", true, 2},
                        {"constrained_intra", true, 3},
                        {"b4_no_pyramid", true, 2},
                        {"ctu16_slices", true, 2},
                        {"tu_depth_ctu32", true, 2},
                        {"amp_rect", true, 2}};
  for (const Pick& pick : picks) {
    const auto& all = pick.inter ? inter_streams() : standard_streams();
    const auto spec =
        std::find_if(all.begin(), all.end(), [&](const auto& s) { return s.name == pick.name; });
    if (spec == all.end()) continue;
    const auto path = stream_path(*spec);
    if (path.empty()) continue;
    const auto parsed = parse_pictures(read_file(path), pick.picture);
    if (!parsed || parsed->failed_slices) continue;
    const DecodedPicture& pic = *parsed->pics.back();
    const Sps& sps = *pic.sps;
    IntraCase ic;
    ic.name = std::string(pick.name) + " picture " + std::to_string(pick.picture);
    ic.tu = pic.records.tu;
    ic.params.bit_depth[0] = sps.bit_depth_luma;
    ic.params.bit_depth[1] = sps.bit_depth_chroma;
    ic.params.filter_refs = !sps.intra_smoothing_disabled;
    ic.params.strong_smoothing = sps.strong_intra_smoothing;
    ic.params.chroma_format = sps.chroma_format_idc;
    ic.constrained_intra_pred = pic.pps->constrained_intra_pred;
    ic.planes = sps.chroma_format_idc == 0 ? 1 : 3;
    ResidualPlanes res;
    for (int c = 0; c < ic.planes; ++c) {
      ic.width[c] = pic.width[c];
      ic.height[c] = pic.height[c];
      ic.want[c].assign(pic.planes[c].begin(), pic.planes[c].end());
      ic.start[c] = ic.want[c];
      ic.residual[c].assign(ic.plane_size(c), 0x5a5a);
      res.data[c] = ic.residual[c].data();
      res.stride[c] = ic.width[c];
    }
    ScalingFactors storage;
    residual_stage_cpu(pic.records, residual_params(sps, *pic.pps, storage), res);
    // Garbage where the stage must write.
    sigpu::test::Rng rng{pick.picture};
    for (std::size_t t = 0; t < ic.tu.size(); ++t) {
      if (!(ic.tu.flags[t] & kTuIntra)) continue;
      const int c = ic.tu.comp[t], n = 1 << ic.tu.log2[t];
      for (int y = 0; y < n; ++y)
        for (int x = 0; x < n; ++x)
          ic.start[c][std::size_t(ic.tu.y[t] + y) * ic.width[c] + ic.tu.x[t] + x] =
              static_cast<std::uint16_t>(rng.next());
    }
    out.push_back(std::move(ic));
  }
  return out;
}

IntraOrder intra_order(const IntraCase& c) {
  IntraOrder order;
  order_intra_tus(c.tu, c.width[0], c.height[0], c.params, order);
  return order;
}

std::array<std::vector<std::uint16_t>, 3> cpu_intra(const IntraCase& c, const IntraOrder& order) {
  auto planes = c.start;
  ResidualPlanes res;
  InterPlanes out;
  for (int k = 0; k < c.planes; ++k) {
    res.data[k] = const_cast<std::int16_t*>(c.residual[k].data());
    res.stride[k] = c.width[k];
    out.data[k] = planes[k].data();
    out.stride[k] = c.width[k];
  }
  intra_stage_cpu(c.tu, order, c.params, res, out);
  return planes;
}

}  // namespace sigpu::hevc::testing
