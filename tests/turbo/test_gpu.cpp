// GPU decoder: strict mode bit-identical to the CPU parallel scheme (its twin, through
// support/twin.hpp); loose mode decodes.
#include <gtest/gtest.h>
#include "support/turbo_frames.hpp"
#include "support/twin.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <sigpu/turbo.hpp>

namespace turbo = sigpu::turbo;
namespace twin = sigpu::test::twin;
using sigpu::Backend;

namespace {

using Frames = sigpu::test::TurboFrames;
using sigpu::test::make_turbo_frames;
using sigpu::test::make_turbo_transport_block;

// Decodes f's float LLRs and q8 with o on the CPU parallel backend and on the GPU: the same
// iterations, bits and LLRs for both types (int8 in the GPU's exact metrics). Returns the GPU's
// float result.
turbo::DecodeResult expect_gpu_matches_cpu(const Frames& f, const std::vector<std::int8_t>& q8,
                                           turbo::DecoderOptions o) {
  o.backend = Backend::cpu_parallel;
  o.int8_metrics = turbo::Int8Metrics::exact;
  turbo::DecoderOptions g = o;
  g.backend = Backend::cuda;
  const std::string at = " P = " + std::to_string(o.subdecoders);
  const auto c = turbo::decode(f.K, std::span<const float>(f.llr), o);
  auto d = turbo::decode(f.K, std::span<const float>(f.llr), g);
  EXPECT_TRUE(twin::equal(c.iterations, d.iterations)) << "float iterations" << at;
  EXPECT_TRUE(twin::equal(c.bits, d.bits)) << "float bits" << at;
  EXPECT_TRUE(twin::equal(c.llr, d.llr)) << "float LLRs" << at;
  const auto c8 = turbo::decode(f.K, std::span<const std::int8_t>(q8), o);
  const auto d8 = turbo::decode(f.K, std::span<const std::int8_t>(q8), g);
  EXPECT_TRUE(twin::equal(c8.iterations, d8.iterations)) << "int8 iterations" << at;
  EXPECT_TRUE(twin::equal(c8.bits, d8.bits)) << "int8 bits" << at;
  EXPECT_TRUE(twin::equal(c8.llr, d8.llr)) << "int8 LLRs" << at;
  return d;
}

}  // namespace

TEST(TurboGpu, StrictModeBitIdenticalToCpuParallel) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  for (int K : {40, 1056, 6144}) {
    // Low Eb/N0 and few iterations: many undecided bits, so any difference would show.
    const auto f = make_turbo_frames(std::vector<int>(3, K), 0.2, static_cast<std::uint64_t>(K));
    std::vector<std::int16_t> q16(f.llr.size());
    std::vector<std::int8_t> q8(f.llr.size());
    turbo::quantize(f.llr, 6, std::span<std::int16_t>(q16));
    turbo::quantize(f.llr, 2, std::span<std::int8_t>(q8));
    for (int P : {1, 8, 64, 768, K}) {
      for (int it : {1, 3}) {
        // int8: the CPU's exact metrics, the GPU's arithmetic (not its default 8-bit lanes).
        turbo::DecoderOptions o{.backend = Backend::cpu_parallel,
                                .iterations = it,
                                .subdecoders = P,
                                .int8_metrics = turbo::Int8Metrics::exact};
        turbo::DecoderOptions g = o;
        g.backend = Backend::cuda;
        const std::string at = twin::label("K", K, "P", P, "it", it);
        EXPECT_TRUE(twin::equal(turbo::decode(f.K, std::span<const float>(f.llr), o).bits,
                                turbo::decode(f.K, std::span<const float>(f.llr), g).bits))
            << "float " << at;
        EXPECT_TRUE(twin::equal(turbo::decode(f.K, std::span<const std::int16_t>(q16), o).bits,
                                turbo::decode(f.K, std::span<const std::int16_t>(q16), g).bits))
            << "int16 " << at;
        EXPECT_TRUE(twin::equal(turbo::decode(f.K, std::span<const std::int8_t>(q8), o).bits,
                                turbo::decode(f.K, std::span<const std::int8_t>(q8), g).bits))
            << "int8 " << at;
      }
    }
  }
}

// Strict mode with one thread block per code block: P that needs several rounds of its threads,
// the last one partial, sub-blocks that are not whole windows (K / P not a multiple of 8), and a
// P whose boundary metrics no longer fit in shared memory (the per-half-iteration kernels take
// over). 15 blocks: more than 8 x 768 sub-decoders at P = 500, so the batch is not one that
// goes to the cooperative kernel for its size. Bits and a-posteriori LLRs equal the CPU's.
TEST(TurboGpu, BlockKernelRoundsAndWindowsMatchCpu) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  std::vector<int> K;
  for (int r = 0; r < 5; ++r) K.insert(K.end(), {6144, 6144, 4032});
  const auto f = make_turbo_frames(K, 0.3, 5);
  std::vector<std::int8_t> q8(f.llr.size());
  turbo::quantize(f.llr, 2, std::span<std::int8_t>(q8));
  for (int P : {100, 500, 900, 2048})  // 900: three rounds of 384 threads, the last partial
    expect_gpu_matches_cpu(f, q8, {.iterations = 2, .subdecoders = P, .output_llrs = true});
}

// Small batches of large P: one launch for every iteration, each code block on one thread
// block cluster where P needs at most 8 thread blocks of 128 sub-decoders, else one cooperative
// launch. Whole windows run as two chains, with checkpoints where a sub-block spans two windows
// (P = 400: 15-16 bits each); sub-blocks shorter than a window (K = 1056, P = 768; P = 2048)
// take the one-chain order; K = 1056 over 6 thread blocks leaves some without extrinsics.
TEST(TurboGpu, SmallBatchKernelsMatchCpu) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  struct Case {
    std::vector<int> K;
    int P;
    std::string_view kernel;
  };
  for (const Case& c : {Case{{6144}, 768, "cluster"}, Case{{6144, 6144}, 768, "cluster"},
                        Case{{6144}, 400, "cluster"}, Case{{1056}, 768, "cluster"},
                        Case{{6144}, 2048, "cooperative"}, Case{{6144, 6144}, 64, "block"}}) {
    const auto f = make_turbo_frames(c.K, 0.3, 11);
    turbo::DecoderOptions o{
        .backend = Backend::cpu_parallel, .iterations = 3, .subdecoders = c.P, .output_llrs = true};
    const auto ref = turbo::decode(f.K, std::span<const float>(f.llr), o);
    turbo::CudaDecoder gpu;
    gpu.load(f.K, std::span<const float>(f.llr));
    o.backend = Backend::cuda;
    gpu.run(o);
    const std::string at = "K = " + std::to_string(c.K[0]) + " x " + std::to_string(c.K.size()) +
                           " P = " + std::to_string(c.P);
    EXPECT_EQ(gpu.kernel(), c.kernel) << at;
    EXPECT_TRUE(twin::equal(ref.bits, gpu.bits())) << "bits " << at;
    EXPECT_TRUE(twin::equal(ref.llr, gpu.llrs())) << "LLRs " << at;
    twin::time_worst_case("turbo " + std::string(c.kernel) + " " + at, [&](void*) { gpu.run(o); });
  }
}

// int8 LLRs where every sub-block is one window (K = 8 P): two sub-decoders per thread in the
// 16-bit halves of a register (the pair kernel), with the CPU's bits and a-posteriori LLRs and,
// with early termination, its iterations. Low Eb/N0: undecided bits and wide metrics. A batch
// holding one block of another size runs on the block kernel, with the same results.
TEST(TurboGpu, PairKernelMatchesCpu) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  struct Case {
    sigpu::test::TurboFrames f;
    int P;
    bool early_termination;
    std::string_view kernel;
  };
  // More clusters than the device holds at once (40 blocks at P = 768, 160 at P = 512), so not
  // the cluster kernel.
  auto crc = make_turbo_transport_block(40 * 6120 - 24, 1.0, 21);  // 40 x 6144 with CRC24B
  auto mixed = make_turbo_frames(std::vector<int>(40, 6144), 0.3, 22);
  mixed.add(std::span<const std::uint8_t>(make_turbo_frames({4032}, 0.3, 23).info), 0.3, 23);
  for (const Case& c :
       {Case{make_turbo_frames(std::vector<int>(40, 6144), 0.3, 20), 768, false, "pair"},
        Case{make_turbo_frames(std::vector<int>(160, 4096), 0.3, 24), 512, false, "pair"},
        Case{std::move(crc), 768, true, "pair"}, Case{std::move(mixed), 768, false, "block"}}) {
    std::vector<std::int8_t> q8(c.f.llr.size());
    turbo::quantize(c.f.llr, 2, std::span<std::int8_t>(q8));
    turbo::DecoderOptions o{.backend = Backend::cpu_parallel,
                            .iterations = c.early_termination ? 12 : 3,
                            .subdecoders = c.P,
                            .early_termination = c.early_termination,
                            .output_llrs = true,
                            .int8_metrics = turbo::Int8Metrics::exact};
    const auto ref = turbo::decode(c.f.K, std::span<const std::int8_t>(q8), o);
    turbo::CudaDecoder gpu;
    gpu.load(c.f.K, std::span<const std::int8_t>(q8));
    o.backend = Backend::cuda;
    gpu.run(o);
    const std::string at =
        twin::label("K", c.f.K[0], "x", c.f.K.size(), "P", c.P, "ET", c.early_termination);
    EXPECT_EQ(gpu.kernel(), c.kernel) << at;
    EXPECT_TRUE(twin::equal(ref.bits, gpu.bits())) << "bits " << at;
    EXPECT_TRUE(twin::equal(ref.llr, gpu.llrs())) << "LLRs " << at;
    EXPECT_TRUE(twin::equal(ref.iterations, gpu.iterations())) << "iterations " << at;
    if (c.early_termination) {
      EXPECT_LT(*std::min_element(ref.iterations.begin(), ref.iterations.end()), o.iterations)
          << at << ": none stopped";
    }
    twin::time_worst_case("turbo " + std::string(c.kernel) + " " + at, [&](void*) { gpu.run(o); });
  }
}

TEST(TurboGpu, MixedSizesInOneLaunch) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  const auto f = make_turbo_frames({40, 6144, 1056, 512, 6144, 2112}, 0.5, 9);
  turbo::DecoderOptions o{.backend = Backend::cpu_parallel, .subdecoders = 64};
  turbo::DecoderOptions g = o;
  g.backend = Backend::cuda;
  EXPECT_TRUE(twin::equal(turbo::decode(f.K, std::span<const float>(f.llr), o).bits,
                          turbo::decode(f.K, std::span<const float>(f.llr), g).bits));
}

TEST(TurboGpu, LooseModeDecodesAtHighSnr) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  const auto f = make_turbo_frames(std::vector<int>(16, 6144), 2.0, 4);
  for (int P : {64, 768}) {
    const turbo::DecoderOptions g{
        .backend = Backend::cuda, .iterations = 8, .subdecoders = P, .sync = turbo::Sync::loose};
    const auto r = turbo::decode(f.K, std::span<const float>(f.llr), g);
    EXPECT_TRUE(twin::equal(f.info, r.bits)) << "P = " << P;
  }
}

// Early termination and output LLRs in strict mode: the same iterations per block, the same
// bits and the same LLRs (float and fixed point) as the CPU parallel scheme.
TEST(TurboGpu, EarlyTerminationAndLlrsMatchCpu) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  auto f = make_turbo_transport_block(60000, 0.9, 31);  // 10 blocks with CRC24B, near waterfall
  const auto extra = make_turbo_frames({6144}, 0.9, 32);
  f.add(std::span<const std::uint8_t>(extra.info), 0.9, 31);  // no CRC24B: runs every iteration
  std::vector<std::int8_t> q8(f.llr.size());
  turbo::quantize(f.llr, 2, std::span<std::int8_t>(q8));
  for (int P : {1, 64, 768}) {
    const auto d = expect_gpu_matches_cpu(
        f, q8, {.iterations = 8, .subdecoders = P, .early_termination = true, .output_llrs = true});
    EXPECT_EQ(d.iterations.back(), 8);
  }
  // Loose mode returns LLRs too (its decisions are their signs).
  const auto l = turbo::decode(f.K, std::span<const float>(f.llr),
                               {.backend = Backend::cuda,
                                .iterations = 8,
                                .subdecoders = 64,
                                .sync = turbo::Sync::loose,
                                .output_llrs = true});
  std::vector<std::uint8_t> signs(l.llr.size());
  for (std::size_t i = 0; i < l.llr.size(); ++i) signs[i] = l.llr[i] < 0 ? 1 : 0;
  EXPECT_TRUE(twin::equal(signs, l.bits)) << "decisions against the signs of the LLRs";
}

TEST(TurboGpu, BadInputIsRefused) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  auto f = make_turbo_frames({1056}, 2.0, 1);
  f.llr[5] = std::nanf("");
  turbo::CudaDecoder dec;
  try {
    dec.load(f.K, std::span<const float>(f.llr));
    ADD_FAILURE() << "NaN accepted";
  } catch (const sigpu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("LLR 5 (code block 0, d0[5])"), std::string::npos);
  }
  EXPECT_THROW(dec.run({}), sigpu::Error);  // nothing loaded
  const std::vector<int> bad{1057};
  EXPECT_THROW(dec.load(bad, std::span<const float>(f.llr)), sigpu::Error);
}

// The channel on the GPU gives the CPU's LLRs (awgn_llrs, quantize): the same decoded bits and
// a-posteriori LLRs come from them, float and int8, BPSK and QPSK, mixed block sizes.
TEST(TurboGpu, ChannelOnGpuMatchesCpu) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  const std::vector<int> K = {1056, 6144, 40};
  std::vector<turbo::Codeword> cws;
  std::vector<std::uint8_t> code;
  std::mt19937_64 rng(3);
  for (int k : K) {
    std::vector<std::uint8_t> info(k);
    for (auto& b : info) b = static_cast<std::uint8_t>(rng() & 1u);
    cws.push_back(turbo::encode(info));
    code.insert(code.end(), cws.back().d.begin(), cws.back().d.end());
  }
  turbo::CudaDecoder gpu;
  for (const auto m : {turbo::Modulation::bpsk, turbo::Modulation::qpsk}) {
    const turbo::ChannelOptions ch{.modulation = m, .ebn0_db = 0.4, .seed = 9};
    std::vector<float> llr(code.size());
    std::size_t at = 0;
    for (std::size_t b = 0; b < K.size(); ++b) {
      const std::size_t n = turbo::llr_count(K[b]);
      turbo::awgn_llrs(cws[b], ch, 100 + b, std::span<float>(llr.data() + at, n));
      at += n;
    }
    std::vector<std::int8_t> q8(llr.size());
    turbo::quantize(llr, 2, std::span<std::int8_t>(q8));
    turbo::DecoderOptions o{
        .backend = Backend::cpu_parallel, .iterations = 2, .subdecoders = 8, .output_llrs = true};
    const auto ref = turbo::decode(K, std::span<const float>(llr), o);
    const auto ref8 = turbo::decode(K, std::span<const std::int8_t>(q8), o);
    o.backend = Backend::cuda;
    const std::string at_m = m == turbo::Modulation::bpsk ? "bpsk" : "qpsk";
    gpu.load_channel(K, code, ch, 100);
    gpu.run(o);
    EXPECT_TRUE(twin::equal(ref.bits, gpu.bits())) << "float " << at_m;
    EXPECT_TRUE(twin::equal(ref.llr, gpu.llrs())) << "float " << at_m;
    gpu.load_channel(K, code, ch, 100, turbo::LlrType::i8);
    gpu.run(o);
    EXPECT_TRUE(twin::equal(ref8.bits, gpu.bits())) << "int8 " << at_m;
    EXPECT_TRUE(twin::equal(ref8.llr, gpu.llrs())) << "int8 " << at_m;
  }
  code[5] = 2;
  try {
    gpu.load_channel(K, code, {}, 0);
    ADD_FAILURE() << "a codeword bit of 2 was accepted";
  } catch (const sigpu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("codeword bit 5 is 2"), std::string::npos) << e.what();
  }
}

// A simulation sees the same errors with the cuda backend (channel and decoder on the GPU) as
// with cpu-parallel (both on the CPU).
TEST(TurboGpu, SimulationSameOnCpuAndGpu) {
  if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  turbo::SimOptions s{.K = 1056, .llr = turbo::LlrType::i16, .max_frames = 192, .batch = 64};
  s.decoder = {.backend = Backend::cpu_parallel, .iterations = 4, .subdecoders = 8};
  const auto c = turbo::simulate(s, 0.5);
  s.decoder.backend = Backend::cuda;
  const auto g = turbo::simulate(s, 0.5);
  EXPECT_GT(c.bit_errors, 0u);  // near the waterfall: the comparison sees errors
  EXPECT_EQ(c.frame_errors, g.frame_errors);
  EXPECT_EQ(c.bit_errors, g.bit_errors);
}
