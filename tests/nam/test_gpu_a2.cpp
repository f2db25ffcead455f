// The CUDA backend on every fixture (nam and nam-a2) against the CPU reference, within -100 dBFS
// (gpu_tolerance): each model alone with several instances, every fixture (A1, A2, LSTM,
// slimmable) mixed in one launch per period, at a period of 64 and odd ones, shared and global
// weights; a slimmable model's size changed while running; what still runs on the CPU only refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <sigpu/nam.hpp>

#include "nam/nam_fixtures.hpp"
#include "support/twin.hpp"

#ifdef SIGPU_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace nam = sigpu::nam;
namespace twin = sigpu::test::twin;
using sigpu::test::gpu_tolerance;
using sigpu::test::max_error_dbfs;

namespace {

constexpr std::size_t kSamples = 4800;

bool no_device() {
  return sigpu::cuda_devices().empty();
}

struct Fixture {
  std::string name;
  nam::Model model;
};

/// Every model fixture there is.
std::vector<Fixture> fixtures() {
  std::vector<Fixture> out;
  for (const char* f : {"wavenet.nam", "lstm.nam", "wavenet_a1_standard.nam"})
    if (std::filesystem::exists(sigpu::test::nam_fixture(f)))
      out.push_back({f, nam::load(sigpu::test::nam_fixture(f))});
  for (const char* f : {"A2.nam", "slimmable_container.nam", "slimmable_wavenet.nam",
                        "wavenet_a2_max.nam", "wavenet_condition_dsp.nam"})
    if (std::filesystem::exists(sigpu::test::nam_a2_fixture(f)))
      out.push_back({f, nam::load(sigpu::test::nam_a2_fixture(f))});
  return out;
}

/// Instance k's input: the DI signal (or the music input without libsndfile), scaled and
/// time-shifted per instance.
std::vector<float> input(int k) {
  std::vector<float> src = sigpu::test::nam_di_input();
  if (src.empty()) src = sigpu::test::nam_music_input();
  std::vector<float> x(kSamples);
  for (std::size_t t = 0; t < kSamples; ++t)
    x[t] = (1.0f - 0.15f * static_cast<float>(k % 4)) * src[(t + 977 * k) % src.size()];
  return x;
}

}  // namespace

// Each fixture alone: three instances with their own inputs in one launch.
TEST(NamGpu, EveryFixtureMatchesTheCpuAtEvenAndOddPeriods) {
  if (no_device()) GTEST_SKIP() << "no CUDA device";
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  const std::vector<std::vector<float>> in{input(0), input(1), input(2)};
  for (const Fixture& f : fixtures())
    for (int period : {64, 1, 37, 128}) {
      const std::vector<const nam::Model*> models(in.size(), &f.model);
      const auto gpu = sigpu::test::nam_gpu_run(models, in, period);
      for (std::size_t i = 0; i < in.size(); ++i) {
        const std::vector<float> want = sigpu::test::nam_cpu_run(f.model, in[i], period);
        EXPECT_TRUE(twin::equal(want, gpu[i], gpu_tolerance(want)))
            << f.name << " period " << period << " instance " << i;
        if (i == 0)
          std::printf("[ NamGpu ] %-26s period %3d: CUDA vs CPU max error %.1f dBFS\n",
                      f.name.c_str(), period, max_error_dbfs(want, gpu[i]));
      }
    }
}

// Every fixture, A1, A2, LSTM and slimmable, and a copy with other weights, in one launch per
// period (the general kernel).
TEST(NamGpu, DifferentModelsA1A2AndLstmInOneLaunch) {
  if (no_device()) GTEST_SKIP() << "no CUDA device";
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  std::vector<Fixture> fx = fixtures();
  ASSERT_FALSE(fx.empty());
  nam::Model other = fx.back().model;  // same shape, other weights
  for (std::size_t i = 0; i < other.weights.size(); ++i) other.weights[i] *= (i % 3 ? 0.9f : 1.05f);
  other.wavenet.head_scale = other.weights.back();
  std::vector<const nam::Model*> models;
  std::vector<std::string> names;
  for (const Fixture& f : fx) {
    models.push_back(&f.model);
    names.push_back(f.name);
  }
  models.push_back(&other);
  names.push_back(fx.back().name + " (other weights)");
  models.push_back(&fx[0].model);
  names.push_back(fx[0].name + " (again)");
  std::vector<std::vector<float>> in;
  for (std::size_t i = 0; i < models.size(); ++i) in.push_back(input(static_cast<int>(i)));
  for (const auto& [period, shared] :
       {std::pair{64, true}, std::pair{37, true}, std::pair{64, false}, std::pair{93, false}}) {
    const auto gpu = sigpu::test::nam_gpu_run(models, in, period, shared);
    for (std::size_t i = 0; i < models.size(); ++i) {
      const std::vector<float> want = sigpu::test::nam_cpu_run(*models[i], in[i], period);
      EXPECT_TRUE(twin::equal(want, gpu[i], gpu_tolerance(want)))
          << names[i] << " period " << period << (shared ? " shared" : " global") << " weights";
    }
  }
  // The other weights really sound different: the test would catch mixed-up instances.
  EXPECT_GT(max_error_dbfs(sigpu::test::nam_cpu_run(fx.back().model, in[fx.size()], 64),
                           sigpu::test::nam_gpu_run(models, in, 64)[fx.size()]),
            -60.0);
}

// A size change at a period boundary crossfades as the CPU's does (no click: the same samples).
TEST(NamGpu, SlimmableSizeChangesWhileRunningAsOnTheCpu) {
  if (no_device()) GTEST_SKIP() << "no CUDA device";
  if (!std::filesystem::exists(sigpu::test::nam_a2_fixture("A2.nam")))
    GTEST_SKIP() << "nam-a2 fixtures absent";
  const nam::Model a2 = nam::load(sigpu::test::nam_a2_fixture("A2.nam"));
  const nam::Model slim = nam::load(sigpu::test::nam_a2_fixture("slimmable_wavenet.nam"));
  const nam::Model box = nam::load(sigpu::test::nam_a2_fixture("slimmable_container.nam"));
  const std::vector<const nam::Model*> models{&a2, &slim, &a2, &box};
  const std::vector<std::vector<float>> in{input(0), input(1), input(2), input(3)};
  const std::vector<double> sizes{0.2, 0.4, 1.0, 0.2};  // the third stays; box: to its LSTM
  for (int period : {64, 37}) {
    const long switch_at = 10L * period;
    const auto gpu = sigpu::test::nam_gpu_run(models, in, period, true, switch_at, sizes);
    for (std::size_t i = 0; i < models.size(); ++i) {
      const std::vector<float> want =
          sigpu::test::nam_cpu_run(*models[i], in[i], period, switch_at, sizes[i]);
      EXPECT_TRUE(twin::equal(want, gpu[i], gpu_tolerance(want)))
          << "instance " << i << " period " << period;
    }
    EXPECT_GT(max_error_dbfs(sigpu::test::nam_cpu_run(a2, in[0], period), gpu[0]), -60.0)
        << "no change heard";
  }
}

TEST(NamGpu, ResetRepeatsTheRunForA2) {
  if (no_device()) GTEST_SKIP() << "no CUDA device";
  if (!std::filesystem::exists(sigpu::test::nam_a2_fixture("wavenet_a2_max.nam")))
    GTEST_SKIP() << "nam-a2 fixtures absent";
  const nam::Model m = nam::load(sigpu::test::nam_a2_fixture("wavenet_a2_max.nam"));
  const nam::Model a2 = nam::load(sigpu::test::nam_a2_fixture("A2.nam"));
  const std::vector<const nam::Model*> models{&m, &a2};
  const std::vector<std::vector<float>> in{input(0), input(1)};
  nam::CudaBatch batch(models, {.max_frames = 64});
  std::vector<std::vector<float>> first(2, std::vector<float>(kSamples)), again(first);
  for (auto* out : {&first, &again}) {
    for (std::size_t at = 0; at < kSamples; at += 64) {
      const float* ip[] = {in[0].data() + at, in[1].data() + at};
      float* op[] = {(*out)[0].data() + at, (*out)[1].data() + at};
      batch.process_host(ip, op, 64);
    }
    batch.reset();
  }
  EXPECT_EQ(first, again);
  for (std::size_t i = 0; i < 2; ++i) {
    const std::vector<float> want = sigpu::test::nam_cpu_run(*models[i], in[i], 64);
    EXPECT_TRUE(twin::equal(want, first[i], gpu_tolerance(want))) << i;
  }
}

// As the audio graph runs it: bound device buffers, the period captured once in a CUDA graph,
// a size change between launches.
TEST(NamGpu, A2InACudaGraphWithBoundBuffersAndASizeChange) {
  if (no_device()) GTEST_SKIP() << "no CUDA device";
  if (!std::filesystem::exists(sigpu::test::nam_a2_fixture("A2.nam")))
    GTEST_SKIP() << "nam-a2 fixtures absent";
#ifdef SIGPU_HAVE_CUDA
  const nam::Model a2 = nam::load(sigpu::test::nam_a2_fixture("A2.nam"));
  const nam::Model mx = nam::load(sigpu::test::nam_a2_fixture("wavenet_a2_max.nam"));
  const int F = 64, periods = 40, switch_period = 10;
  const std::vector<std::vector<float>> in{input(0), input(1)};
  nam::CudaBatch batch(std::vector<const nam::Model*>{&a2, &mx}, {.max_frames = F});
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 4 * F * sizeof(float)), cudaSuccess);
  std::vector<float*> d_in{d, d + F}, d_out{d + 2 * F, d + 3 * F};
  batch.bind(d_in, d_out);
  const auto s = static_cast<cudaStream_t>(batch.stream());
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  batch.process(F);
  ASSERT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  std::vector<std::vector<float>> out(2, std::vector<float>(F * periods));
  for (int p = 0; p < periods; ++p) {
    if (p == switch_period) batch.set_size(0, 0.2);
    for (int i = 0; i < 2; ++i)
      cudaMemcpyAsync(d_in[i], in[i].data() + p * F, F * sizeof(float), cudaMemcpyHostToDevice, s);
    ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
    for (int i = 0; i < 2; ++i)
      cudaMemcpyAsync(out[i].data() + p * F, d_out[i], F * sizeof(float), cudaMemcpyDeviceToHost,
                      s);
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
  }
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaFree(d);
  const std::vector<float> x0(in[0].begin(), in[0].begin() + F * periods);
  const std::vector<float> x1(in[1].begin(), in[1].begin() + F * periods);
  const std::vector<float> want0 = sigpu::test::nam_cpu_run(a2, x0, F, switch_period * F, 0.2);
  const std::vector<float> want1 = sigpu::test::nam_cpu_run(mx, x1, F);
  EXPECT_TRUE(twin::equal(want0, out[0], gpu_tolerance(want0)));
  EXPECT_TRUE(twin::equal(want1, out[1], gpu_tolerance(want1)));
#endif
}

// What the GPU still cannot run is refused, naming the model and the feature.
TEST(NamGpu, RefusesWhatStaysOnTheCpuNamingIt) {
  if (no_device()) GTEST_SKIP() << "no CUDA device";
  auto fir = std::make_shared<nam::Model>();
  fir->source = "fir.nam";
  fir->architecture = nam::Architecture::linear;
  fir->weights = {1.0f};
  nam::Model box;
  box.source = "box.nam";
  box.architecture = nam::Architecture::slimmable_container;
  box.sizes.push_back({.max_value = 1.0, .channels = {}, .model = fir});
  try {
    nam::CudaBatch b(std::vector<const nam::Model*>{&box}, {});
    ADD_FAILURE() << "a container with a Linear size accepted";
  } catch (const sigpu::UnsupportedError& e) {
    const std::string s = e.what();
    EXPECT_NE(s.find("fir.nam: the cuda backend cannot run this model: Linear"), std::string::npos)
        << s;
  }
}
