// Bus meters (EngineOptions::meters, Engine::meters()): sines of known amplitudes through gain,
// pan, mixer and router nodes, each node's peak and RMS per channel against the same nodes
// computed here in double precision from the effects' documented laws; the CUDA backend against
// those values and against its CPU twin (tests named *Gpu*, label gpu).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>

#include "support/twin.hpp"
#include "util.hpp"

namespace audio = sigpu::audio;
namespace twin = sigpu::test::twin;
using namespace sigpu::test::audio;
using sigpu::Backend;

namespace {

constexpr int kPeriod = 256;
constexpr double kRate = 48000;
constexpr int kWide = 24;  // the router's channels: with the rest, enough for the pool to split

// in:0 (level, pan, sum) and in:1 with in:0 alternately (wide, quiet).
std::string graph_text() {
  std::string map;
  for (int c = 0; c < kWide; ++c) map += (c ? ", " : "") + std::to_string(c % 3 == 0 ? 1 : 0);
  return R"({"inputs": 2, "outputs": ["sum", "quiet:5"], "nodes": [
    {"id": "level", "type": "gain", "input": "in:0", "params": {"gain_db": -6}},
    {"id": "pan", "type": "pan", "input": "level", "params": {"pan": 0.4}},
    {"id": "sum", "type": "mixer", "input": "pan", "params": {"outputs": 1}},
    {"id": "wide", "type": "router", "input": "in", "params": {"map": [)" +
         map + R"(]}},
    {"id": "quiet", "type": "gain", "input": "wide", "params": {"gain_db": -20}}]})";
}

/// Two sines: amplitude a0 at 375 Hz and a1 at 1010 Hz (not a whole number of cycles per period).
Channels sines(std::size_t frames, double a0, double a1, std::size_t start = 0) {
  Channels x(2, std::vector<float>(frames));
  for (std::size_t i = 0; i < frames; ++i) {
    const double t = double(start + i) / kRate;
    x[0][i] = float(a0 * std::sin(2 * std::numbers::pi * 375 * t));
    x[1][i] = float(a1 * std::sin(2 * std::numbers::pi * 1010 * t));
  }
  return x;
}

/// Every node's output channels as the graph defines them, in double precision.
std::map<std::string, Channels> model(const Channels& x) {
  const double level = std::pow(10.0, -6 / 20.0), quiet = std::pow(10.0, -20 / 20.0);
  const double theta = (0.4 + 1) * std::numbers::pi / 4;  // constant-power pan law
  const std::size_t n = x[0].size();
  std::map<std::string, Channels> m;
  m["level"].assign(1, std::vector<float>(n));
  m["pan"].assign(2, std::vector<float>(n));
  m["sum"].assign(1, std::vector<float>(n));
  m["wide"].assign(kWide, std::vector<float>(n));
  m["quiet"].assign(kWide, std::vector<float>(n));
  for (std::size_t i = 0; i < n; ++i) {
    const double y = x[0][i] * level;
    m["level"][0][i] = float(y);
    m["pan"][0][i] = float(y * std::cos(theta));
    m["pan"][1][i] = float(y * std::sin(theta));
    m["sum"][0][i] = float(y * std::cos(theta) + y * std::sin(theta));
    for (int c = 0; c < kWide; ++c) {
      const double w = x[c % 3 == 0 ? 1 : 0][i];
      m["wide"][c][i] = float(w);
      m["quiet"][c][i] = float(w * quiet);
    }
  }
  return m;
}

double peak_of(const std::vector<float>& v) {
  double p = 0;
  for (float s : v) p = std::max(p, std::abs(double(s)));
  return p;
}
double rms_of(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += double(x) * x;
  return std::sqrt(s / double(v.size()));
}

/// Runs x (whole periods of e) through e.
void play(audio::Engine& e, const Channels& x) {
  const std::size_t n = e.period();
  Channels in(2, std::vector<float>(n)), out(e.outputs(), std::vector<float>(n));
  const float* ip[2] = {in[0].data(), in[1].data()};
  std::vector<float*> op;
  for (auto& c : out) op.push_back(c.data());
  for (std::size_t at = 0; at < x[0].size(); at += n) {
    for (int c = 0; c < 2; ++c) std::copy_n(x[c].begin() + at, n, in[c].begin());
    e.process(ip, op.data());
  }
}

/// The meters after x, against the model of x: every node, every channel, within 1e-5 of full
/// scale (float against double).
void expect_meters(const std::vector<audio::BusMeter>& got, const Channels& x,
                   const std::string& what) {
  const auto want = model(x);
  ASSERT_EQ(got.size(), want.size()) << what;
  const std::vector<std::string> order = {"level", "pan", "sum", "wide", "quiet"};
  for (std::size_t k = 0; k < got.size(); ++k) {
    const auto& m = got[k];
    EXPECT_EQ(m.node, order[k]) << what;
    const Channels& y = want.at(order[k]);
    ASSERT_EQ(m.peak.size(), y.size()) << what << " " << m.node;
    ASSERT_EQ(m.rms.size(), y.size()) << what << " " << m.node;
    for (std::size_t c = 0; c < y.size(); ++c) {
      SCOPED_TRACE(what + " node " + m.node + " channel " + std::to_string(c));
      EXPECT_NEAR(m.peak[c], peak_of(y[c]), 1e-5);
      EXPECT_NEAR(m.rms[c], rms_of(y[c]), 1e-5);
    }
  }
}

void check_known_levels(Backend backend) {
  audio::Engine e(
      audio::Graph::parse(graph_text()),
      {.backend = backend, .period = kPeriod, .sample_rate = kRate, .threads = 2, .meters = true});
  e.setup();
  const auto loud = sines(10 * kPeriod, 0.5, 0.8);
  play(e, loud);
  expect_meters(e.meters(), loud, "loud");
  // Read again at once: a new window, nothing measured yet.
  for (const auto& m : e.meters()) {
    for (std::size_t c = 0; c < m.peak.size(); ++c) {
      EXPECT_EQ(m.peak[c], 0) << m.node;
      EXPECT_EQ(m.rms[c], 0) << m.node;
    }
  }
  // Quieter: the loud window's peaks are gone.
  const auto soft = sines(3 * kPeriod, 0.1, 0.3, loud[0].size());
  play(e, soft);
  expect_meters(e.meters(), soft, "soft");
}

bool have_gpu() {
  return !sigpu::cuda_devices().empty();
}

}  // namespace

TEST(AudioMeters, EveryBusOfKnownSinesSerial) {
  check_known_levels(Backend::cpu);
}

TEST(AudioMeters, EveryBusOfKnownSinesParallel) {
  check_known_levels(Backend::cpu_parallel);
}

TEST(AudioMeters, RefusedWithoutMetersOrSetup) {
  const auto g = audio::Graph::parse(graph_text());
  audio::Engine off(g, {.backend = Backend::cpu, .period = kPeriod});
  off.setup();
  EXPECT_NE(error_of([&] { off.meters(); }).find("needs EngineOptions::meters"), std::string::npos);
  audio::Engine early(g, {.backend = Backend::cpu, .period = kPeriod, .meters = true});
  EXPECT_NE(error_of([&] { early.meters(); }).find("before setup()"), std::string::npos);
}

TEST(AudioMetersGpu, EveryBusOfKnownSines) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  check_known_levels(Backend::cuda);
}

// The GPU's meter node against the CPU runner's meters on music-like input, every bus channel.
TEST(AudioMetersGpu, MatchTheCpuTwin) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const auto g = audio::Graph::parse(graph_text());
  for (std::uint64_t seed : twin::seeds({1, 2})) {
    for (int period : {32, 256, 1000}) {
      SCOPED_TRACE(twin::label("seed", seed, "period", period));
      const Channels x = music(2, std::size_t(period) * 40, seed);
      std::vector<float> peak[2], rms[2];
      for (int b = 0; b < 2; ++b) {
        audio::Engine e(
            g, {.backend = b ? Backend::cuda : Backend::cpu, .period = period, .meters = true});
        e.setup();
        play(e, x);
        for (const auto& m : e.meters()) {
          peak[b].insert(peak[b].end(), m.peak.begin(), m.peak.end());
          rms[b].insert(rms[b].end(), m.rms.begin(), m.rms.end());
        }
      }
      // The node outputs agree below -100 dBFS (test_gpu.cpp); the sums differ in order only.
      EXPECT_TRUE(twin::equal(peak[0], peak[1], 1e-5));
      EXPECT_TRUE(twin::equal(rms[0], rms[1], 1e-5));
    }
  }
}

// Meters are one kernel node more in the period's CUDA graph, and none without them.
TEST(AudioMetersGpu, AreOneKernelNode) {
  if (!have_gpu()) GTEST_SKIP() << "no CUDA device";
  const auto g = audio::Graph::parse(graph_text());
  audio::Engine off(g, {.backend = Backend::cuda, .period = kPeriod});
  audio::Engine on(g, {.backend = Backend::cuda, .period = kPeriod, .meters = true});
  off.setup();
  on.setup();
  EXPECT_EQ(on.kernels_per_period(), off.kernels_per_period() + 1);
}
