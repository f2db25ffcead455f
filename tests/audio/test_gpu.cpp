// The CUDA backend against its CPU twin (-100 dBFS on music-like and impulse inputs), the
// batching (a 1024-channel console is a handful of launches), I/O re-pointing without
// re-capture, and setup/teardown cycles that leave no device memory behind.
#include <gtest/gtest.h>

#ifdef SIGPU_HAVE_CUDA
#include <cuda_runtime.h>
#endif

#include "util.hpp"

namespace audio = sigpu::audio;
using namespace sigpu::test::audio;
using sigpu::Backend;

namespace {

bool have_gpu() {
  return !sigpu::cuda_devices().empty();
}

const char* kEveryEffect = R"({"inputs": 3, "nodes": [
  {"id": "gate", "type": "gate", "input": "in", "params": {"threshold_db": -30, "hold_ms": 5}},
  {"id": "eq", "type": "eq", "input": "gate", "params": {"bands": [
    {"type": "highpass", "freq": 40}, {"type": "lowshelf", "freq": 150, "gain_db": 4},
    {"type": "peak", "freq": 900, "gain_db": -6, "q": 3}, {"type": "notch", "freq": 2000, "q": 5},
    {"type": "bandpass", "freq": 3000, "q": 0.2}, {"type": "highshelf", "freq": 6000, "gain_db": 3},
    {"type": "lowpass", "freq": 15000}]}},
  {"id": "comp", "type": "compressor", "input": "eq:0-1", "sidechain": "in:2",
   "params": {"threshold_db": -30, "ratio": 6, "attack_ms": 2, "release_ms": 40, "makeup_db": 4}},
  {"id": "comp2", "type": "compressor", "input": "eq:2", "params": {"threshold_db": -20}},
  {"id": "pan", "type": "pan", "input": "comp2", "params": {"pan": 0.4}},
  {"id": "delay", "type": "delay", "input": "comp", "params": {"time_ms": 7.3, "feedback": 0.6}},
  {"id": "route", "type": "router", "input": ["delay", "pan"], "params": {"map": [3, 2, 1, 0]}},
  {"id": "mix", "type": "mixer", "input": "route", "params": {"outputs": 2, "gain_db": -2}},
  {"id": "gain", "type": "gain", "input": "mix", "params": {"gain_db": 1.5}}],
  "outputs": ["gain", "delay:1", "pan:0"]})";

void expect_twins(const audio::Graph& g, const Channels& in, int period, const std::string& what) {
  const auto cpu = run(g, in, {.backend = Backend::cpu, .period = period});
  const auto gpu = run(g, in, {.backend = Backend::cuda, .period = period});
  EXPECT_LT(worst_dbfs(cpu, gpu), -100) << what << " period " << period;
}

}  // namespace

TEST(AudioGpu, EveryEffectMatchesItsCpuTwin) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const auto g = audio::Graph::parse(kEveryEffect);
  for (int period : {32, 64, 128, 1000}) {
    expect_twins(g, music(3, 48000, 11), period, "music");
    expect_twins(g, impulses(3, 48000), period, "impulses");
  }
  for (const char* f : {"guitar.json", "sends.json"}) {
    const auto ex = audio::Graph::load(source_path(std::string("examples/audio/") + f));
    expect_twins(ex, music(ex.inputs(), 48000, 12), 64, f);
    expect_twins(ex, impulses(ex.inputs(), 48000), 64, f);
  }
}

TEST(AudioGpu, ThousandChannelConsoleIsOneLaunchPerGroup) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const auto g = audio::console_graph(1024);
  audio::Engine e(g, {.backend = Backend::cuda, .period = 32});
  e.setup();
  // Nine groups (gate, compressor, EQ; mixer, compressor, EQ twice) plus gather and scatter.
  EXPECT_EQ(e.kernels_per_period(), 11);
  expect_twins(g, music(1024, 4800, 13), 32, "console 1024");
}

TEST(AudioGpu, RuntimeUpdatesMatchTheCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const auto g = audio::Graph::parse(kEveryEffect);
  const auto in = music(3, 64 * 300, 21);
  Channels outs[2];
  for (int b = 0; b < 2; ++b) {
    audio::Engine e(g, {.backend = b ? Backend::cuda : Backend::cpu, .period = 64});
    e.setup();
    const int co = e.outputs();
    outs[b].assign(co, std::vector<float>(in[0].size()));
    std::vector<std::vector<float>> ob(co, std::vector<float>(64));
    std::vector<float*> op;
    for (auto& o : ob) op.push_back(o.data());
    for (int p = 0; p < 300; ++p) {
      if (p == 50) e.update("gain", "gain_db", -10);
      if (p == 80) e.update("eq", "band.2.freq", 2500);
      if (p == 81) e.update("eq", "band.2.gain_db", 9);
      if (p == 120) e.update("delay", "time_ms", 3.1);
      if (p == 150) e.update("comp", "makeup_db", -3);
      if (p == 151) e.update("comp", "ratio", 2);
      if (p == 200) e.update("pan", "pan", -1);
      if (p == 220) e.update("gate", "threshold_db", -10);
      const float* ip[3] = {in[0].data() + p * 64, in[1].data() + p * 64, in[2].data() + p * 64};
      e.process(ip, op.data());
      for (int c = 0; c < co; ++c)
        std::copy(ob[c].begin(), ob[c].end(), outs[b][c].begin() + p * 64);
    }
  }
  EXPECT_LT(worst_dbfs(outs[0], outs[1]), -100);
}

#ifdef SIGPU_HAVE_CUDA
TEST(AudioGpu, PlanarIoOnAlternatingDeviceBuffersIsRepointed) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const auto g = audio::Graph::load(source_path("examples/audio/guitar.json"));
  const int P = 128, periods = 100;
  const auto in = music(1, P * periods, 31);
  const auto ref = run(g, in, {.backend = Backend::cpu, .period = P});
  audio::Engine e(g, {.backend = Backend::cuda, .period = P});
  e.setup();
  float *d_in[2], *d_out[2];
  for (int k = 0; k < 2; ++k) {
    ASSERT_EQ(cudaMalloc(&d_in[k], P * sizeof(float)), cudaSuccess);
    ASSERT_EQ(cudaMalloc(&d_out[k], 2 * P * sizeof(float)), cudaSuccess);
  }
  Channels got(2, std::vector<float>(in[0].size()));
  std::vector<float> host(2 * P);
  for (int p = 0; p < periods; ++p) {
    const int k = p % 2;
    ASSERT_EQ(cudaMemcpy(d_in[k], in[0].data() + p * P, P * sizeof(float), cudaMemcpyHostToDevice),
              cudaSuccess);
    e.process_planar(d_in[k], d_out[k]);
    ASSERT_EQ(cudaMemcpy(host.data(), d_out[k], 2 * P * sizeof(float), cudaMemcpyDeviceToHost),
              cudaSuccess);
    for (int c = 0; c < 2; ++c) std::copy_n(host.data() + c * P, P, got[c].begin() + p * P);
  }
  for (int k = 0; k < 2; ++k) {
    cudaFree(d_in[k]);
    cudaFree(d_out[k]);
  }
  EXPECT_LT(worst_dbfs(ref, got), -100);
}

TEST(AudioGpu, SetupTeardownCyclesLeaveNoDeviceMemory) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  // Ten-second delay lines on 8 channels: 15 MB a cycle, so a leak would be obvious.
  const auto g = audio::Graph::parse(R"({"inputs": 8, "nodes": [
    {"id": "d", "type": "delay", "input": "in", "params": {"time_ms": 9000, "max_time_ms": 10000}},
    {"id": "c", "type": "compressor", "input": "d"}], "outputs": "c"})");
  audio::Engine e(g, {.backend = Backend::cuda, .period = 64});
  const auto before = audio::memory_stats();
  e.setup();  // first use loads modules and creates the context's pools
  e.teardown();
  std::size_t free0 = 0, free1 = 0, total = 0;
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaMemGetInfo(&free0, &total), cudaSuccess);
  std::vector<float> x(64 * 8, 0.1f), y(64 * 8);
  std::vector<const float*> ip;
  std::vector<float*> op;
  for (int c = 0; c < 8; ++c) ip.push_back(x.data() + c * 64), op.push_back(y.data() + c * 64);
  for (int i = 0; i < 100; ++i) {
    e.setup();
    ASSERT_GT(audio::memory_stats().device_bytes, before.device_bytes + 15'000'000);
    e.process(ip.data(), op.data());
    e.teardown();
    ASSERT_EQ(audio::memory_stats().device_bytes, before.device_bytes) << i;
    ASSERT_EQ(audio::memory_stats().device_blocks, before.device_blocks) << i;
    ASSERT_EQ(audio::memory_stats().host_bytes, before.host_bytes) << i;
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaMemGetInfo(&free1, &total), cudaSuccess);
  EXPECT_LE(free0 > free1 ? free0 - free1 : 0, std::size_t(4) << 20)
      << "device memory lost over 100 cycles: " << (double(free0) - double(free1)) / 1e6 << " MB";
}
#endif
