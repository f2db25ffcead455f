// The bus meters' CUDA kernel run on the CPU under cuda_emulation.hpp, into guarded host
// buffers, against its CPU twin (meter.hpp): channel lengths below, at and past the block size.
#include "support/cuda_emulation.hpp"
// The kernel after the emulation, which it needs.
#include "audio/cuda/meter_kernel.cuh"

#include <gtest/gtest.h>

#include <random>

#include "audio/meter.hpp"
#include "support/twin.hpp"

namespace twin = sigpu::test::twin;
namespace emulation = sigpu::test::emulation;
using sigpu::audio::meter_channel;
using namespace sigpu::audio::cuda;

TEST(AudioMeterKernel, OnCpuMatchesItsTwin) {
  for (std::uint64_t seed : twin::seeds({1, 2, 3})) {
    for (int n : {1, 37, 128, 300, 1024}) {
      SCOPED_TRACE(twin::label("seed", seed, "n", n));
      constexpr unsigned kChannels = 5;
      std::mt19937_64 rng(seed * 1000 + n);
      std::uniform_real_distribution<float> u(-1, 1);
      std::vector<float> x(std::size_t(n) * kChannels);
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = u(rng) * float(1 + i / n) / kChannels;
      std::vector<float> want(2 * kChannels);
      for (unsigned c = 0; c < kChannels; ++c) meter_channel(x.data() + c * n, n, &want[2 * c]);

      twin::Arena a(twin::Memory::host);
      const MeterArgs args{a.input("channels", x), a.output<float>("out", 2 * kChannels), n};
      emulation::launch({kChannels}, {kMeterBlock}, emulation::Barriers::block,
                        [&] { meter_kernel(args); });
      EXPECT_TRUE(a.intact());
      const auto got = a.read(args.out, 2 * kChannels);
      std::vector<float> peaks[2], sums[2];
      for (unsigned c = 0; c < 2 * kChannels; ++c) {
        (c % 2 ? sums : peaks)[0].push_back(want[c]);
        (c % 2 ? sums : peaks)[1].push_back(got[c]);
      }
      EXPECT_TRUE(twin::equal(peaks[0], peaks[1]));
      // The sums differ only in the order of the additions.
      EXPECT_TRUE(twin::equal(sums[0], sums[1], 1e-6 * n));
    }
  }
}
