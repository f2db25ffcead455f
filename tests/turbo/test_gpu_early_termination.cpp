// Early termination inside every strict GPU kernel (block, cluster, cooperative,
// per-half-iteration): the same iterations per code block, bits and a-posteriori LLRs as the
// CPU twin (the parallel scheme on the CPU), with min_iterations and CRC24B or CRC24A; and the
// transport block API on the cuda backend against the CPU. Through support/twin.hpp.
#include <gtest/gtest.h>
#include "support/turbo_frames.hpp"
#include "support/twin.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <sigpu/turbo.hpp>

namespace turbo = sigpu::turbo;
namespace twin = sigpu::test::twin;
using sigpu::Backend;

namespace {

struct Config {
  const char* kernel;  // what CudaDecoder::kernel() must say
  int A;               // transport block size: its code blocks carry CRC24B (CRC24A when one)
  int P;
  double ebn0_db;
  int iterations;
};

// Decodes f on the GPU with o and on the CPU twin: every block's iterations, the bits and the
// LLRs agree; at least one block stops early and, where f's last block carries no CRC, that one
// runs every iteration.
void expect_twin(const sigpu::test::TurboFrames& f, const turbo::DecoderOptions& o,
                 const std::string& kernel, bool last_without_crc, const std::string& at) {
  turbo::DecoderOptions cpu = o;
  cpu.backend = Backend::cpu_parallel;
  const auto want = turbo::decode(f.K, std::span<const float>(f.llr), cpu);
  turbo::CudaDecoder gpu;
  gpu.load(f.K, std::span<const float>(f.llr));
  gpu.run(o);
  EXPECT_EQ(gpu.kernel(), kernel) << at;
  EXPECT_TRUE(twin::equal(want.iterations, gpu.iterations())) << "iterations " << at;
  EXPECT_TRUE(twin::equal(want.bits, gpu.bits())) << "bits " << at;
  EXPECT_TRUE(twin::equal(want.llr, gpu.llrs())) << "LLRs " << at;
  twin::time_worst_case("turbo early termination " + at, [&](void*) { gpu.run(o); });
  const auto& its = want.iterations;
  EXPECT_LT(*std::min_element(its.begin(), its.end()), o.iterations) << at << ": none stopped";
  EXPECT_GE(*std::min_element(its.begin(), its.end()), o.min_iterations) << at;
  if (last_without_crc) {
    EXPECT_EQ(its.back(), o.iterations) << at;
  }

  // Fixed point takes the same path.
  std::vector<std::int8_t> q8(f.llr.size());
  turbo::quantize(f.llr, 2, std::span<std::int8_t>(q8));
  const auto want8 = turbo::decode(f.K, std::span<const std::int8_t>(q8), cpu);
  gpu.load(f.K, std::span<const std::int8_t>(q8));
  gpu.run(o);
  EXPECT_EQ(gpu.kernel(), kernel) << at << " int8";
  EXPECT_TRUE(twin::equal(want8.iterations, gpu.iterations())) << "iterations " << at << " int8";
  EXPECT_TRUE(twin::equal(want8.bits, gpu.bits())) << "bits " << at << " int8";
}

}  // namespace

TEST(TurboGpuEarlyTermination, EveryStrictKernelMatchesCpuTwin) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  // Block kernel: P from 32 to 384, a batch that is not small. Cluster: P 385..1024 on a few
  // blocks. Cooperative: P over 1024 (no cluster) whose metrics do not fit a thread block,
  // few enough sub-decoders to be resident at once. Half-iterations: more than that.
  for (const Config& c :
       {Config{"block", 60000, 64, 1.0, 8}, Config{"cluster", 12000, 768, 2.5, 16},
        Config{"cooperative", 24000, 1536, 3.0, 24},
        Config{"half-iterations", 147000, 6144, 3.0, 48}}) {
    auto f = sigpu::test::make_turbo_transport_block(c.A, c.ebn0_db, 41);
    const auto extra = sigpu::test::make_turbo_frames({6144}, c.ebn0_db, 42);
    f.add(std::span<const std::uint8_t>(extra.info), c.ebn0_db, 41);  // no CRC24B
    for (int min_it : {1, 3}) {
      const turbo::DecoderOptions o{.backend = Backend::cuda,
                                    .iterations = c.iterations,
                                    .subdecoders = c.P,
                                    .early_termination = true,
                                    .min_iterations = min_it,
                                    .output_llrs = true};
      expect_twin(f, o, c.kernel, true, twin::label(c.kernel, "P", c.P, "min_iterations", min_it));
    }
  }
  // One code block ending in CRC24A (a transport block of one block), on the block kernel.
  const auto one = sigpu::test::make_turbo_transport_block(6000, 1.0, 43);
  sigpu::test::TurboFrames f;
  for (int copy = 0; copy < 12; ++copy)
    f.add(std::span<const std::uint8_t>(one.info), 1.0, 50 + copy);
  expect_twin(f,
              {.backend = Backend::cuda,
               .iterations = 8,
               .subdecoders = 64,
               .early_termination = true,
               .crc = turbo::BlockCrc::crc24a,
               .output_llrs = true},
              "block", false, "CRC24A");
}

// decode_transport_block on the cuda backend: the CPU's bits, CRC results and iterations, over
// HARQ retransmissions.
TEST(TurboGpuEarlyTermination, TransportBlockApiMatchesCpu) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  const int A = 30000;
  turbo::TransportBlockParams p{.A = A, .G = 48000, .Q_m = 2};
  std::mt19937 rng(9);
  std::vector<std::uint8_t> tb(A);
  for (auto& b : tb) b = static_cast<std::uint8_t>(rng() & 1u);
  std::normal_distribution<double> n(0.0, 1.0);
  const double sigma = 0.95;
  turbo::HarqBuffer<float> h_cpu, h_gpu;
  for (int rv : {0, 2}) {
    p.rv = rv;
    const auto e = turbo::encode_transport_block(tb, p);
    std::vector<float> llr(e.size());
    for (std::size_t i = 0; i < e.size(); ++i)
      llr[i] = static_cast<float>(2 * ((e[i] ? -1.0 : 1.0) + sigma * n(rng)) / (sigma * sigma));
    turbo::DecoderOptions o{.backend = Backend::cpu_parallel,
                            .iterations = 8,
                            .subdecoders = 64,
                            .early_termination = true,
                            .min_iterations = 2};
    const auto c = turbo::decode_transport_block(llr, p, h_cpu, o);
    o.backend = Backend::cuda;
    const auto g = turbo::decode_transport_block(llr, p, h_gpu, o);
    EXPECT_TRUE(twin::equal(c.bits, g.bits)) << "rv " << rv;
    EXPECT_EQ(g.crc24a_ok, c.crc24a_ok) << "rv " << rv;
    EXPECT_EQ(g.crc24b_ok, c.crc24b_ok) << "rv " << rv;
    EXPECT_TRUE(twin::equal(c.iterations, g.iterations)) << "rv " << rv;
  }
  EXPECT_TRUE(twin::equal(h_cpu.soft, h_gpu.soft)) << "HARQ soft buffers";
}
