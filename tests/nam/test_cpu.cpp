// The CPU reference: against the float64 oracle on the fixtures and the DI input, streaming
// in periods bit-identical to one piece, synthetic models of every architecture and option.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <sigpu/nam.hpp>

#include "nam/nam_fixtures.hpp"
#include "nam/reference_f64.hpp"

namespace nam = sigpu::nam;
using sigpu::test::max_error_dbfs;
using sigpu::test::nam_di_input;
using sigpu::test::nam_fixture;
using sigpu::test::nam_model_fixtures;

namespace {

std::vector<float> di_or_skip() {
  std::vector<float> x = nam_di_input();
  if (x.empty()) ADD_FAILURE() << nam_fixture("input.wav") << " unreadable (libsndfile missing?)";
  return x;
}

std::vector<float> run(const nam::Model& m, const std::vector<float>& x, int period) {
  nam::Processor p(m, {.sample_rate = m.sample_rate, .max_frames = period});
  std::vector<float> y(x.size());
  for (std::size_t at = 0; at < x.size(); at += period) {
    const int n = static_cast<int>(std::min<std::size_t>(period, x.size() - at));
    p.process(x.data() + at, y.data() + at, n);
  }
  return y;
}

double error_vs_reference(const nam::Model& m, const std::vector<float>& x,
                          const std::vector<float>& y) {
  const std::vector<double> ref = sigpu::test::nam_reference(m, x, m.prewarm_samples());
  double e = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) e = std::max(e, std::abs(ref[i] - y[i]));
  return e > 0 ? 20 * std::log10(e) : -400;
}

double peak(const std::vector<float>& y) {
  double p = 0;
  for (float v : y) p = std::max(p, static_cast<double>(std::abs(v)));
  return p;
}

// A random test signal: a decaying pluck-like tone plus noise.
std::vector<float> test_signal(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.0f, 0.05f);
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = 0.5f * std::exp(-1e-4f * (i % 20000)) * std::sin(0.03f * i) + noise(rng);
  return x;
}

// A model file with `count` random weights for `config`.
nam::Model synthetic(const std::string& arch, const std::string& config, long count, unsigned seed,
                     float scale = 0.4f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  std::ostringstream s;
  s.precision(9);
  s << "{\"version\": \"0.5.4\", \"architecture\": \"" << arch << "\", \"config\": " << config
    << ", \"sample_rate\": 48000, \"weights\": [";
  for (long i = 0; i < count; ++i) s << (i ? ", " : "") << u(rng);
  s << "]}";
  return nam::parse(s.str(), arch + " test model");
}

}  // namespace

TEST(NamCpu, FixturesMatchFloat64Reference) {
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  const std::vector<float> x = di_or_skip();
  if (x.empty()) return;
  for (const std::string& name : nam_model_fixtures()) {
    const nam::Model m = nam::load(nam_fixture(name));
    const std::vector<float> y = run(m, x, 128);
    const double err = error_vs_reference(m, x, y);
    // The output is a real signal, not silence: the comparison means something.
    EXPECT_GT(peak(y), 0.01) << name;
    EXPECT_LT(err, -110.0) << name << ": float32 vs float64 max error " << err << " dBFS";
    std::printf("[ NamCpu ] %-26s peak %.3f, max error vs float64 %.1f dBFS\n", name.c_str(),
                peak(y), err);
  }
}

TEST(NamCpu, StreamingInPeriodsIsBitIdenticalToOnePiece) {
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  const std::vector<float> x = di_or_skip();
  if (x.empty()) return;
  for (const std::string& name : nam_model_fixtures()) {
    const nam::Model m = nam::load(nam_fixture(name));
    const std::vector<float> whole = run(m, x, static_cast<int>(x.size()));
    for (int period : {32, 64, 128, 37}) {
      const std::vector<float> y = run(m, x, period);
      EXPECT_EQ(0, std::memcmp(whole.data(), y.data(), x.size() * sizeof(float)))
          << name << " period " << period << ": max difference " << max_error_dbfs(whole, y)
          << " dBFS";
    }
  }
}

TEST(NamCpu, ResetReturnsToThePrewarmedState) {
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  const nam::Model m = nam::load(nam_fixture("wavenet.nam"));
  const std::vector<float> x = test_signal(4000, 3);
  nam::Processor p(m, {.max_frames = 500});
  std::vector<float> a(x.size()), b(x.size());
  p.process(x.data(), a.data(), static_cast<int>(x.size()));
  p.reset();
  p.process(x.data(), b.data(), static_cast<int>(x.size()));
  EXPECT_EQ(a, b);
  // In-place processing gives the same samples.
  std::vector<float> c = x;
  p.reset();
  p.process(c.data(), c.data(), static_cast<int>(c.size()));
  EXPECT_EQ(a, c);
}

TEST(NamCpu, PrewarmSettlesTheInitialState) {
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  // Without pre-warm, the first samples of a fresh WaveNet would be the response of its bias
  // terms rising from zero history: after it, silence in gives the steady output at once.
  const nam::Model m = nam::load(nam_fixture("wavenet_a1_standard.nam"));
  nam::Processor p(m, {.max_frames = 64});
  std::vector<float> zeros(64, 0.0f), y(64);
  p.process(zeros.data(), y.data(), 64);
  for (float v : y) EXPECT_EQ(v, y[0]);
}

TEST(NamCpu, SyntheticWaveNetsMatchReference) {
  const std::vector<float> x = test_signal(3000, 5);
  // Gated, with head bias, several activations, kernel 2 and 4; sizes chain 1 -> 4 -> 3 -> 1.
  const std::string layer_arrays[] = {
      R"({"layers": [{"input_size": 1, "condition_size": 1, "head_size": 3, "channels": 4,
          "kernel_size": 2, "dilations": [1, 3, 9], "activation": "ReLU", "gated": true,
          "head_bias": true},
         {"input_size": 4, "condition_size": 1, "head_size": 1, "channels": 3, "kernel_size": 4,
          "dilations": [2, 5], "activation": "SiLU", "gated": false, "head_bias": false}],
         "head": null, "head_scale": 0.5})",
      R"({"layers": [{"input_size": 1, "condition_size": 1, "head_size": 1, "channels": 5,
          "kernel_size": 3, "dilations": [1, 2, 4], "activation": "Hardswish", "gated": true,
          "head_bias": true}], "head": null, "head_scale": 1.0})",
      R"({"layers": [{"input_size": 1, "condition_size": 1, "head_size": 1, "channels": 2,
          "kernel_size": 3, "dilations": [1, 7], "activation": "Hardtanh", "gated": false,
          "head_bias": true}], "head": null, "head_scale": 1.0})",
      R"({"layers": [{"input_size": 1, "condition_size": 1, "head_size": 1, "channels": 2,
          "kernel_size": 1, "dilations": [1], "activation": "LeakyReLU", "gated": false,
          "head_bias": false}], "head": null, "head_scale": 1.0})",
      R"({"layers": [{"input_size": 1, "condition_size": 1, "head_size": 1, "channels": 3,
          "kernel_size": 2, "dilations": [4], "activation": "Sigmoid", "gated": false,
          "head_bias": false}], "head": null, "head_scale": 1.0})",
  };
  // Weight counts, per array: C*in + per layer (zc*C*K + zc + zc + C*C + C) + head*C (+head).
  const long counts[] = {
      (4 * 1 + 3 * (8 * 4 * 2 + 8 + 8 + 16 + 4) + 3 * 4 + 3) +
          (3 * 4 + 2 * (3 * 3 * 4 + 3 + 3 + 9 + 3) + 3) + 1,
      5 + 3 * (10 * 5 * 3 + 10 + 10 + 25 + 5) + 5 + 1 + 1,
      2 + 2 * (2 * 2 * 3 + 2 + 2 + 4 + 2) + 2 + 1 + 1,
      2 + (2 * 2 * 1 + 2 + 2 + 4 + 2) + 2 + 1,
      3 + (3 * 3 * 2 + 3 + 3 + 9 + 3) + 3 + 1,
  };
  for (int i = 0; i < 5; ++i) {
    const nam::Model m = synthetic("WaveNet", layer_arrays[i], counts[i], 10 + i);
    const std::vector<float> y = run(m, x, 64);
    EXPECT_GT(peak(y), 1e-3) << i;
    EXPECT_LT(error_vs_reference(m, x, y), -110.0) << "WaveNet " << i;
    EXPECT_EQ(y, run(m, x, static_cast<int>(x.size()))) << "WaveNet " << i;
  }
}

TEST(NamCpu, SyntheticLstmConvNetLinearMatchReference) {
  const std::vector<float> x = test_signal(3000, 7);
  const int H = 6;
  const long lstm_count =
      4L * H * (1 + H) + 4 * H + 2 * H + (4L * H * (2 * H) + 4 * H + 2 * H) + H + 1;
  const nam::Model lstm =
      synthetic("LSTM", R"({"num_layers": 2, "input_size": 1, "hidden_size": 6})", lstm_count, 21);
  const long cn = (4 * 1 * 2 + 4) + (4 * 4 * 2 + 4) + (4 * 4 * 2 + 4) + 4 + 1;
  const nam::Model convnet = synthetic(
      "ConvNet",
      R"({"channels": 4, "dilations": [1, 2, 8], "batchnorm": false, "activation": "Tanh"})", cn,
      22);
  const long cn_bn = (4 * 2 + 17) + (4 * 4 * 2 + 17) + 4 + 1;
  nam::Model convnet_bn = synthetic(
      "ConvNet", R"({"channels": 4, "dilations": [1, 3], "batchnorm": true, "activation": "ReLU"})",
      cn_bn, 23);
  // Batch norm variances and eps must be positive: rewrite them.
  for (long block : {0L, 4 * 2 + 17L}) {
    const long bn = block + (block == 0 ? 8 : 32);
    for (int o = 0; o < 4; ++o) convnet_bn.weights[bn + 4 + o] = 0.5f + 0.1f * o;
    convnet_bn.weights[bn + 16] = 1e-5f;
  }
  const nam::Model linear = synthetic("Linear", R"({"receptive_field": 33, "bias": true})", 34, 24);
  for (const nam::Model* m :
       std::vector<const nam::Model*>{&lstm, &convnet, &convnet_bn, &linear}) {
    const std::vector<float> y = run(*m, x, 64);
    EXPECT_GT(peak(y), 1e-3) << m->source;
    EXPECT_LT(error_vs_reference(*m, x, y), -110.0) << m->source;
    EXPECT_EQ(y, run(*m, x, static_cast<int>(x.size()))) << m->source;
  }
}

TEST(NamCpu, NormalizedScalesTheOutputByTheLoudness) {
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  const nam::Model m = nam::load(nam_fixture("wavenet.nam"));
  const nam::Model n = nam::normalized(m, -18.0);
  const std::vector<float> x = test_signal(2000, 9);
  const std::vector<float> a = run(m, x, 64), b = run(n, x, 64);
  const double gain = std::pow(10.0, (-18.0 - *m.loudness_db) / 20.0);
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(b[i], a[i] * gain, 1e-5) << i;
  EXPECT_THROW(nam::normalized(nam::load(nam_fixture("wavenet_a1_standard.nam"))), sigpu::Error);
}

TEST(NamCpu, BatchMatchesSingleInstances) {
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  const nam::Model m = nam::load(nam_fixture("wavenet.nam"));
  const nam::Model l = nam::load(nam_fixture("lstm.nam"));
  std::vector<const nam::Model*> models;
  for (int i = 0; i < 7; ++i) models.push_back(i % 2 ? &l : &m);
  nam::CpuBatch batch(models, {.max_frames = 64}, 3);
  std::vector<std::vector<float>> in, out(models.size(), std::vector<float>(640));
  for (std::size_t i = 0; i < models.size(); ++i) in.push_back(test_signal(640, 30 + i));
  for (int p = 0; p < 10; ++p) {
    std::vector<const float*> ip;
    std::vector<float*> op;
    for (std::size_t i = 0; i < models.size(); ++i) {
      ip.push_back(in[i].data() + p * 64);
      op.push_back(out[i].data() + p * 64);
    }
    batch.process(ip.data(), op.data(), 64);
  }
  for (std::size_t i = 0; i < models.size(); ++i)
    EXPECT_EQ(out[i], run(*models[i], in[i], 64)) << i;
}

TEST(NamCpu, BaselineInstructionSetMatchesReferenceToo) {
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  // The layer pass is built for SSE2 and for AVX2 + FMA; this machine runs the latter unless
  // told otherwise. Check the other build against the oracle as well.
  std::vector<float> x = di_or_skip();
  if (x.empty()) return;
  x.resize(24000);
  setenv("SIGPU_NAM_CPU", "baseline", 1);
  for (const std::string& name :
       {std::string("wavenet_a1_standard.nam"), std::string("wavenet.nam")}) {
    const nam::Model m = nam::load(nam_fixture(name));
    const std::vector<float> y = run(m, x, 64);
    EXPECT_LT(error_vs_reference(m, x, y), -110.0) << name;
    EXPECT_EQ(y, run(m, x, 37)) << name;
  }
  unsetenv("SIGPU_NAM_CPU");
}
