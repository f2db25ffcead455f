// The reconstruction records (src/hevc/records.hpp) of a picture's parse against what the
// parse left in the picture: the CTBs parsed, the coding units tiling them (sizes as CtDepth),
// intra CUs' transform blocks tiling them in every component (modes as IntraPredModeY), inter
// CUs' prediction units tiling them (PartMode, the motion field), the coefficient store, PCM
// samples equal to the picture's. A damaged slice leaves records of its complete CTBs only.
// Every decode of every other test goes through the records too (parse -> records ->
// reconstruct), checked there against the MD5 SEI and FFmpeg.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "hevc/parameter_sets.hpp"
#include "hevc/parsed_pictures.hpp"
#include "hevc/pcm_stream.hpp"
#include "hevc/picture.hpp"
#include "hevc/streams.hpp"
#include "hevc/wpp_rows.hpp"

namespace sigpu::hevc {
namespace {

// Each check names what failed; the first failure ends the check.
::testing::AssertionResult records_describe_picture(const DecodedPicture& pic) {
  using ::testing::AssertionFailure;
  const Sps& sps = *pic.sps;
  const PictureRecords& r = pic.records;
  const auto& geo = *pic.pps->geometry;
  const int ctbs = geo.width_ctbs * geo.height_ctbs;

  // The CTBs: those the picture has as decoded, in decoding (tile scan) order.
  std::vector<std::uint32_t> done;
  for (int ts = 0; ts < ctbs; ++ts)
    if (pic.ctb_done[static_cast<std::size_t>(geo.ts_to_rs[ts])])
      done.push_back(static_cast<std::uint32_t>(geo.ts_to_rs[ts]));
  if (r.ctb_rs != done) return AssertionFailure() << "CTB list differs from the decoded CTBs";
  if (r.ctb_cu_begin.size() != r.ctb_rs.size()) return AssertionFailure() << "ctb_cu_begin size";

  // The CUs tile the decoded CTBs, each inside its CTB, sized as CtDepth says.
  std::vector<int> cover(static_cast<std::size_t>(pic.blocks_w) * pic.blocks_h, 0);
  const CuRecords& cu = r.cu;
  for (std::size_t k = 0; k < r.ctb_rs.size(); ++k) {
    const std::size_t end = k + 1 < r.ctb_rs.size() ? r.ctb_cu_begin[k + 1] : cu.size();
    const int rs = static_cast<int>(r.ctb_rs[k]);
    for (std::size_t i = r.ctb_cu_begin[k]; i < end; ++i) {
      const int x = cu.x[i], y = cu.y[i], n = 1 << cu.log2[i];
      if ((y >> sps.log2_ctb) * geo.width_ctbs + (x >> sps.log2_ctb) != rs)
        return AssertionFailure() << "CU " << i << " outside its CTB " << rs;
      if (x + n > sps.width || y + n > sps.height) return AssertionFailure() << "CU " << i;
      if (pic.ct_depth[pic.block(x, y)] != sps.log2_ctb - cu.log2[i])
        return AssertionFailure() << "CU " << i << " log2 against CtDepth";
      for (int j = 0; j < n; j += 4)
        for (int l = 0; l < n; l += 4) ++cover[pic.block(x + l, y + j)];
    }
  }
  for (int by = 0; by < pic.blocks_h; ++by)
    for (int bx = 0; bx < pic.blocks_w; ++bx) {
      const int rs = (by * 4 >> sps.log2_ctb) * geo.width_ctbs + (bx * 4 >> sps.log2_ctb);
      const int want = pic.ctb_done[static_cast<std::size_t>(rs)] ? 1 : 0;
      if (cover[static_cast<std::size_t>(by) * pic.blocks_w + bx] != want)
        return AssertionFailure() << "4x4 block (" << bx * 4 << "," << by * 4 << ") covered "
                                  << cover[static_cast<std::size_t>(by) * pic.blocks_w + bx]
                                  << " times";
    }

  // The coefficients: each TU's in decoding order, inside its block and its coded region.
  const TuRecords& tu = r.tu;
  std::size_t coeffs_seen = 0;
  for (std::size_t t = 0; t < tu.size(); ++t) {
    if (tu.coeff_begin[t] != coeffs_seen)
      return AssertionFailure() << "TU " << t << " coefficients not contiguous";
    const int count = tu.coeff_count[t], tn = 1 << tu.log2[t];
    if ((count > 0) != static_cast<bool>(tu.flags[t] & kTuCoded))
      return AssertionFailure() << "TU " << t << " coded flag against its coefficients";
    std::set<int> at;
    for (int k = 0; k < count; ++k) {
      const std::uint32_t v = r.coeffs[tu.coeff_begin[t] + static_cast<std::size_t>(k)];
      const int idx = coeff_index(v);
      if (coeff_level(v) == 0 || idx >= tn * tn || (idx % tn) >= tu.cols[t] ||
          (idx / tn) >= tu.rows[t] || !at.insert(idx).second)
        return AssertionFailure() << "TU " << t << " coefficient " << k;
    }
    coeffs_seen += static_cast<std::size_t>(count);
  }

  // Each inter CU's prediction units tile it, with the motion the picture holds; its coded
  // transform blocks lie inside it without overlapping. Each intra CU's transform blocks tile
  // it in every component, with its modes.
  const PuRecords& pu = r.pu;
  const int comps = sps.chroma_format_idc == 0 ? 1 : 3;
  std::size_t pcm_seen = 0;
  for (std::size_t i = 0; i < cu.size(); ++i) {
    const std::size_t t_end = i + 1 < cu.size() ? cu.tu_begin[i + 1] : tu.size();
    const std::size_t p_end = i + 1 < cu.size() ? cu.pcm_begin[i + 1] : r.pcm.size();
    const std::size_t u_end = i + 1 < cu.size() ? cu.pu_begin[i + 1] : pu.size();
    const int x0 = cu.x[i], y0 = cu.y[i], n = 1 << cu.log2[i];
    if (!(cu.flags[i] & kCuIntra)) {
      static constexpr int kParts[8] = {1, 2, 2, 4, 2, 2, 2, 2};
      if (u_end - cu.pu_begin[i] !=
          static_cast<std::size_t>(kParts[cu.flags[i] >> kCuPartModeShift]))
        return AssertionFailure() << "inter CU " << i << ": PU count against PartMode";
      std::vector<int> area(static_cast<std::size_t>(n / 4) * (n / 4), 0);
      for (std::size_t u = cu.pu_begin[i]; u < u_end; ++u) {
        const int px = pu.x[u] - x0, py = pu.y[u] - y0;
        if (px < 0 || py < 0 || px + pu.w[u] > n || py + pu.h[u] > n || pu.w[u] % 4 || pu.h[u] % 4)
          return AssertionFailure() << "PU " << u << " outside its CU";
        if (pu.ref_idx[u][0] < 0 && pu.ref_idx[u][1] < 0)
          return AssertionFailure() << "PU " << u << " predicts from no list";
        for (int y = py; y < py + pu.h[u]; y += 4)
          for (int x = px; x < px + pu.w[u]; x += 4) {
            ++area[static_cast<std::size_t>(y / 4) * (n / 4) + x / 4];
            const MvField& m = pic.motion_at(x0 + x, y0 + y);
            for (int l = 0; l < 2; ++l) {
              const auto li = static_cast<std::size_t>(l);
              if (m.ref_idx[l] != pu.ref_idx[u][li] ||
                  (m.ref_idx[l] >= 0 &&
                   (m.mv[l][0] != pu.mv[u][2 * li] || m.mv[l][1] != pu.mv[u][2 * li + 1])))
                return AssertionFailure() << "PU " << u << " motion against the picture's";
            }
          }
      }
      if (std::any_of(area.begin(), area.end(), [](int a) { return a != 1; }))
        return AssertionFailure() << "inter CU " << i << " not tiled by its PUs";
      for (int c = 0; c < comps; ++c) {
        const int s = c ? 1 : 0, m = n >> s;
        std::vector<int> coded(static_cast<std::size_t>(m) * m, 0);
        for (std::size_t t = cu.tu_begin[i]; t < t_end; ++t) {
          if (tu.comp[t] != c) continue;
          const int tx = tu.x[t] - (x0 >> s), ty = tu.y[t] - (y0 >> s), tn = 1 << tu.log2[t];
          if (tx < 0 || ty < 0 || tx + tn > m || ty + tn > m || (tu.flags[t] & kTuIntra) ||
              !(tu.flags[t] & kTuCoded))
            return AssertionFailure() << "inter TU " << t;
          for (int y = ty; y < ty + tn; ++y)
            for (int x = tx; x < tx + tn; ++x)
              if (++coded[static_cast<std::size_t>(y) * m + x] > 1)
                return AssertionFailure() << "inter TU " << t << " overlaps another";
        }
      }
      continue;
    }
    if (u_end != cu.pu_begin[i]) return AssertionFailure() << "intra CU " << i << " with PUs";
    if (cu.flags[i] & kCuPcm) {
      if (t_end != cu.tu_begin[i]) return AssertionFailure() << "PCM CU " << i << " with TUs";
      if (cu.pcm_begin[i] != pcm_seen) return AssertionFailure() << "PCM store not contiguous";
      std::size_t at = pcm_seen;
      for (int c = 0; c < comps; ++c) {
        const int s = c ? 1 : 0, m = n >> s;
        for (int y = 0; y < m; ++y)
          for (int x = 0; x < m; ++x, ++at)
            if (at >= p_end ||
                r.pcm[at] != pic.planes[c][static_cast<std::size_t>((y0 >> s) + y) * pic.width[c] +
                                           (x0 >> s) + x])
              return AssertionFailure() << "PCM CU " << i << " sample differs";
      }
      if (at != p_end) return AssertionFailure() << "PCM CU " << i << " sample count";
      pcm_seen = at;
      continue;
    }
    if (p_end != cu.pcm_begin[i]) return AssertionFailure() << "PCM samples of a non-PCM CU";
    const bool nxn = (cu.flags[i] >> kCuPartModeShift) == 3;
    for (int c = 0; c < comps; ++c) {
      const int s = c ? 1 : 0, m = n >> s;
      std::vector<int> area(static_cast<std::size_t>(m) * m, 0);
      for (std::size_t t = cu.tu_begin[i]; t < t_end; ++t) {
        if (tu.comp[t] != c) continue;
        const int tx = tu.x[t] - (x0 >> s), ty = tu.y[t] - (y0 >> s), tn = 1 << tu.log2[t];
        if (tx < 0 || ty < 0 || tx + tn > m || ty + tn > m)
          return AssertionFailure() << "TU " << t << " outside its CU";
        for (int y = ty; y < ty + tn; ++y)
          for (int x = tx; x < tx + tn; ++x) ++area[static_cast<std::size_t>(y) * m + x];
        const int part = nxn && c == 0 ? (tx >= m / 2) + 2 * (ty >= m / 2) : 0;
        const int mode =
            c == 0 ? cu.luma_modes[i][static_cast<std::size_t>(part)] : cu.chroma_mode[i];
        if (tu.mode[t] != mode) return AssertionFailure() << "TU " << t << " mode";
        if (c == 0 && mode != pic.intra_mode[pic.block(tu.x[t], tu.y[t])])
          return AssertionFailure() << "TU " << t << " mode against IntraPredModeY";
        if (!(tu.flags[t] & kTuIntra)) return AssertionFailure() << "TU " << t << " not intra";
      }
      if (std::any_of(area.begin(), area.end(), [](int a) { return a != 1; }))
        return AssertionFailure() << "CU " << i << " component " << c << " not tiled by TUs";
    }
  }
  if (coeffs_seen != r.coeffs.size() || pcm_seen != r.pcm.size())
    return AssertionFailure() << "stores hold more than the TUs and CUs name";
  return ::testing::AssertionSuccess();
}

TEST(HevcRecords, DescribeIntraPictures) {
  if (!testing::have_tools()) GTEST_SKIP() << "x265 or ffmpeg missing";
  const char* names[] = {"plain8_ctu16", "filt10_ctu64", "slices4",  "cu_lossless",
                         "tskip8",       "tu_depth",     "scaling8", "odd_208x120"};
  for (const char* name : names) {
    SCOPED_TRACE(name);
    const auto& all = testing::standard_streams();
    const auto spec =
        std::find_if(all.begin(), all.end(), [&](const auto& s) { return s.name == name; });
    ASSERT_NE(spec, all.end());
    const auto path = testing::stream_path(*spec);
    ASSERT_FALSE(path.empty());
    const auto f = testing::parse_pictures(testing::read_file(path), 1);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->failed_slices, 0);
    const DecodedPicture& pic = *f->pics[0];
    EXPECT_EQ(pic.records.ctb_rs.size(), pic.ctb_done.size());
    EXPECT_GT(pic.records.coeffs.size(), 0u);
    EXPECT_TRUE(records_describe_picture(pic));
  }
}

TEST(HevcRecords, DescribeInterPictures) {
  if (!testing::have_tools()) GTEST_SKIP() << "x265 or ffmpeg missing";
  for (const char* name :
       {"p_ultrafast", "amp_rect", "b3_pyramid", "ctu16_slices", "odd_200x104"}) {
    SCOPED_TRACE(name);
    const auto& all = testing::inter_streams();
    const auto spec =
        std::find_if(all.begin(), all.end(), [&](const auto& s) { return s.name == name; });
    ASSERT_NE(spec, all.end());
    const auto path = testing::stream_path(*spec);
    ASSERT_FALSE(path.empty());
    const auto f = testing::parse_pictures(testing::read_file(path), 2);
    ASSERT_TRUE(f);
    EXPECT_EQ(f->failed_slices, 0);
    const DecodedPicture& pic = *f->pics[1];
    EXPECT_EQ(pic.records.ctb_rs.size(), pic.ctb_done.size());
    EXPECT_GT(pic.records.pu.size(), 0u);
    EXPECT_TRUE(records_describe_picture(pic));
  }
}

TEST(HevcRecords, DescribePcmTilesAndWpp) {
  testing::PcmStreamConfig c;
  c.width = 160;
  c.height = 96;
  c.tile_cols = 2;
  c.wpp = true;
  c.dependent_from_ctb = 7;
  const auto s = testing::make_pcm_stream(c);
  const auto f = testing::parse_pictures(s.bytes, 1);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->failed_slices, 0);
  const DecodedPicture& pic = *f->pics[0];
  EXPECT_EQ(pic.records.pcm.size(), pic.planes[0].size() * 3 / 2);
  EXPECT_TRUE(records_describe_picture(pic));
}

TEST(HevcRecords, DamagedSliceKeepsCompleteCtbsOnly) {
  if (!testing::have_tools()) GTEST_SKIP() << "x265 or ffmpeg missing";
  const auto& all = testing::standard_streams();
  const auto spec =
      std::find_if(all.begin(), all.end(), [](const auto& s) { return s.name == "filt8_ctu16"; });
  ASSERT_NE(spec, all.end());
  const auto path = testing::stream_path(*spec);
  ASSERT_FALSE(path.empty());
  const auto f = testing::parse_pictures(testing::read_file(path), 1, 40);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->failed_slices, 1);
  const DecodedPicture& pic = *f->pics[0];
  EXPECT_GT(pic.records.ctb_rs.size(), 0u);
  EXPECT_LT(pic.records.ctb_rs.size(), pic.ctb_done.size());
  EXPECT_TRUE(records_describe_picture(pic));
}

// Every array of two pictures' records equal.
::testing::AssertionResult same_records(const PictureRecords& a, const PictureRecords& b) {
  const auto field = [](const char* name, const auto& x, const auto& y) {
    return x == y ? ::testing::AssertionSuccess()
                  : ::testing::AssertionFailure()
                        << name << " differs (" << x.size() << " vs " << y.size() << " entries)";
  };
  for (const auto& r : {field("ctb_rs", a.ctb_rs, b.ctb_rs),
                        field("ctb_cu_begin", a.ctb_cu_begin, b.ctb_cu_begin),
                        field("cu.x", a.cu.x, b.cu.x),
                        field("cu.y", a.cu.y, b.cu.y),
                        field("cu.flags", a.cu.flags, b.cu.flags),
                        field("cu.luma_modes", a.cu.luma_modes, b.cu.luma_modes),
                        field("cu.pu_begin", a.cu.pu_begin, b.cu.pu_begin),
                        field("cu.tu_begin", a.cu.tu_begin, b.cu.tu_begin),
                        field("cu.pcm_begin", a.cu.pcm_begin, b.cu.pcm_begin),
                        field("pu.x", a.pu.x, b.pu.x),
                        field("pu.y", a.pu.y, b.pu.y),
                        field("pu.mv", a.pu.mv, b.pu.mv),
                        field("pu.ref_idx", a.pu.ref_idx, b.pu.ref_idx),
                        field("tu.x", a.tu.x, b.tu.x),
                        field("tu.y", a.tu.y, b.tu.y),
                        field("tu.mode", a.tu.mode, b.tu.mode),
                        field("tu.qp", a.tu.qp, b.tu.qp),
                        field("tu.flags", a.tu.flags, b.tu.flags),
                        field("tu.avail", a.tu.avail, b.tu.avail),
                        field("tu.coeff_begin", a.tu.coeff_begin, b.tu.coeff_begin),
                        field("coeffs", a.coeffs, b.coeffs),
                        field("pcm", a.pcm, b.pcm)})
    if (!r) return r;
  return ::testing::AssertionSuccess();
}

// A WPP picture's rows parsed side by side (wpp_rows.hpp) give the serial parse's records,
// motion and CTBs, whole or cut short anywhere in the last picture's slice data (the same CTBs
// kept, the same failure).
TEST(HevcRecords, RowsParsedSideBySideEqualTheSerialParse) {
  if (!testing::have_tools()) GTEST_SKIP() << "x265 or ffmpeg missing";
  int compared = 0;
  for (const auto& spec : testing::inter_streams()) {
    const auto path = testing::stream_path(spec);
    ASSERT_FALSE(path.empty()) << spec.name;
    const auto bytes = testing::read_file(path);
    for (const std::size_t cut : {0, 7, 40, 200, 1000}) {
      SCOPED_TRACE(spec.name + ", cut " + std::to_string(cut));
      const auto serial = testing::parse_pictures(bytes, 2, cut);
      const auto rows = testing::parse_pictures(bytes, 2, cut, true);
      ASSERT_TRUE(serial && rows);
      EXPECT_EQ(serial->failed_slices, rows->failed_slices);
      for (std::size_t i = 0; i < 2; ++i) {
        const DecodedPicture& a = *serial->pics[i];
        const DecodedPicture& b = *rows->pics[i];
        EXPECT_TRUE(same_records(a.records, b.records)) << "picture " << i;
        EXPECT_EQ(a.ctb_done, b.ctb_done) << "picture " << i;
        EXPECT_EQ(a.decoded_ctbs, b.decoded_ctbs) << "picture " << i;
        for (std::size_t k = 0; k < a.ctb_done.size(); ++k) {
          if (a.ctb_done[k]) {
            EXPECT_EQ(a.ctb_slice_addr[k], b.ctb_slice_addr[k]);
          }
        }
      }
      compared += !serial->headers[1].empty() &&
                  wpp_rows_possible(*serial->pics[1], serial->headers[1].front());
    }
  }
  EXPECT_GT(compared, 20) << "too few streams parse by rows";
}

}  // namespace
}  // namespace sigpu::hevc
