// The SAO edge offset of a run of samples (the CPU driver's inner loop, AVX2 where the CPU has
// it) against sao_edge, its plain twin, sample by sample: every bit depth the decoder meets,
// offsets over their whole range, runs of every length up to a few vectors, and samples at 0 and
// at the top of the range, where the result clips.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "hevc_filter/cpu_filter.hpp"
#include "hevc_filter/sao.hpp"

namespace hf = sigpu::hevc_filter;

TEST(HevcFilterSaoRow, MatchesSaoEdgeSampleBySample) {
  std::mt19937 rng(5);
  for (int bit_depth : {8, 10, 12}) {
    const int top = (1 << bit_depth) - 1;
    for (int n = 0; n <= 70; ++n)
      for (int trial = 0; trial < 8; ++trial) {
        std::uniform_int_distribution<int> any(0, top), near(0, 3), offset(-31, 31);
        // Mostly small differences, so that all five edge classes occur; some at the ends.
        std::vector<std::uint16_t> in(n), a(n), b(n), out(n);
        for (int x = 0; x < n; ++x) {
          const int base = trial % 4 == 0 ? (rng() & 1 ? 0 : top) : any(rng);
          auto around = [&] {
            return static_cast<std::uint16_t>(std::clamp(base + near(rng) - 1, 0, top));
          };
          in[x] = static_cast<std::uint16_t>(base);
          a[x] = around();
          b[x] = around();
        }
        std::int8_t o[4];
        for (auto& v : o) v = static_cast<std::int8_t>(offset(rng));
        const std::uint32_t packed = hf::sao_pack(o);
        hf::sao_edge_row(in.data(), a.data(), b.data(), out.data(), n, packed, bit_depth);
        for (int x = 0; x < n; ++x)
          ASSERT_EQ(out[x], hf::sao_edge(in[x], a[x], b[x], packed, bit_depth))
              << bit_depth << " bit, run of " << n << ", sample " << x << ": " << in[x]
              << " between " << a[x] << " and " << b[x];
      }
  }
}
