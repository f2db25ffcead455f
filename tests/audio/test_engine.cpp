// The engine's contract: setup/teardown return every byte, process() allocates nothing,
// updates land at period boundaries and a rejected one changes nothing, and the serial and
// thread-pool backends agree exactly.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <thread>

#include "util.hpp"

namespace audio = sigpu::audio;
using namespace sigpu::test::audio;

namespace {

// Counts every operator new of this process while armed, to prove process() allocates nothing.
std::atomic<bool> g_armed{false};
std::atomic<long> g_news{0};

}  // namespace

// GCC pairs inlined std::allocator calls with these and warns about malloc/free; they are a pair.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t n) {
  if (g_armed.load(std::memory_order_relaxed)) ++g_news;
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
#pragma GCC diagnostic pop

TEST(AudioEngine, SetupTeardownCyclesLeaveNoMemory) {
  const auto g = audio::Graph::load(source_path("examples/audio/sends.json"));
  const auto before = audio::memory_stats();
  for (auto backend : {sigpu::Backend::cpu, sigpu::Backend::cpu_parallel}) {
    audio::Engine e(g, {.backend = backend, .period = 64});
    for (int i = 0; i < 200; ++i) {
      e.setup();
      ASSERT_GT(audio::memory_stats().host_bytes, before.host_bytes);
      e.teardown();
      ASSERT_EQ(audio::memory_stats().host_bytes, before.host_bytes) << i;
      ASSERT_EQ(audio::memory_stats().host_blocks, before.host_blocks) << i;
    }
    e.setup();  // the destructor tears down
  }
  EXPECT_EQ(audio::memory_stats().host_bytes, before.host_bytes);
  EXPECT_EQ(audio::memory_stats().host_blocks, before.host_blocks);
}

TEST(AudioEngine, ProcessAllocatesNothing) {
  const auto g = audio::Graph::load(source_path("examples/audio/sends.json"));
  for (auto backend : {sigpu::Backend::cpu, sigpu::Backend::cpu_parallel}) {
    audio::Engine e(g, {.backend = backend, .period = 32, .threads = 2});
    e.setup();
    std::vector<std::vector<float>> in(4, std::vector<float>(32, 0.1f)),
        out(2, std::vector<float>(32));
    std::vector<const float*> ip;
    std::vector<float*> op;
    for (auto& b : in) ip.push_back(b.data());
    for (auto& b : out) op.push_back(b.data());
    e.process(ip.data(), op.data());
    e.update("master", "gain_db", -6);
    g_news = 0;
    g_armed = true;
    for (int i = 0; i < 100; ++i) e.process(ip.data(), op.data());
    g_armed = false;
    EXPECT_EQ(g_news.load(), 0) << sigpu::to_string(backend);
  }
}

TEST(AudioEngine, SerialAndParallelAgreeExactly) {
  const auto in = music(16, 20000, 2);
  for (const char* file : {"examples/audio/console.json", "examples/audio/sends.json"}) {
    const bool console = std::string(file).find("console") != std::string::npos;
    const auto g = audio::Graph::load(source_path(file),
                                      console ? audio::Variables{{"N", 16}} : audio::Variables{});
    Channels x(in.begin(), in.begin() + g.inputs());
    const auto a = run(g, x, {.backend = sigpu::Backend::cpu, .period = 64});
    const auto b = run(g, x, {.backend = sigpu::Backend::cpu_parallel, .period = 64, .threads = 3});
    EXPECT_EQ(a, b) << file;
  }
}

TEST(AudioEngine, RejectedUpdateLeavesTheGraphUntouched) {
  const auto g = audio::Graph::load(source_path("examples/audio/guitar.json"));
  const auto in = music(1, 9600, 4);
  const auto ref = run(g, in, {.backend = sigpu::Backend::cpu, .period = 96});
  audio::Engine e(g, {.backend = sigpu::Backend::cpu, .period = 96});
  e.setup();
  std::vector<float> y(96 * 2);
  float* out[2] = {y.data(), y.data() + 96};
  const auto bad = [&](const char* node, const char* param, double v, const char* want) {
    try {
      e.update(node, param, v);
      ADD_FAILURE() << node << " " << param;
    } catch (const sigpu::Error& err) {
      EXPECT_NE(std::string(err.what()).find(want), std::string::npos) << err.what();
    }
  };
  for (std::size_t p = 0; p * 96 < 9600; ++p) {
    if (p == 20) {
      bad("comp", "ratio", -3, "node 'comp' parameter 'ratio': -3 is out of range");
      bad("eq", "band.2.freq", 30000, "node 'eq' parameter 'band.2.freq'");
      bad("delay", "time_ms", 5000, "node 'delay' parameter 'time_ms'");
      bad("delay", "wobble", 1, "node 'delay' parameter 'wobble': unknown parameter");
      bad("nope", "gain_db", 1, "no node 'nope'");
    }
    const float* in0 = in[0].data() + p * 96;
    e.process(&in0, out);
    for (int c = 0; c < 2; ++c) {
      for (int i = 0; i < 96; ++i) ASSERT_EQ(y[c * 96 + i], ref[c][p * 96 + i]) << p;
    }
  }
}

TEST(AudioEngine, UpdateAppliesAtThePeriodBoundaryWithARamp) {
  const auto g = audio::Graph::parse(R"({"inputs": 1, "nodes": [
      {"id": "g", "type": "gain", "input": "in"}], "outputs": "g"})");
  audio::Engine e(g, {.backend = sigpu::Backend::cpu, .period = 100});
  e.setup();
  std::vector<float> x(100, 1.0f), y(100);
  const float* in = x.data();
  float* out = y.data();
  e.process(&in, &out);
  EXPECT_EQ(y[99], 1.0f);
  // From another thread, as a UI would.
  std::thread([&] { e.update("g", "gain_db", -20); }).join();
  e.process(&in, &out);
  for (int i = 0; i < 100; ++i) {
    const float want = 1.0f + (0.1f - 1.0f) * (float(i + 1) / 100.0f);
    EXPECT_NEAR(y[i], want, 1e-6) << i;  // the ramp: no jump
  }
  e.process(&in, &out);
  for (float v : y) EXPECT_FLOAT_EQ(v, 0.1f);
}

TEST(AudioEngine, MixerPanRouterDelay) {
  const auto g = audio::Graph::parse(R"({"inputs": 2, "nodes": [
      {"id": "r", "type": "router", "input": "in", "params": {"map": [1, 0, 1]}},
      {"id": "m", "type": "mixer", "input": "r", "params": {"matrix": [[1, 0.5, 0], [0, 0, -2]]}},
      {"id": "p", "type": "pan", "input": "m:0", "params": {"pan": -0.5}},
      {"id": "d", "type": "delay", "input": "m:1",
       "params": {"time_ms": 1, "feedback": 0.5, "mix": 1}},
      {"id": "down", "type": "mixer", "input": ["p", "d"], "params": {"outputs": 1}}],
    "outputs": ["p", "d", "down"]})");
  Channels in = music(2, 4800, 8);
  in[1].assign(4800, 0.0f);
  in[1][10] = 1.0f;  // an impulse into the delay path
  const auto out = run(g, in, {.backend = sigpu::Backend::cpu, .period = 32});
  const double theta = 0.25 * std::numbers::pi / 2;
  for (int i = 0; i < 4800; ++i) {
    const double m0 = double(in[1][i]) + 0.5 * in[0][i];
    ASSERT_NEAR(out[0][i], m0 * std::cos(theta), 1e-6) << i;
    ASSERT_NEAR(out[1][i], m0 * std::sin(theta), 1e-6) << i;
    // -2 x impulse, delayed 48 samples, then every 48 samples halved.
    const int k = i - 10;
    const double want = k >= 48 && k % 48 == 0 ? -2.0 * std::pow(0.5, k / 48 - 1) : 0.0;
    ASSERT_NEAR(out[2][i], want, 1e-6) << i;
    ASSERT_NEAR(out[3][i], double(out[0][i]) + out[1][i] + out[2][i], 1e-6) << i;
  }
}

TEST(AudioEvaluate, OffsetSearchAndLevels) {
  std::vector<float> a(1000), b(1000);
  for (int i = 0; i < 1000; ++i) a[i] = float(std::sin(i * 0.05));
  for (int i = 0; i < 1000; ++i) b[i] = i >= 7 ? a[i - 7] : 0.0f;
  const auto aligned = audio::compare(a, b, 20);
  EXPECT_EQ(aligned.offset, 7);
  EXPECT_EQ(aligned.max_abs_dbfs, -400);
  EXPECT_GT(audio::compare(a, b).max_abs_dbfs, -20);
  b = a;
  b[500] += 0.001f;
  const auto d = audio::compare(a, b);
  EXPECT_NEAR(d.max_abs_dbfs, -60, 0.01);
  EXPECT_NEAR(d.rmsd_dbfs, -60 - 30, 0.01);  // one sample in 1000: -30 dB more
}
