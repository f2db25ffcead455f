// The per-lane pieces of the GPU's warp Rice decoder (flac/rice_segment.hpp), run on the host by
// a model of the warp: 32 lanes in lock step, with the same entry corrections, prefix sums and
// rounds as warp_rice_partition (flac/cuda/warp_residual.cuh). Checked against the values that
// were encoded, on random partitions for every Rice parameter, with codes longer than a segment,
// codes the walk refuses to follow, and garbage before and after the partition. The kernel
// itself is checked against the serial decoder on the GPU (FlacGpuFastDecode, FlacRiceGpu).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "support/rng.hpp"

#include "bit_writer.hpp"

#include "flac/rice_segment.hpp"

namespace sigpu::flac {
namespace {

using test::BitWriter;

/// The warp of warp_rice_partition, one array element per lane.
struct WarpModel {
  unsigned rounds = 0, corrections = 0;

  std::uint64_t decode(const BitWindow& w, unsigned k, std::uint64_t pos, unsigned count,
                       std::int32_t* out) {
    unsigned done = 0;
    for (;;) {
      ++rounds;
      const unsigned active = rice_active_segments(count - done, k);
      std::array<RiceSegment, 32> seg{};
      std::array<std::uint64_t, 32> start{}, entry{};
      for (unsigned l = 0; l < 32; ++l) {
        start[l] = entry[l] = pos + std::uint64_t(l) * kRiceSegmentBits;
        if (l < active) seg[l] = walk_rice_segment(w, k, start[l], entry[l], RiceSegment{});
      }
      for (;;) {
        std::array<std::uint64_t, 32> before{};  // __shfl_up_sync: every lane reads, then writes
        for (unsigned l = 1; l < 32; ++l) before[l] = seg[l - 1].exit;
        bool any = false;
        for (unsigned l = 1; l < active; ++l) {
          if (before[l] == entry[l]) continue;
          any = true;
          entry[l] = before[l];
          seg[l] = walk_rice_segment(w, k, start[l], entry[l], seg[l]);
        }
        if (!any) break;
        ++corrections;
        EXPECT_LE(corrections, 32u * rounds) << "a lane corrected twice in one round";
      }
      unsigned total = 0;
      std::uint64_t last_end = kRiceUnfollowed;
      for (unsigned l = 0; l < 32; ++l) {
        if (!decode_rice_segment(w, k, start[l], seg[l].starts, done + total, count, out,
                                 &last_end))
          return kRiceUnfollowed;
        total += static_cast<unsigned>(__builtin_popcountll(seg[l].starts));
      }
      if (done + total >= count) return last_end;
      done += total;
      pos = seg[active - 1].exit;
      if (pos == kRiceUnfollowed) return kRiceUnfollowed;
    }
  }
};

struct Partition {
  std::vector<std::uint8_t> bytes;
  std::uint64_t pos = 0, end = 0;
  std::vector<std::int32_t> values;
  bool followable = true;  ///< no quotient above kRiceMaxWalkQuotient
};

/// Random junk, then `count` residuals coded with parameter k, then more junk. `spread` sets
/// how far the residuals stray from what k suits (large: long unary runs).
Partition make_partition(test::Rng& rng, unsigned k, unsigned count, double spread,
                         unsigned long_run_every) {
  Partition p;
  BitWriter bw;
  for (unsigned i = rng.below(200); i > 0; --i) bw.put(rng.next() & 1, 1);
  p.pos = bw.bits;
  for (unsigned i = 0; i < count; ++i) {
    const double scale = double(1u << k) * (1.0 + spread * rng.uniform());
    std::int64_t v = static_cast<std::int64_t>(rng.symmetric() * scale);
    if (long_run_every && rng.below(long_run_every) == 0)
      v = static_cast<std::int64_t>((std::uint64_t(1) << k) * (250 + rng.below(20)) / 2);
    v = std::max<std::int64_t>(std::min<std::int64_t>(v, INT32_MAX / 2), INT32_MIN / 2);
    const std::uint32_t u =
        v >= 0 ? std::uint32_t(v) << 1 : (std::uint32_t(-(v + 1)) << 1) | 1u;  // zigzag
    const std::uint32_t q = u >> k;
    if (q > kRiceMaxWalkQuotient) p.followable = false;
    bw.zeros(q);
    bw.put(1, 1);
    bw.put(u & ((std::uint64_t(1) << k) - 1), k);
    p.values.push_back(static_cast<std::int32_t>(v));
  }
  p.end = bw.bits;
  for (unsigned i = rng.below(3000); i > 0; --i) bw.put(rng.next() & 1, 1);
  p.bytes = std::move(bw.bytes);
  return p;
}

TEST(FlacRiceSegments, WarpModelMatchesTheEncodedValues) {
  test::Rng rng{7};
  WarpModel warp;
  unsigned checked = 0, refused = 0;
  for (unsigned k = 0; k <= 30; ++k) {
    for (unsigned count : {1u, 2u, 31u, 64u, 257u, 1000u, 4096u}) {
      for (double spread : {0.0, 3.0, 40.0}) {
        const Partition p = make_partition(rng, k, count, spread, k < 8 ? 0 : 500);
        const BitWindow w{p.bytes.data(), p.bytes.size()};
        std::vector<std::int32_t> out(count, 0x5A5A5A5A);
        const std::uint64_t end = warp.decode(w, k, p.pos, count, out.data());
        const bool overflow = std::any_of(p.values.begin(), p.values.end(), [&](std::int32_t v) {
          const std::uint32_t u =
              v >= 0 ? std::uint32_t(v) << 1 : (std::uint32_t(-(v + 1)) << 1) | 1;
          return (u >> k) > (0xFFFFFFFFu >> k);
        });
        if (!p.followable || overflow) {
          EXPECT_EQ(end, kRiceUnfollowed) << "k " << k << " count " << count;
          ++refused;
          continue;
        }
        ASSERT_EQ(end, p.end) << "k " << k << " count " << count << " spread " << spread;
        ASSERT_EQ(out, p.values) << "k " << k << " count " << count << " spread " << spread;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 500u);
  EXPECT_GT(refused, 10u);  // the long runs do reach the fallback
  // Lanes resynchronise within a few codes: a round settles after a handful of corrections
  // (of up to 31), fewer for small parameters (see RoundsAndCorrectionsPerParameter).
  EXPECT_LT(warp.corrections, 12 * warp.rounds);
}

TEST(FlacRiceSegments, RoundsAndCorrectionsPerParameter) {
  // Prints what the warp does per Rice parameter on 4096-code partitions (the cost model of
  // the kernel), and checks that small parameters, the common case, settle fast.
  test::Rng rng{3};
  for (unsigned k = 0; k <= 24; k += 4) {
    WarpModel warp;
    unsigned codes = 0;
    for (int t = 0; t < 8; ++t) {
      const Partition p = make_partition(rng, k, 4096, 1.0, 0);
      const BitWindow w{p.bytes.data(), p.bytes.size()};
      std::vector<std::int32_t> out(4096);
      ASSERT_EQ(warp.decode(w, k, p.pos, 4096, out.data()), p.end);
      ASSERT_EQ(out, p.values);
      codes += 4096;
    }
    const double per_round = double(warp.corrections) / warp.rounds;
    std::printf("k %2u: %5.1f codes per round, %4.1f corrections per round\n", k,
                double(codes) / warp.rounds, per_round);
    if (k <= 4) {
      EXPECT_LT(per_round, 2.0) << "k " << k;
    }
  }
}

TEST(FlacRiceSegments, CodesLongerThanSegments) {
  // k = 0 with quotients of 60..255 bits: codes that cross one or more lane segments whole.
  test::Rng rng{11};
  BitWriter bw;
  bw.put(0x2A, 7);
  const std::uint64_t pos = bw.bits;
  std::vector<std::int32_t> values;
  for (unsigned i = 0; i < 300; ++i) {
    const std::uint32_t q = i % 3 ? rng.below(4) : 60 + rng.below(196);
    bw.zeros(q);
    bw.put(1, 1);
    values.push_back(zigzag_decode(q));
  }
  const std::uint64_t end = bw.bits;
  bw.put(0xFFFF, 16);
  WarpModel warp;
  std::vector<std::int32_t> out(values.size());
  const BitWindow w{bw.bytes.data(), bw.bytes.size()};
  EXPECT_EQ(warp.decode(w, 0, pos, 300, out.data()), end);
  EXPECT_EQ(out, values);
}

TEST(FlacRiceSegments, PartitionRunningPastTheData) {
  // The last codes' bits are missing: they read as zeros, the run is not followed and the warp
  // refuses (the serial decoder then reports the truncation).
  BitWriter bw;
  for (int i = 0; i < 50; ++i) bw.put(0x5, 3);  // k = 1: q = 0, low bit 0, then "1" codes
  const BitWindow w{bw.bytes.data(), bw.bytes.size()};
  WarpModel warp;
  std::vector<std::int32_t> out(200);
  EXPECT_EQ(warp.decode(w, 1, 0, 200, out.data()), kRiceUnfollowed);
}

TEST(FlacRiceSegments, BitWindowReadsAnywhere) {
  std::vector<std::uint8_t> b = {0x12, 0x34, 0x56, 0x78, 0x9A, 0xBC, 0xDE, 0xF0, 0x0F};
  const BitWindow w{b.data(), b.size()};
  EXPECT_EQ(w.peek32(0), 0x12345678u);
  EXPECT_EQ(w.peek32(4), 0x23456789u);
  EXPECT_EQ(w.peek32(36), 0xABCDEF00u);
  EXPECT_EQ(w.peek32(64), 0x0F000000u);  // past the end reads zeros
  EXPECT_EQ(w.peek32(200), 0u);
  EXPECT_EQ(w.signed_at(32, 4), -7);  // 0x9 = 1001b
  EXPECT_EQ(w.signed_at(0, 0), 0);
}

}  // namespace
}  // namespace sigpu::flac
