// The GPU's rate matching kernels (their bodies in src/turbo/cuda/rate_match_kernel.cuh) run
// unchanged on the CPU under tests/support/cuda_emulation.hpp, into guarded host buffers of the
// twin harness, against the CPU rate matcher (rate_match, de_rate_match, soft_buffer_to_llrs),
// which test_rate_match.cpp checks against the spec's text: transmit bits, HARQ soft buffers
// (float, and saturating int16 / int8 sums) and the decoder's LLRs, for every redundancy version,
// with filler bits, limited soft buffers, puncturing and repetition. The *Gpu* tests run them on
// the device.
#include "support/cuda_emulation.hpp"
// The kernels after the emulation header, which defines the CUDA keywords they use.
#include "turbo/cuda/rate_match_kernel.cuh"

#include <gtest/gtest.h>
#include "support/turbo_frames.hpp"
#include "support/twin.hpp"

#include <cstdint>
#include <random>
#include <vector>

#include <sigpu/turbo.hpp>

namespace turbo = sigpu::turbo;
namespace twin = sigpu::test::twin;
namespace emu = sigpu::test::emulation;
using turbo::cuda::RateMatchBlock;

namespace {

// Transmissions that cover the index math: several code blocks with filler bits, E below the
// valid bits (puncturing) and above K_w (repetition), a limited soft buffer (N_cb < K_w).
std::vector<turbo::TransportBlockParams> cases() {
  return {{.A = 6200, .G = 12600, .Q_m = 4},
          {.A = 100, .G = 2400, .Q_m = 2},
          {.A = 20000, .G = 14400, .Q_m = 6},
          {.A = 13000, .G = 30000, .Q_m = 2, .limit = {.N_soft = 250368, .K_C = 2}}};
}

// De-rate-matching of one transmission into a soft buffer that holds earlier ones (values near
// saturation for the integer types), and the decoder's LLRs from it, on both sides.
template <typename T>
void expect_receive_side_matches(const turbo::TransportBlockParams& p, int lo, int hi, T filler,
                                 unsigned threads, std::mt19937& rng) {
  const auto cbs = turbo::plan_transport_block(p);
  const auto rm = turbo::cuda::rate_match_blocks(cbs);
  std::size_t entries = 0, total = 0;
  int max_D = 0;
  for (const auto& cb : cbs) {
    entries += static_cast<std::size_t>(cb.N_cb);
    total += turbo::llr_count(cb.K);
    max_D = std::max(max_D, cb.K + 4);
  }
  const auto llr = sigpu::test::random_values<T>(static_cast<std::size_t>(p.G), rng, lo, hi);
  const auto before = sigpu::test::random_values<T>(entries, rng, lo, hi);

  std::vector<T> want_soft = before, want_d(total);
  std::size_t e_at = 0, soft_at = 0, d_at = 0;
  for (const auto& cb : cbs) {
    const turbo::RateMatchParams rmp{.K = cb.K, .F = cb.F, .E = cb.E, .rv = p.rv, .N_cb = cb.N_cb};
    const std::span<T> soft(want_soft.data() + soft_at, static_cast<std::size_t>(cb.N_cb));
    turbo::de_rate_match(std::span<const T>(llr).subspan(e_at, cb.E), rmp, soft);
    turbo::soft_buffer_to_llrs(std::span<const T>(soft), rmp,
                               std::span<T>(want_d.data() + d_at, turbo::llr_count(cb.K)), filler);
    e_at += cb.E;
    soft_at += cb.N_cb;
    d_at += turbo::llr_count(cb.K);
  }

  twin::Arena a(twin::Memory::host);
  const RateMatchBlock* blocks = a.input("blocks", rm);
  const T* in = a.input("llr", llr);
  T* soft = a.in_out("soft", before);
  T* d = a.output<T>("d", total);
  const unsigned C = static_cast<unsigned>(rm.size());
  {
    SCOPED_TRACE(twin::label("threads", threads));
    emu::launch({C, 1, 1}, {threads, 1, 1}, emu::Barriers::block,
                [&] { turbo::cuda::de_rate_match_body<T>(blocks, p.rv, in, soft); });
    const unsigned gx = (3u * static_cast<unsigned>(max_D) + threads - 1) / threads;
    emu::launch({gx, C, 1}, {threads, 1, 1}, emu::Barriers::none,
                [&] { turbo::cuda::soft_buffer_to_llrs_body<T>(blocks, soft, d, filler); });
    EXPECT_TRUE(a.intact());
    EXPECT_TRUE(twin::equal(want_soft, a.read(soft, entries))) << "soft buffers";
    EXPECT_TRUE(twin::equal(want_d, a.read(d, total))) << "decoder LLRs";
  }
}

}  // namespace

TEST(TurboRateMatchKernelsOnCpu, TransmitMatchesCpuRateMatcher) {
  std::mt19937 rng(7);
  for (auto p : cases()) {
    const auto cbs = turbo::plan_transport_block(p);
    const auto rm = turbo::cuda::rate_match_blocks(cbs);
    std::size_t total = 0;
    for (const auto& cb : cbs) total += turbo::llr_count(cb.K);
    const auto code = sigpu::test::random_values<std::uint8_t>(total, rng, 0, 1);
    for (int rv = 0; rv < 4; ++rv) {
      p.rv = rv;
      SCOPED_TRACE(twin::label("A", p.A, "G", p.G, "rv", rv));
      std::vector<std::uint8_t> want;
      std::size_t at = 0;
      for (const auto& cb : cbs) {
        const auto e = turbo::rate_match(
            std::span<const std::uint8_t>(code).subspan(at, turbo::llr_count(cb.K)),
            {.K = cb.K, .F = cb.F, .E = cb.E, .rv = rv, .N_cb = cb.N_cb});
        want.insert(want.end(), e.begin(), e.end());
        at += turbo::llr_count(cb.K);
      }
      twin::Arena a(twin::Memory::host);
      const RateMatchBlock* blocks = a.input("blocks", rm);
      const std::uint8_t* in = a.input("code", code);
      std::uint8_t* e = a.output<std::uint8_t>("e", static_cast<std::size_t>(p.G));
      emu::launch({static_cast<unsigned>(rm.size()), 1, 1}, {128, 1, 1}, emu::Barriers::block,
                  [&] { turbo::cuda::rate_match_body(blocks, rv, in, e); });
      EXPECT_TRUE(a.intact());
      EXPECT_TRUE(twin::equal(want, a.read(e, static_cast<std::size_t>(p.G))));
    }
  }
}

TEST(TurboRateMatchKernelsOnCpu, ReceiveMatchesCpuDeRateMatcher) {
  std::mt19937 rng(8);
  for (auto p : cases()) {
    for (int rv = 0; rv < 4; ++rv) {
      p.rv = rv;
      SCOPED_TRACE(twin::label("A", p.A, "G", p.G, "rv", rv));
      // Chunks of other lengths per rv: the same sums.
      const unsigned threads = 64 + 64 * static_cast<unsigned>(rv);
      expect_receive_side_matches<float>(p, -60, 60, 1.0e4f, threads, rng);
      expect_receive_side_matches<std::int16_t>(p, -30000, 30000, std::int16_t{32767}, threads,
                                                rng);
      expect_receive_side_matches<std::int8_t>(p, -127, 127, std::int8_t{127}, threads, rng);
    }
  }
}
