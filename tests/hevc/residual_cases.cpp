#include "hevc/residual_cases.hpp"

#include <algorithm>
#include <random>

#include "hevc/parsed_pictures.hpp"
#include "hevc/residual_stage.hpp"
#include "hevc/streams.hpp"
#include "support/twin.hpp"

namespace sigpu::hevc::testing {
namespace {

// One random transform block of component c at (x, y): its record and coefficients.
void push_random_tu(ResidualCase& rc, std::mt19937_64& rng, int c, int x, int y, int log2) {
  auto below = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const int n = 1 << log2;
  const bool coded = below(8) != 0;
  const bool bypass = coded && below(10) == 0;
  const bool skip = coded && !bypass && below(6) == 0;
  const bool intra = below(2) == 0;
  if (!coded && !intra) return;  // as the parse: inter blocks only when coded
  TuRecords& tu = rc.rec.tu;
  const int qp_bd_offset = 6 * (rc.bit_depth[c ? 1 : 0] - 8);
  const int qp = below(52 + qp_bd_offset);
  int cols = 0, rows = 0, count = 0;
  if (coded) {
    // Positions in a random top-left region, from a lone coefficient to all of them.
    const int rw = 1 + below(n), rh = 1 + below(n);
    const int density = below(4) == 0 ? 100 : 1 + below(40);
    const int style = below(5);  // small, medium, large, 16-bit extremes, mixed
    for (int j = 0; j < rh; ++j)
      for (int i = 0; i < rw; ++i) {
        if (below(100) >= density && !(i == rw - 1 && j == rh - 1)) continue;
        int level;
        switch (style == 4 ? below(4) : style) {
          case 0:
            level = 1 + below(3);
            break;
          case 1:
            level = 1 + below(300);
            break;
          case 2:
            level = 1000 + below(30000);
            break;
          default:
            level = below(2) ? 32767 : 32768;
            break;
        }
        if (below(2)) level = -level;
        if (level > 32767) level = 32767;  // +32768 does not fit; -32768 does
        rc.rec.coeffs.push_back(pack_coeff(j * n + i, level));
        cols = std::max(cols, i + 1);
        rows = std::max(rows, j + 1);
        ++count;
      }
  }
  tu.x.push_back(static_cast<std::uint16_t>(x));
  tu.y.push_back(static_cast<std::uint16_t>(y));
  tu.log2.push_back(static_cast<std::uint8_t>(log2));
  tu.comp.push_back(static_cast<std::uint8_t>(c));
  tu.mode.push_back(static_cast<std::uint8_t>(below(35)));
  tu.qp.push_back(static_cast<std::uint8_t>(qp));
  tu.flags.push_back(static_cast<std::uint8_t>((coded ? kTuCoded : 0) | (skip ? kTuSkip : 0) |
                                               (intra ? kTuIntra : 0) | (bypass ? kTuBypass : 0)));
  tu.cols.push_back(static_cast<std::uint8_t>(cols));
  tu.rows.push_back(static_cast<std::uint8_t>(rows));
  tu.coeff_begin.push_back(static_cast<std::uint32_t>(rc.rec.coeffs.size() - count));
  tu.coeff_count.push_back(static_cast<std::uint16_t>(count));
}

// A random quadtree of transform blocks over the square at (x, y) of 1 << log2 samples.
void random_tree(ResidualCase& rc, std::mt19937_64& rng, int c, int x, int y, int log2) {
  if (log2 > 2 && rng() % 3 != 0) {
    const int h = 1 << (log2 - 1);
    for (int k = 0; k < 4; ++k)
      random_tree(rc, rng, c, x + (k & 1) * h, y + (k >> 1) * h, log2 - 1);
    return;
  }
  push_random_tu(rc, rng, c, x, y, log2);
}

}  // namespace

ResidualParams ResidualCase::params() const {
  ResidualParams p;
  p.bit_depth[0] = bit_depth[0];
  p.bit_depth[1] = bit_depth[1];
  p.scaling = scaling_on ? scaling.table.data() : nullptr;
  return p;
}

ResidualCase random_case(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  ResidualCase rc;
  rc.name = "random seed " + std::to_string(seed);
  rc.bit_depth[0] = 8 + 2 * static_cast<int>(seed % 3);
  rc.bit_depth[1] = 8 + 2 * static_cast<int>(seed / 3 % 3);
  rc.scaling_on = seed % 2 == 1;
  if (rc.scaling_on)
    for (std::uint8_t& f : rc.scaling.table) f = static_cast<std::uint8_t>(1 + rng() % 255);
  rc.width[0] = 128;
  rc.height[0] = 128;
  for (int c = 1; c < 3; ++c) {
    rc.width[c] = rc.width[0] / 2;
    rc.height[c] = rc.height[0] / 2;
  }
  // Luma in 32x32 areas; each chroma plane in 32x32 areas too, so that 32x32 chroma blocks
  // (4:2:0 has none from 64x64 CUs, but the stage must not care) and every size appear.
  for (int c = 0; c < 3; ++c)
    for (int y = 0; y < rc.height[c]; y += 32)
      for (int x = 0; x < rc.width[c]; x += 32) random_tree(rc, rng, c, x, y, 5);
  return rc;
}

std::vector<ResidualCase> stream_cases() {
  std::vector<ResidualCase> out;
  struct Pick {
    const char* name;
    bool inter;
  };
  const Pick picks[] = {{"scaling8", false},    {"scaling10", false},
                        {"tskip10", false},     {"cu_lossless", false},
                        {"noise10_qp4", false}, {"qp51_10bit", false},
                        {"main12", false},      {"mono10_nofilt", false},
                        {"b3_pyramid", true},   {"lossless_tskip_scaling", true}};
  for (const Pick& pick : picks) {
    const auto& all = pick.inter ? inter_streams() : standard_streams();
    const auto spec =
        std::find_if(all.begin(), all.end(), [&](const auto& s) { return s.name == pick.name; });
    if (spec == all.end()) continue;
    const auto path = stream_path(*spec);
    if (path.empty()) continue;
    const auto parsed = parse_pictures(read_file(path), pick.inter ? 2 : 1);
    if (!parsed || parsed->failed_slices) continue;
    const DecodedPicture& pic = *parsed->pics.back();
    ResidualCase rc;
    rc.name = pick.name;
    rc.rec = pic.records;
    ScalingFactors storage;
    const ResidualParams p = residual_params(*pic.sps, *pic.pps, storage);
    rc.bit_depth[0] = p.bit_depth[0];
    rc.bit_depth[1] = p.bit_depth[1];
    rc.scaling_on = p.scaling != nullptr;
    rc.scaling = storage;
    rc.planes = pic.sps->chroma_format_idc == 0 ? 1 : 3;
    for (int c = 0; c < rc.planes; ++c) {
      rc.width[c] = pic.width[c];
      rc.height[c] = pic.height[c];
    }
    out.push_back(std::move(rc));
  }
  return out;
}

std::vector<std::vector<std::int16_t>> cpu_residual(const ResidualCase& c) {
  std::vector<std::vector<std::int16_t>> planes(static_cast<std::size_t>(c.planes));
  ResidualPlanes out;
  for (int k = 0; k < c.planes; ++k) {
    planes[k].assign(c.plane_size(k), sigpu::test::twin::poisoned<std::int16_t>());
    out.data[k] = planes[k].data();
    out.stride[k] = c.width[k];
  }
  residual_stage_cpu(c.rec, c.params(), out);
  return planes;
}

}  // namespace sigpu::hevc::testing
