// The CUDA backend against the CPU reference: every fixture on the DI input at periods 32, 64
// and 128, several instances with their own inputs (and weights) in one launch per period.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <sigpu/nam.hpp>

#include "nam/nam_fixtures.hpp"

#ifdef SIGPU_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace nam = sigpu::nam;
using sigpu::test::max_error_dbfs;
using sigpu::test::nam_di_input;
using sigpu::test::nam_fixture;
using sigpu::test::nam_model_fixtures;

namespace {

constexpr double kBarDbfs = -90.0;

// Instance i's input: the DI signal, scaled and time-shifted per instance.
std::vector<std::vector<float>> instance_inputs(const std::vector<float>& di, int n) {
  std::vector<std::vector<float>> in(n, std::vector<float>(di.size()));
  for (int i = 0; i < n; ++i)
    for (std::size_t t = 0; t < di.size(); ++t)
      in[i][t] = (1.0f - 0.2f * i) * di[(t + 977 * i) % di.size()];
  return in;
}

bool no_device() {
  return sigpu::cuda_devices().empty();
}

}  // namespace

TEST(NamGpu, MatchesCpuOnDiInputAtPeriods32To128) {
  if (no_device()) GTEST_SKIP() << "no CUDA device";
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  const std::vector<float> di = nam_di_input();
  ASSERT_FALSE(di.empty()) << nam_fixture("input.wav") << " unreadable";
  const auto in = instance_inputs(di, 3);
  for (const std::string& name : nam_model_fixtures()) {
    const nam::Model m = nam::load(nam_fixture(name));
    const std::vector<const nam::Model*> models(in.size(), &m);
    for (int period : {32, 64, 128}) {
      const auto gpu = sigpu::test::nam_gpu_run(models, in, period);
      for (std::size_t i = 0; i < in.size(); ++i) {
        const double err = max_error_dbfs(sigpu::test::nam_cpu_run(m, in[i], period), gpu[i]);
        EXPECT_LE(err, kBarDbfs) << name << " period " << period << " instance " << i;
        if (i == 0)
          std::printf("[ NamGpu ] %-26s period %3d: CUDA vs CPU max error %.1f dBFS\n",
                      name.c_str(), period, err);
      }
    }
  }
}

TEST(NamGpu, GlobalWeightsPathMatchesToo) {
  if (no_device()) GTEST_SKIP() << "no CUDA device";
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  const std::vector<float> di = nam_di_input();
  ASSERT_FALSE(di.empty());
  const auto in = instance_inputs(di, 2);
  for (const char* name : {"wavenet_a1_standard.nam", "lstm.nam"}) {
    const nam::Model m = nam::load(nam_fixture(name));
    const auto gpu = sigpu::test::nam_gpu_run({&m, &m}, in, 64, /*shared_weights=*/false);
    for (std::size_t i = 0; i < in.size(); ++i)
      EXPECT_LE(max_error_dbfs(sigpu::test::nam_cpu_run(m, in[i], 64), gpu[i]), kBarDbfs)
          << name << " " << i;
  }
}

TEST(NamGpu, InstancesWithTheirOwnWeights) {
  if (no_device()) GTEST_SKIP() << "no CUDA device";
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  const std::vector<float> di = nam_di_input();
  ASSERT_FALSE(di.empty());
  for (const char* name : {"wavenet_a1_standard.nam", "lstm.nam"}) {
    const nam::Model a = nam::load(nam_fixture(name));
    nam::Model b = a;  // same shape, other weights
    for (std::size_t i = 0; i < b.weights.size(); ++i) b.weights[i] *= (i % 3 ? 0.9f : 1.05f);
    if (b.architecture == nam::Architecture::wavenet) b.wavenet.head_scale = b.weights.back();
    const std::vector<const nam::Model*> models{&a, &b, &b, &a, &b};
    const auto in = instance_inputs(di, static_cast<int>(models.size()));
    const auto gpu = sigpu::test::nam_gpu_run(models, in, 128);
    for (std::size_t i = 0; i < models.size(); ++i)
      EXPECT_LE(max_error_dbfs(sigpu::test::nam_cpu_run(*models[i], in[i], 128), gpu[i]), kBarDbfs)
          << name << " instance " << i;
    // The perturbed model really sounds different: the test would catch mixed-up weights.
    EXPECT_GT(max_error_dbfs(gpu[0], gpu[3] /* same model, other input */), -60.0);
    EXPECT_GT(max_error_dbfs(sigpu::test::nam_cpu_run(a, in[1], 128), gpu[1]), -60.0);
  }
}

TEST(NamGpu, PeriodSizeDoesNotChangeTheOutput) {
  if (no_device()) GTEST_SKIP() << "no CUDA device";
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  const std::vector<float> di = nam_di_input();
  ASSERT_FALSE(di.empty());
  const nam::Model m = nam::load(nam_fixture("wavenet_a1_standard.nam"));
  const auto in = instance_inputs(di, 1);
  const auto a = sigpu::test::nam_gpu_run({&m}, in, 32),
             b = sigpu::test::nam_gpu_run({&m}, in, 128);
  const double err = max_error_dbfs(a[0], b[0]);
  std::printf("[ NamGpu ] period 32 vs 128 on the GPU: %s (%.1f dBFS)\n",
              a == b ? "bit-identical" : "differs", err);
  EXPECT_LE(err, -130.0);
}

TEST(NamGpu, BoundDeviceBuffersAndReset) {
  if (no_device()) GTEST_SKIP() << "no CUDA device";
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
#ifdef SIGPU_HAVE_CUDA
  const nam::Model m = nam::load(nam_fixture("wavenet.nam"));
  const std::vector<float> di = nam_di_input();
  ASSERT_FALSE(di.empty());
  const int n = 2, F = 64, periods = 20;
  const auto in = instance_inputs(di, n);
  nam::CudaBatch batch(std::vector<const nam::Model*>(n, &m), {.max_frames = F});
  float* d = nullptr;
  ASSERT_EQ(cudaMalloc(&d, 2 * n * F * sizeof(float)), cudaSuccess);
  std::vector<float*> d_in{d, d + F}, d_out{d + 2 * F, d + 3 * F};
  batch.bind(d_in, d_out);
  std::vector<std::vector<float>> out(n, std::vector<float>(F * periods));
  for (int pass = 0; pass < 2; ++pass) {  // the second pass after reset() must repeat the first
    for (int p = 0; p < periods; ++p) {
      auto s = static_cast<cudaStream_t>(batch.stream());
      for (int i = 0; i < n; ++i)
        cudaMemcpyAsync(d_in[i], in[i].data() + p * F, F * sizeof(float), cudaMemcpyHostToDevice,
                        s);
      batch.process(F);
      std::vector<float> y(F);
      for (int i = 0; i < n; ++i) {
        cudaMemcpyAsync(y.data(), d_out[i], F * sizeof(float), cudaMemcpyDeviceToHost, s);
        cudaStreamSynchronize(s);
        if (pass == 0)
          std::copy(y.begin(), y.end(), out[i].begin() + p * F);
        else
          EXPECT_EQ(0, std::memcmp(y.data(), out[i].data() + p * F, F * sizeof(float))) << p;
      }
    }
    batch.reset();
  }
  cudaFree(d);
  for (int i = 0; i < n; ++i) {
    const std::vector<float> x(in[i].begin(), in[i].begin() + F * periods);
    EXPECT_LE(max_error_dbfs(sigpu::test::nam_cpu_run(m, x, F), out[i]), kBarDbfs) << i;
  }
#endif
}

TEST(NamGpu, RefusesWhatItCannotRun) {
  if (no_device()) GTEST_SKIP() << "no CUDA device";
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  nam::Model linear;
  linear.source = "fir.nam";
  linear.architecture = nam::Architecture::linear;
  linear.weights = {1.0f};
  try {
    nam::CudaBatch b(std::vector<const nam::Model*>{&linear}, {});
    FAIL() << "Linear accepted";
  } catch (const sigpu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("fir.nam: the cuda backend cannot run this model"),
              std::string::npos)
        << e.what();
  }
}
