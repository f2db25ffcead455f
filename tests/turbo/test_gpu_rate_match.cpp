// Rate matching on the GPU against the CPU rate matcher, its twin (through support/twin.hpp):
// decode_transport_block on the cuda backend de-rate-matches, combines and decodes on the device
// and must leave the CPU's HARQ soft buffers (float, and saturated int16 / int8) and return its
// bits, CRCs and iterations over four transmissions (rv 0, 2, 3, 1); the transmit side gives
// encode_transport_block's bits; the transport block simulator counts the same on both.
#include <gtest/gtest.h>
#include "support/twin.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <sigpu/turbo.hpp>

#include "turbo/device_rate_match.hpp"

namespace turbo = sigpu::turbo;
namespace twin = sigpu::test::twin;
using sigpu::Backend;

namespace {

// Several code blocks with filler bits, puncturing, repetition, a limited soft buffer.
std::vector<turbo::TransportBlockParams> cases() {
  return {{.A = 6200, .G = 12600, .Q_m = 4},
          {.A = 100, .G = 2400, .Q_m = 2},
          {.A = 30000, .G = 43200, .Q_m = 6},
          {.A = 13000, .G = 30000, .Q_m = 2, .limit = {.N_soft = 250368, .K_C = 2}}};
}

std::vector<std::uint8_t> random_bits(int n, std::mt19937& rng) {
  std::vector<std::uint8_t> v(n);
  for (auto& b : v) b = static_cast<std::uint8_t>(rng() & 1u);
  return v;
}

// Four transmissions of one transport block through the API on the CPU and on the GPU, with
// LLRs of type T made by `to_llr` from BPSK over AWGN (sigma) of each transmission's bits.
template <typename T, class ToLlr>
void expect_transport_block_matches(turbo::TransportBlockParams p, double sigma,
                                    const ToLlr& to_llr, const std::string& what) {
  std::mt19937 rng(static_cast<std::uint32_t>(p.A));
  const auto tb = random_bits(p.A, rng);
  std::normal_distribution<double> noise(0.0, 1.0);
  turbo::HarqBuffer<T> h_cpu, h_gpu;
  for (int rv : {0, 2, 3, 1}) {
    p.rv = rv;
    const std::string at = what + " " + twin::label("A", p.A, "G", p.G, "rv", rv);
    const auto e = turbo::encode_transport_block(tb, p);
    std::vector<T> llr(e.size());
    for (std::size_t i = 0; i < e.size(); ++i)
      llr[i] = to_llr(2 * ((e[i] ? -1.0 : 1.0) + sigma * noise(rng)) / (sigma * sigma));
    turbo::DecoderOptions o{.backend = Backend::cpu_parallel,
                            .iterations = 6,
                            .subdecoders = 32,
                            .early_termination = true};
    const auto c = turbo::decode_transport_block(std::span<const T>(llr), p, h_cpu, o);
    o.backend = Backend::cuda;
    const auto g = turbo::decode_transport_block(std::span<const T>(llr), p, h_gpu, o);
    EXPECT_TRUE(twin::equal(h_cpu.soft, h_gpu.soft)) << "HARQ soft buffers " << at;
    EXPECT_TRUE(twin::equal(c.bits, g.bits)) << "bits " << at;
    EXPECT_EQ(c.crc24a_ok, g.crc24a_ok) << at;
    EXPECT_EQ(c.crc24b_ok, g.crc24b_ok) << at;
    EXPECT_TRUE(twin::equal(c.iterations, g.iterations)) << "iterations " << at;
    EXPECT_EQ(h_gpu.transmissions, h_cpu.transmissions) << at;
  }
}

}  // namespace

// Low SNR: the blocks need all four transmissions, and the integer soft buffers saturate.
TEST(TurboGpuRateMatch, TransportBlockApiMatchesCpuForEveryLlrType) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  const double sigma = 1.6;
  for (const auto& p : cases()) {
    expect_transport_block_matches<float>(
        p, sigma, [](double l) { return static_cast<float>(l); }, "float");
    expect_transport_block_matches<std::int16_t>(
        p, sigma,
        [](double l) {
          return static_cast<std::int16_t>(std::clamp(std::lround(l * 64), -32767L, 32767L));
        },
        "int16");
    expect_transport_block_matches<std::int8_t>(
        p, sigma,
        [](double l) {
          return static_cast<std::int8_t>(std::clamp(std::lround(l * 16), -127L, 127L));
        },
        "int8");
  }
}

TEST(TurboGpuRateMatch, TransmitSideMatchesEncoder) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  std::mt19937 rng(5);
  for (auto p : cases()) {
    const auto tb = random_bits(p.A, rng);
    const auto seg = turbo::plan_segmentation(p.A);
    const auto blocks = turbo::segment(tb, seg);
    std::vector<std::uint8_t> code;
    std::size_t at = 0;
    for (int k : seg.K) {
      const auto cw = turbo::encode(std::span<const std::uint8_t>(blocks.data() + at, k));
      code.insert(code.end(), cw.d.begin(), cw.d.end());
      at += k;
    }
    for (int rv = 0; rv < 4; ++rv) {
      p.rv = rv;
      EXPECT_TRUE(twin::equal(turbo::encode_transport_block(tb, p),
                              turbo::rate_match_on_device(code, p, 0)))
          << twin::label("A", p.A, "G", p.G, "rv", rv);
    }
  }
  EXPECT_THROW(turbo::rate_match_on_device(std::vector<std::uint8_t>(10), cases()[0], 0),
               sigpu::Error);
}

// The cuda backend of the transport block simulator (rate matching, de-rate-matching and decoding
// on the GPU) counts what cpu-parallel counts.
TEST(TurboGpuRateMatch, TransportSimulationSameOnCpuAndGpu) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  turbo::TransportSimOptions s{.A = 6200, .Q_m = 4, .blocks = 24};
  s.decoder = {.backend = Backend::cpu_parallel, .iterations = 6, .subdecoders = 32};
  for (auto llr : {turbo::LlrType::f32, turbo::LlrType::i8}) {
    s.llr = llr;
    s.decoder.backend = Backend::cpu_parallel;
    const auto c = turbo::simulate_transport(s, 4.0);
    s.decoder.backend = Backend::cuda;
    const auto g = turbo::simulate_transport(s, 4.0);
    EXPECT_GT(c.transmissions, c.blocks) << "the point must retransmit";
    EXPECT_EQ(c.sent, g.sent) << turbo::to_string(llr);
    EXPECT_EQ(c.failed, g.failed) << turbo::to_string(llr);
    EXPECT_EQ(c.iterations, g.iterations) << turbo::to_string(llr);
  }
}

TEST(TurboGpuRateMatch, BadInputIsRefused) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  const turbo::TransportBlockParams p{.A = 6200, .G = 12600, .Q_m = 4};
  turbo::CudaDecoder gpu;
  std::vector<float> soft(12);
  std::vector<float> llr(p.G, 1.0f);
  EXPECT_THROW(gpu.load_transport_block(llr, p, soft, 1.0e4f), sigpu::Error);  // soft size
  llr[7] = std::nanf("");
  turbo::HarqBuffer<float> harq;
  try {
    turbo::decode_transport_block(llr, p, harq, {.backend = Backend::cuda});
    ADD_FAILURE() << "NaN accepted";
  } catch (const sigpu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("LLR 7"), std::string::npos) << e.what();
  }
  llr.resize(100);
  EXPECT_THROW(turbo::decode_transport_block(llr, p, harq, {.backend = Backend::cuda}),
               sigpu::Error);
}
