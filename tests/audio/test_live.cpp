// LiveEngine (the engine behind `sigpu audio serve`): structural edits swapped in while another
// thread plays a periodic signal leave the output as it was (the same samples one loop
// earlier), invalid edits are refused and keep the graph, and the meters (graph inputs and
// outputs, every node's bus) and timing count.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <numbers>
#include <thread>

#include "audio/live.hpp"
#include "util.hpp"

namespace audio = sigpu::audio;
using namespace sigpu::test::audio;

namespace {

constexpr int kPeriod = 64, kLoop = 4800;  // 0.1 s at 48 kHz

std::string chain(bool extra) {
  return std::string(R"({"inputs": 1, "outputs": "pan", "nodes": [
    {"id": "tone", "type": "eq", "input": "in",
     "params": {"bands": [{"type": "peak", "freq": 1000, "gain_db": 6, "q": 0.7}]}},
    {"id": "level", "type": "gain", "input": "tone", "params": {"gain_db": -3}},)") +
         (extra ? R"({"id": "extra", "type": "gain", "input": "level"},
    {"id": "pan", "type": "pan", "input": "extra", "params": {"pan": 0.3}}]})"
                : R"({"id": "pan", "type": "pan", "input": "level", "params": {"pan": 0.3}}]})");
}

TEST(AudioLive, SwapsKeepThePeriodicOutputAndRefuseBadEdits) {
  audio::LiveEngine live(audio::Graph::parse(chain(false)),
                         {.backend = sigpu::Backend::cpu, .period = kPeriod});
  // The input loops kLoop frames; the output is recorded until the edits are done.
  std::vector<float> loop(kLoop);
  for (int i = 0; i < kLoop; ++i) {
    loop[i] = 0.4f * std::sin(2 * std::numbers::pi * 440 * i / 48000.0) +
              0.2f * std::sin(2 * std::numbers::pi * 3170.5 * i / 48000.0);
  }
  const std::size_t capacity = std::size_t(kPeriod) * 20000;
  std::vector<float> left(capacity), right(capacity);
  std::atomic<bool> stop{false};
  std::atomic<std::size_t> recorded{0};
  std::thread audio_thread([&] {
    std::vector<float> in(kPeriod);
    const float* ip[1] = {in.data()};
    std::size_t at = 0, pos = 0;
    while (!stop.load() && at + kPeriod <= capacity) {
      for (int i = 0; i < kPeriod; ++i, pos = (pos + 1) % kLoop) in[i] = loop[pos];
      float* op[2] = {left.data() + at, right.data() + at};
      live.process(ip, op);
      at += kPeriod;
      recorded.store(at);
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  });
  while (recorded.load() < 3 * kLoop) std::this_thread::yield();
  live.replace(audio::Graph::parse(chain(true)));
  // Refused: a reference to an unknown node, a different output count, a bad value.
  const std::string unknown = error_of([&] {
    auto text = chain(false);
    text.replace(text.find(R"("input": "level", "params": {"pan")"), 16, R"("input": "nope")");
    live.replace(audio::Graph::parse(text));
  });
  EXPECT_NE(unknown.find("node 'pan' port 'input': 'nope' refers to an unknown node"),
            std::string::npos)
      << unknown;
  const std::string outputs = error_of([&] {
    auto text = chain(false);
    text.replace(text.find(R"("outputs": "pan")"), 16, R"("outputs": "pan:0")");
    live.replace(audio::Graph::parse(text));
  });
  EXPECT_NE(outputs.find("1 outputs, but the running graph has"), std::string::npos) << outputs;
  const std::string value = error_of([&] { live.update("extra", "gain_db", 99); });
  EXPECT_NE(value.find("node 'extra' parameter 'gain_db': 99 is out of range"), std::string::npos)
      << value;
  live.replace(audio::Graph::parse(chain(false)));
  const std::size_t edits_done = recorded.load();
  while (recorded.load() < edits_done + 2 * kLoop) std::this_thread::yield();
  stop = true;
  audio_thread.join();

  // Every sample after the start-up equals the one a loop earlier: the swaps are inaudible.
  const std::size_t n = recorded.load();
  double worst = 0;
  for (std::size_t i = 2 * kLoop; i < n; ++i) {
    worst = std::max({worst, double(std::abs(left[i] - left[i - kLoop])),
                      double(std::abs(right[i] - right[i - kLoop]))});
  }
  EXPECT_LT(20 * std::log10(worst + 1e-30), -100) << "over " << n << " frames";
  ASSERT_GT(edits_done, 2u * kLoop + 2 * 48 * kPeriod);  // both swaps inside the checked span

  const audio::LiveTiming t = live.timing();
  EXPECT_EQ(t.periods, n / kPeriod);
  EXPECT_GT(t.max_us, 0);
  EXPECT_GE(t.quantile_us(0.999), t.quantile_us(0.99));
  const audio::LiveLevels l = live.levels();
  ASSERT_EQ(l.out_rms.size(), 2u);
  EXPECT_GT(l.out_peak[0], 0.1f);
  EXPECT_GT(l.in_rms[0], 0.2f);
  // The running graph's buses (the last swap's), metered whatever the options said.
  ASSERT_EQ(l.buses.size(), 3u);
  EXPECT_EQ(l.buses[1].node, "level");
  EXPECT_EQ(l.buses[2].rms.size(), 2u);
  EXPECT_GT(l.buses[1].peak[0], l.buses[1].rms[0]);
  EXPECT_GT(l.buses[1].rms[0], 0.1f);
}

}  // namespace
