// The assembly stage (assemble_stage.hpp): its CUDA kernel run unchanged on the CPU under
// cuda_emulation.hpp against its CPU twin, and the twin against a plain reading of what the
// stage must do (residual added to inter predictions with clipping, PCM samples copied, lost
// CTBs mid-grey), on random pictures of every kind of job; nothing written outside the jobs'
// blocks, no input changed.
#include "support/cuda_emulation.hpp"
// (the emulation first)
#include "hevc/cuda/assemble_kernel.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "hevc/assemble_stage.hpp"
#include "support/twin.hpp"

namespace sigpu::hevc {
namespace {

namespace twin = sigpu::test::twin;

// A 64x48 4:2:0 (or 4:0:0) picture of 16x16 CTBs, each lost, one PCM CU, or four 8x8 inter
// CUs with their luma and chroma transform blocks coded (some intra blocks among them, which
// the stage must leave alone).
struct Case {
  int bit_depth = 8, planes = 3;
  PictureRecords rec;
  std::vector<std::uint8_t> ctb_done;
  std::vector<std::uint16_t> pred[3];
  std::vector<std::int16_t> residual[3];
  int width[3] = {64, 32, 32}, height[3] = {48, 24, 24};

  std::size_t size(int c) const { return static_cast<std::size_t>(width[c]) * height[c]; }
  AssembleParams params() const {
    AssembleParams p;
    p.bit_depth[0] = p.bit_depth[1] = bit_depth;
    p.planes = planes;
    std::copy_n(width, 3, p.width);
    std::copy_n(height, 3, p.height);
    p.log2_ctb = 4;
    p.ctbs_wide = 4;
    return p;
  }
};

void push_tu(PictureRecords& r, int c, int x, int y, int log2, bool intra) {
  TuRecords& t = r.tu;
  t.x.push_back(static_cast<std::uint16_t>(x));
  t.y.push_back(static_cast<std::uint16_t>(y));
  t.log2.push_back(static_cast<std::uint8_t>(log2));
  t.comp.push_back(static_cast<std::uint8_t>(c));
  t.mode.push_back(0);
  t.qp.push_back(30);
  t.flags.push_back(static_cast<std::uint8_t>(kTuCoded | (intra ? kTuIntra : 0)));
  t.cols.push_back(1);
  t.rows.push_back(1);
  t.coeff_begin.push_back(0);
  t.coeff_count.push_back(0);
}

void push_cu(PictureRecords& r, int x, int y, int log2, int flags) {
  CuRecords& cu = r.cu;
  cu.x.push_back(static_cast<std::uint16_t>(x));
  cu.y.push_back(static_cast<std::uint16_t>(y));
  cu.log2.push_back(static_cast<std::uint8_t>(log2));
  cu.flags.push_back(static_cast<std::uint8_t>(flags));
  cu.luma_modes.push_back({});
  cu.chroma_mode.push_back(0);
  cu.pu_begin.push_back(0);
  cu.tu_begin.push_back(static_cast<std::uint32_t>(r.tu.size()));
  cu.pcm_begin.push_back(static_cast<std::uint32_t>(r.pcm.size()));
}

Case make_case(std::uint64_t seed, int bit_depth, int planes) {
  std::mt19937_64 rng(seed);
  Case k;
  k.bit_depth = bit_depth;
  k.planes = planes;
  const int max = (1 << bit_depth) - 1;
  for (int c = 0; c < planes; ++c) {
    k.pred[c].resize(k.size(c));
    k.residual[c].resize(k.size(c));
    for (auto& v : k.pred[c]) v = static_cast<std::uint16_t>(rng() % (max + 1));
    for (auto& v : k.residual[c]) v = static_cast<std::int16_t>(int(rng() % 1201) - 600);
  }
  for (int rs = 0; rs < 12; ++rs) {
    const int x0 = rs % 4 * 16, y0 = rs / 4 * 16;
    const int kind = static_cast<int>(rng() % 3);
    k.ctb_done.push_back(kind != 0);
    if (kind == 1) {
      push_cu(k.rec, x0, y0, 4, kCuIntra | kCuPcm);
      const int n = 16 * 16 + (planes == 3 ? 2 * 8 * 8 : 0);
      for (int i = 0; i < n; ++i)
        k.rec.pcm.push_back(static_cast<std::uint16_t>(rng() % (max + 1)));
    } else if (kind == 2) {
      for (int q = 0; q < 4; ++q) {
        const int x = x0 + q % 2 * 8, y = y0 + q / 2 * 8;
        const bool intra = rng() % 4 == 0;
        push_cu(k.rec, x, y, 3, intra ? kCuIntra : 0);
        push_tu(k.rec, 0, x, y, 3, intra);
        if (planes == 3) {
          push_tu(k.rec, 1, x / 2, y / 2, 2, intra);
          push_tu(k.rec, 2, x / 2, y / 2, 2, intra);
        }
      }
    }
  }
  return k;
}

// What the stage must leave in the planes, from the case alone.
std::vector<std::uint16_t> expected(const Case& k, int c) {
  std::vector<std::uint16_t> out = k.pred[c];
  const int w = k.width[c], max = (1 << k.bit_depth) - 1;
  const TuRecords& t = k.rec.tu;
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (t.comp[i] != c || (t.flags[i] & kTuIntra)) continue;
    const int n = 1 << t.log2[i];
    for (int y = t.y[i]; y < t.y[i] + n; ++y)
      for (int x = t.x[i]; x < t.x[i] + n; ++x) {
        const std::size_t at = static_cast<std::size_t>(y) * w + x;
        out[at] = static_cast<std::uint16_t>(std::clamp(out[at] + k.residual[c][at], 0, max));
      }
  }
  const CuRecords& cu = k.rec.cu;
  for (std::size_t i = 0; i < cu.size(); ++i) {
    if (!(cu.flags[i] & kCuPcm)) continue;
    const std::uint16_t* s = k.rec.pcm.data() + cu.pcm_begin[i];
    const int n = 1 << cu.log2[i];
    for (int cc = 0; cc < c; ++cc) s += (n >> (cc ? 1 : 0)) * (n >> (cc ? 1 : 0));
    const int m = n >> (c ? 1 : 0), x0 = cu.x[i] >> (c ? 1 : 0), y0 = cu.y[i] >> (c ? 1 : 0);
    for (int y = 0; y < m; ++y)
      for (int x = 0; x < m; ++x) out[static_cast<std::size_t>(y0 + y) * w + x0 + x] = *s++;
  }
  for (int rs = 0; rs < 12; ++rs) {
    if (k.ctb_done[rs]) continue;
    const int sh = c ? 1 : 0, m = 16 >> sh;
    const int x0 = (rs % 4 * 16) >> sh, y0 = (rs / 4 * 16) >> sh;
    for (int y = y0; y < y0 + m; ++y)
      for (int x = x0; x < x0 + m; ++x)
        out[static_cast<std::size_t>(y) * w + x] =
            static_cast<std::uint16_t>(1 << (k.bit_depth - 1));
  }
  return out;
}

TEST(HevcAssembleStage, TwinAndEmulatedKernelDoWhatTheStageMust) {
  for (const int bit_depth : {8, 10}) {
    for (const int planes : {3, 1}) {
      for (std::uint64_t seed : twin::seeds({1, 2, 3})) {
        SCOPED_TRACE(twin::label("seed", seed, "bits", bit_depth, "planes", planes));
        const Case k = make_case(seed, bit_depth, planes);
        AssembleOrder order;
        order_assembly(k.rec, k.ctb_done, order);
        ASSERT_GT(order.tus + order.pcms, 0u);

        // The twin on host planes.
        std::vector<std::uint16_t> twin_out[3];
        ResidualPlanes res;
        InterPlanes out;
        for (int c = 0; c < planes; ++c) {
          twin_out[c] = k.pred[c];
          res.data[c] = const_cast<std::int16_t*>(k.residual[c].data());
          res.stride[c] = k.width[c];
          out.data[c] = twin_out[c].data();
          out.stride[c] = k.width[c];
        }
        assemble_stage_cpu(k.rec, order, k.params(), res, out);
        for (int c = 0; c < planes; ++c)
          EXPECT_TRUE(twin::equal(expected(k, c), twin_out[c])) << "twin, plane " << c;

        // The kernel under the emulation, every array in a checked arena.
        twin::Arena a;
        const PictureRecords& r = k.rec;
        ResidualPlanes ares;
        InterPlanes aout;
        for (int c = 0; c < planes; ++c) {
          ares.data[c] = a.input(twin::label("residual", c), k.residual[c]);
          ares.stride[c] = k.width[c];
          aout.data[c] = a.in_out(twin::label("plane", c), k.pred[c]);
          aout.stride[c] = k.width[c];
        }
        const AssembleArgs args{a.input("tu.x", r.tu.x),
                                a.input("tu.y", r.tu.y),
                                a.input("tu.log2", r.tu.log2),
                                a.input("tu.comp", r.tu.comp),
                                a.input("cu.x", r.cu.x),
                                a.input("cu.y", r.cu.y),
                                a.input("cu.log2", r.cu.log2),
                                a.input("cu.pcm", r.cu.pcm_begin),
                                a.input("pcm", r.pcm),
                                a.input("jobs", order.jobs),
                                order.tus,
                                order.pcms,
                                k.params(),
                                ares,
                                aout};
        sigpu::test::emulation::launch(
            {static_cast<unsigned>(order.jobs.size())}, {cuda::kAssembleThreads},
            sigpu::test::emulation::Barriers::none, [&] { cuda::assemble_kernel(args); });
        EXPECT_TRUE(a.intact());
        for (int c = 0; c < planes; ++c)
          EXPECT_TRUE(twin::equal(twin_out[c], a.read(aout.data[c], k.size(c))))
              << "kernel, plane " << c;
      }
    }
  }
}

}  // namespace
}  // namespace sigpu::hevc
