// HEVC in-loop filters on the CPU: tables, boundary strength, hand-computed samples, the
// parallel backend against the serial reference on random pictures, coverage of every decision
// by those pictures, and refusal of inconsistent side information.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <map>
#include <string>

#include <sigpu/hevc_filter.hpp>

#include "hevc_filter/check.hpp"
#include "hevc_filter/deblock.hpp"
#include "hevc_filter/picture.hpp"
#include "hevc_filter/sao.hpp"
#include "hevc_filter/tables.hpp"

namespace hf = sigpu::hevc_filter;
using sigpu::Backend;
using sigpu::test::SyntheticOptions;

TEST(HevcFilterTables, MatchTable811And810) {
  // Table 8-11 at its corners and steps; Table 8-10 over its non-identity range.
  const std::array<std::array<int, 2>, 8> beta{
      {{0, 0}, {15, 0}, {16, 6}, {28, 18}, {29, 20}, {37, 36}, {50, 62}, {51, 64}}};
  for (const auto& [q, b] : beta) EXPECT_EQ(hf::beta_prime(q), b) << "Q " << q;
  const std::array<std::array<int, 2>, 14> tc{{{0, 0},
                                               {17, 0},
                                               {18, 1},
                                               {26, 1},
                                               {27, 2},
                                               {31, 3},
                                               {35, 4},
                                               {38, 5},
                                               {42, 7},
                                               {46, 11},
                                               {47, 13},
                                               {49, 16},
                                               {52, 22},
                                               {53, 24}}};
  for (const auto& [q, t] : tc) EXPECT_EQ(hf::tc_prime(q), t) << "Q " << q;
  const int qpc[14] = {29, 30, 31, 32, 33, 33, 34, 34, 35, 35, 36, 36, 37, 37};
  for (int i = 0; i < 14; ++i) EXPECT_EQ(hf::chroma_qp_420(30 + i), qpc[i]);
  EXPECT_EQ(hf::chroma_qp_420(29), 29);
  EXPECT_EQ(hf::chroma_qp_420(-3), -3);
  EXPECT_EQ(hf::chroma_qp_420(44), 38);
  EXPECT_EQ(hf::chroma_qp_420(57), 51);
}

namespace {

hf::Motion uni(int list, int ref, int mx, int my) {
  hf::Motion m;
  m.ref[list] = ref;
  m.mv[list][0] = std::int16_t(mx);
  m.mv[list][1] = std::int16_t(my);
  return m;
}

hf::Motion bi(int r0, int x0, int y0, int r1, int x1, int y1) {
  hf::Motion m = uni(0, r0, x0, y0);
  m.ref[1] = r1;
  m.mv[1][0] = std::int16_t(x1);
  m.mv[1][1] = std::int16_t(y1);
  return m;
}

int bs(std::uint8_t pf, std::uint8_t qf, const hf::Motion& mp, const hf::Motion& mq,
       bool vertical = true) {
  hf::BlockInfo p, q;
  p.flags = pf;
  q.flags = qf;
  return hf::boundary_strength(p, q, &mp, &mq, vertical);
}

}  // namespace

TEST(HevcFilterBs, Rules8724) {
  using namespace hf;
  const Motion a = uni(0, 7, 0, 0);
  const std::uint8_t tu = kLeftTuEdge, pu = kLeftPuEdge, both = tu | pu;
  EXPECT_EQ(bs(0, 0, a, a), 0) << "no edge";
  EXPECT_EQ(bs(kIntra, both, a, a), 2) << "intra p";
  EXPECT_EQ(bs(0, both | kIntra, a, a), 2) << "intra q";
  EXPECT_EQ(bs(0, kTopTuEdge | kIntra, a, a), 0) << "top flags do not make a left edge";
  EXPECT_EQ(bs(0, kTopTuEdge | kIntra, a, a, false), 2) << "horizontal edge";
  EXPECT_EQ(bs(kCodedLuma, tu, a, a), 1) << "TU edge, coded p";
  EXPECT_EQ(bs(0, tu | kCodedLuma, a, a), 1) << "TU edge, coded q";
  EXPECT_EQ(bs(kCodedLuma, pu, a, a), 0) << "coded blocks count only at TU edges";
  EXPECT_EQ(bs(0, pu, a, uni(1, 7, 0, 0)), 0) << "same picture through the other list";
  EXPECT_EQ(bs(0, pu, a, uni(0, 8, 0, 0)), 1) << "different reference picture";
  EXPECT_EQ(bs(0, pu, a, bi(7, 0, 0, 8, 0, 0)), 1) << "different number of vectors";
  EXPECT_EQ(bs(0, pu, a, uni(0, 7, 3, -3)), 0) << "|dmv| 3";
  EXPECT_EQ(bs(0, pu, a, uni(0, 7, 4, 0)), 1) << "|dmv x| 4";
  EXPECT_EQ(bs(0, pu, a, uni(0, 7, 0, -4)), 1) << "|dmv y| 4";
  // Two vectors, two different pictures: pair the vectors by picture, whatever the lists.
  const Motion b = bi(7, 0, 0, 8, 20, 20);
  EXPECT_EQ(bs(0, pu, b, bi(8, 23, 17, 7, 3, -3)), 0) << "crossed lists, close vectors";
  EXPECT_EQ(bs(0, pu, b, bi(8, 24, 20, 7, 0, 0)), 1) << "crossed lists, far vector";
  EXPECT_EQ(bs(0, pu, b, bi(7, 0, 3, 8, 20, 24)), 1) << "same lists, far vector";
  EXPECT_EQ(bs(0, pu, b, bi(7, 0, 0, 9, 20, 20)), 1) << "one picture differs";
  // Two vectors on one picture: bS 1 only if both pairings fail.
  const Motion c = bi(7, 0, 0, 7, 40, 0);
  EXPECT_EQ(bs(0, pu, c, bi(7, 0, 0, 7, 40, 0)), 0) << "same";
  EXPECT_EQ(bs(0, pu, c, bi(7, 40, 0, 7, 0, 0)), 0) << "swapped: the crossed pairing matches";
  EXPECT_EQ(bs(0, pu, c, bi(7, 4, 0, 7, 40, 0)), 1) << "straight fails, crossed fails";
  EXPECT_EQ(bs(0, pu, c, bi(7, 40, 3, 7, 3, 0)), 0) << "crossed within 3";
  // Intra pictures carry no motion: a non-intra PU edge without motion has bS 0.
  hf::BlockInfo p, q;
  q.flags = pu;
  EXPECT_EQ(hf::boundary_strength(p, q, nullptr, nullptr, true), 0);
}

TEST(HevcFilterHand, SamplesFromTheSpecEquations) {
  for (Backend b : {Backend::cpu, Backend::cpu_parallel})
    for (auto& h : sigpu::test::hand_cases()) sigpu::test::check_hand_case(h, b);
}

TEST(HevcFilterRandom, ParallelMatchesSerial) {
  for (const SyntheticOptions& o : sigpu::test::random_configs()) {
    SCOPED_TRACE("seed " + std::to_string(o.seed) + " " + std::to_string(o.width) + "x" +
                 std::to_string(o.height) + " bd " + std::to_string(o.bit_depth));
    const auto original = sigpu::test::make_synthetic_picture(o);
    auto serial = original, parallel = original;
    hf::filter_picture(serial.info, serial.planes(), Backend::cpu);
    hf::filter_picture(parallel.info, parallel.planes(), Backend::cpu_parallel);
    EXPECT_EQ(sigpu::test::first_difference(serial, parallel), "identical");
    EXPECT_NE(sigpu::test::first_difference(serial, original), "identical")
        << "the filters changed nothing";
  }
}

TEST(HevcFilterRandom, DeblockingAndSaoSwitches) {
  SyntheticOptions o;
  o.width = 96;
  o.height = 64;
  o.seed = 99;
  const auto original = sigpu::test::make_synthetic_picture(o);
  // Deblocking off and SAO off: nothing changes; each alone changes something.
  auto none = original;
  none.info.deblocking = false;
  none.info.sao = false;
  hf::filter_picture(none.info, none.planes());
  EXPECT_EQ(sigpu::test::first_difference(none, original), "identical");
  auto db = original, sao = original, both = original;
  db.info.sao = false;
  sao.info.deblocking = false;
  hf::filter_picture(db.info, db.planes());
  hf::filter_picture(sao.info, sao.planes());
  hf::filter_picture(both.info, both.planes());
  EXPECT_NE(sigpu::test::first_difference(db, original), "identical");
  EXPECT_NE(sigpu::test::first_difference(sao, original), "identical");
  EXPECT_NE(sigpu::test::first_difference(both, db), "identical");
  // Slice SAO flags off everywhere: deblocking only.
  for (auto& s : sao.info.slices) s.sao_luma = s.sao_chroma = false;
  auto flags_off = original;
  flags_off.info.slices = sao.info.slices;
  hf::filter_picture(flags_off.info, flags_off.planes());
  EXPECT_EQ(sigpu::test::first_difference(flags_off, db), "identical");
}

// The random pictures reach every branch of the filters: counted here with the same per-edge
// logic the drivers use.
TEST(HevcFilterRandom, CoverEveryDecision) {
  std::map<std::string, int> seen;
  for (const SyntheticOptions& o : sigpu::test::random_configs()) {
    auto sp = sigpu::test::make_synthetic_picture(o);
    const hf::Geometry g = hf::make_geometry(sp.info);
    const auto ctbs = hf::make_ctb_params(sp.info, g);
    const hf::SideInfo s{sp.info.blocks.data(), sp.info.motion.data(), ctbs.data()};
    const auto planes = sp.planes();
    const std::ptrdiff_t stride = planes.stride[0];
    // One luma edge segment, q block (bx, by): its bS and every decision the filter takes.
    auto luma = [&](int bx, int by, bool vertical) {
      const int qi = by * g.blocks_w + bx, pi = vertical ? qi - 1 : qi - g.blocks_w;
      const hf::BlockInfo &p = sp.info.blocks[pi], &q = sp.info.blocks[qi];
      if (!(q.deblock & (vertical ? hf::kFilterLeft : hf::kFilterTop))) {
        ++seen["edge closed"];
        return;
      }
      const int b = hf::boundary_strength(p, q, &sp.info.motion[pi], &sp.info.motion[qi], vertical);
      ++seen["bS " + std::to_string(b)];
      if (b == 1 && !((p.flags | q.flags) & hf::kCodedLuma)) ++seen["bS 1 from motion"];
      const hf::EdgeParams e = hf::segment_params(g, s, 0, bx, by, vertical);
      if (!e.tc) return;
      if (e.no_p || e.no_q) ++seen["pcm/bypass side"];
      const std::uint16_t* q0 = planes.data[0] + by * 4 * stride + bx * 4;
      const std::ptrdiff_t across = vertical ? 1 : stride;
      const hf::LumaDecision d = hf::decide_luma(q0, across, vertical ? stride : 1, e.beta, e.tc);
      const std::string dir = vertical ? "vertical " : "horizontal ";
      ++seen[dir + "mode " + std::to_string(d.mode)];
      if (d.mode != 1) return;
      ++seen[std::string("dEp ") + (d.dep ? "1" : "0")];
      ++seen[std::string("dEq ") + (d.deq ? "1" : "0")];
      const int delta = (9 * (q0[0] - q0[-across]) - 3 * (q0[across] - q0[-2 * across]) + 8) >> 4;
      if (std::abs(delta) >= 10 * e.tc)
        ++seen["normal, step too large"];
      else if (std::abs(delta) > e.tc)
        ++seen["normal, delta clipped to tc"];
    };
    for (int by = 0; by < g.height / 4; ++by)
      for (int bx = 0; bx < g.blocks_w; ++bx) {
        if (bx % 2 == 0 && bx > 0) luma(bx, by, true);
        if (by % 2 == 0 && by > 0) luma(bx, by, false);
        // Chroma edges: the 16-luma grid, bS 2 only.
        for (int c = 1; c < g.planes; ++c) {
          if (bx % 4 == 0 && bx > 0 && by % 2 == 0 && hf::segment_params(g, s, c, bx, by, true).tc)
            ++seen["chroma vertical"];
          if (by % 4 == 0 && by > 0 && bx % 2 == 0 && hf::segment_params(g, s, c, bx, by, false).tc)
            ++seen["chroma horizontal"];
        }
      }
    for (const auto& c : ctbs)
      for (int k = 0; k < g.planes; ++k)
        if (c.sao_type[k])
          ++seen["sao " + std::to_string(c.sao_type[k]) + " arg " +
                 std::to_string(c.sao_type[k] == 2 ? c.sao_arg[k] : c.sao_arg[k] / 8)];
  }
  for (const char* key : {"bS 0",
                          "bS 1",
                          "bS 2",
                          "bS 1 from motion",
                          "pcm/bypass side",
                          "vertical mode 0",
                          "vertical mode 1",
                          "vertical mode 2",
                          "horizontal mode 0",
                          "horizontal mode 1",
                          "horizontal mode 2",
                          "dEp 0",
                          "dEp 1",
                          "dEq 0",
                          "dEq 1",
                          "normal, step too large",
                          "normal, delta clipped to tc",
                          "edge closed",
                          "chroma vertical",
                          "chroma horizontal"})
    EXPECT_GT(seen[key], 0) << key;
  for (int a = 0; a < 4; ++a) {
    EXPECT_GT((seen["sao 2 arg " + std::to_string(a)]), 0) << "edge class " << a;
    EXPECT_GT((seen["sao 1 arg " + std::to_string(a)]), 0) << "band positions " << 8 * a << "..";
  }
}

TEST(HevcFilterValidate, RefusesInconsistentSideInformation) {
  SyntheticOptions o;
  o.width = 64;
  o.height = 32;
  const auto good = sigpu::test::make_synthetic_picture(o).info;
  EXPECT_NO_THROW(hf::validate(good));
  using Spoil = void (*)(hf::PictureInfo&);
  const std::pair<Spoil, const char*> cases[] = {
      {[](hf::PictureInfo& i) { i.width = 60; }, "multiple of 8"},
      {[](hf::PictureInfo& i) { i.blocks.pop_back(); }, "blocks has"},
      {[](hf::PictureInfo& i) { i.blocks[5].qp_y = 60; }, "qp_y 60"},
      {[](hf::PictureInfo& i) { i.blocks[0].deblock = hf::kFilterLeft; }, "picture edge"},
      {[](hf::PictureInfo& i) { i.ctb_slice[1] = 9; }, "ctb_slice[1]"},
      {[](hf::PictureInfo& i) { i.sao_params[0].offset[0][2] = 8; }, "offset 8"},
      {[](hf::PictureInfo& i) { i.sao_params[0].type[1] = 3; }, "type 3"},
      {[](hf::PictureInfo& i) { i.chroma_format_idc = 2; }, "chroma_format_idc 2"},
      {[](hf::PictureInfo& i) { i.slices.clear(); }, "slices is empty"},
      {[](hf::PictureInfo& i) { i.motion.resize(3); }, "motion has"},
      {[](hf::PictureInfo& i) { i.bit_depth_luma = 16; }, "bit depths 16/8"},
  };
  for (const auto& [spoil, needle] : cases) {
    auto info = good;
    spoil(info);
    try {
      hf::validate(info);
      ADD_FAILURE() << "accepted; expected an error about " << needle;
    } catch (const sigpu::Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  }
  // Planes: a null plane is refused before anything is touched.
  auto sp = sigpu::test::make_synthetic_picture(o);
  hf::Planes p = sp.planes();
  p.data[2] = nullptr;
  EXPECT_THROW(hf::filter_picture(sp.info, p), sigpu::Error);
}
