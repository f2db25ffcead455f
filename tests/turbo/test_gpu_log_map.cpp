// Log-MAP on the GPU: every strict kernel (block, cluster, cooperative, per-half-iteration)
// against the CPU's log-MAP, its twin, through support/twin.hpp. The max* correction term is
// computed in exactly rounded arithmetic on both sides (map_decoder.hpp), so the hard bits, the
// a-posteriori LLRs and the iterations of early termination are the same, not only close. Loose
// mode decodes; fixed-point LLRs are refused.
#include <gtest/gtest.h>
#include "support/turbo_frames.hpp"
#include "support/twin.hpp"

#include <string>
#include <vector>

#include <sigpu/turbo.hpp>

namespace turbo = sigpu::turbo;
namespace twin = sigpu::test::twin;
using sigpu::Backend;

TEST(TurboGpuLogMap, EveryStrictKernelMatchesCpuLogMap) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  struct Case {
    const char* kernel;
    int A, P, iterations;
  };
  // As in test_gpu_early_termination.cpp: the batch and P pick the kernel.
  for (const Case& c :
       {Case{"block", 60000, 64, 6}, Case{"cluster", 12000, 768, 8},
        Case{"cooperative", 24000, 1536, 8}, Case{"half-iterations", 147000, 6144, 8}}) {
    for (double ebn0 : {0.4, 0.8, 1.5}) {
      const auto f = sigpu::test::make_turbo_transport_block(c.A, ebn0, 61);
      for (bool early : {false, true}) {
        const std::string at =
            twin::label(c.kernel, "P", c.P, "Eb/N0", ebn0, "early termination", early);
        turbo::DecoderOptions o{.backend = Backend::cpu_parallel,
                                .algorithm = turbo::Algorithm::log_map,
                                .iterations = c.iterations,
                                .subdecoders = c.P,
                                .early_termination = early,
                                .output_llrs = true};
        const auto want = turbo::decode(f.K, std::span<const float>(f.llr), o);
        turbo::CudaDecoder gpu;
        gpu.load(f.K, std::span<const float>(f.llr));
        o.backend = Backend::cuda;
        gpu.run(o);
        EXPECT_EQ(gpu.kernel(), c.kernel) << at;
        EXPECT_TRUE(twin::equal(want.bits, gpu.bits())) << "bits " << at;
        EXPECT_TRUE(twin::equal(want.llr, gpu.llrs())) << "LLRs " << at;
        EXPECT_TRUE(twin::equal(want.iterations, gpu.iterations())) << "iterations " << at;
        if (ebn0 == 1.5 && !early)
          twin::time_worst_case("turbo log-map " + at, [&](void*) { gpu.run(o); });
      }
    }
  }
}

TEST(TurboGpuLogMap, LooseModeDecodesAndFixedPointIsRefused) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  const auto f = sigpu::test::make_turbo_frames(std::vector<int>(16, 6144), 2.0, 4);
  const turbo::DecoderOptions g{.backend = Backend::cuda,
                                .algorithm = turbo::Algorithm::log_map,
                                .iterations = 8,
                                .subdecoders = 64,
                                .sync = turbo::Sync::loose};
  EXPECT_TRUE(twin::equal(f.info, turbo::decode(f.K, std::span<const float>(f.llr), g).bits));
  std::vector<std::int8_t> q8(f.llr.size());
  turbo::quantize(f.llr, 2, std::span<std::int8_t>(q8));
  try {
    turbo::decode(f.K, std::span<const std::int8_t>(q8), g);
    ADD_FAILURE() << "int8 log-map accepted";
  } catch (const sigpu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("log-map needs float LLRs"), std::string::npos)
        << e.what();
  }
  turbo::CudaDecoder gpu;
  gpu.load(f.K, std::span<const std::int8_t>(q8));
  EXPECT_THROW(gpu.run(g), sigpu::Error);
}

// A simulation with log-MAP counts the same errors on the GPU (channel and decoder) as on the
// CPU.
TEST(TurboGpuLogMap, SimulationSameOnCpuAndGpu) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  turbo::SimOptions s{.K = 1056, .max_frames = 192, .batch = 64};
  s.decoder = {.backend = Backend::cpu_parallel,
               .algorithm = turbo::Algorithm::log_map,
               .iterations = 4,
               .subdecoders = 8};
  const auto c = turbo::simulate(s, 0.5);
  s.decoder.backend = Backend::cuda;
  const auto g = turbo::simulate(s, 0.5);
  EXPECT_GT(c.bit_errors, 0u);
  EXPECT_EQ(c.frame_errors, g.frame_errors);
  EXPECT_EQ(c.bit_errors, g.bit_errors);
  EXPECT_EQ(c.iterations, g.iterations);
}
