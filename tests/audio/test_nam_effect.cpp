// The nam effect (a wrapper of the nam module): against nam::Processor run directly with the
// gains applied, in periods of 32, 64 and 128 on both CPU backends, the errors for bad models,
// the guitar example, and the CUDA twin.
#include <gtest/gtest.h>

#ifdef SIGPU_HAVE_AUDIO_NAM
#include <algorithm>
#include <cmath>
#include <functional>

#include <sigpu/nam.hpp>

#include "nam/nam_fixtures.hpp"
#include "util.hpp"

namespace audio = sigpu::audio;
namespace nam = sigpu::nam;
using namespace sigpu::test::audio;

namespace {

constexpr std::size_t kFrames = 19200;  // 0.4 s, a whole number of periods of 32, 64, 128

audio::Graph amp_graph(int channels, const std::string& model, const std::string& extra = "") {
  return audio::Graph::parse("{\"inputs\": " + std::to_string(channels) +
                             ", \"nodes\": [{\"id\": \"amp\", \"type\": \"nam\", \"input\": "
                             "\"in\", \"params\": {\"model\": \"" +
                             model + "\"" + extra + "}}], \"outputs\": \"amp\"}");
}

/// Channel 0 the DI input from 1 s on (it starts with silence), channel 1 the music signal
/// (different, so a history shared between channels would show).
Channels inputs() {
  const auto di = sigpu::test::nam_di_input();
  std::vector<float> guitar(kFrames, 0.0f);
  for (std::size_t i = 0; i < kFrames && 48000 + i < di.size(); ++i) guitar[i] = di[48000 + i];
  return {guitar, music(1, kFrames, 7)[0]};
}

/// A one-node graph of the model (`extra`: more parameters) played on `backend` in periods of
/// 64; at sample 1280 the node's size is set to 0.2 through the engine's update path.
std::vector<float> play_with_size_change(const std::string& model, const std::string& extra,
                                         sigpu::Backend backend, const std::vector<float>& in) {
  audio::Engine e(amp_graph(1, model, extra), {.backend = backend, .period = 64});
  e.setup();
  std::vector<float> y(in.size());
  for (std::size_t t = 0; t + 64 <= in.size(); t += 64) {
    if (t == 1280) e.update("amp", "size", 0.2);
    const float* i = in.data() + t;
    float* o = y.data() + t;
    e.process(&i, &o);
  }
  return y;
}

}  // namespace

TEST(AudioNam, EqualsTheProcessorWithGainsInEveryPeriod) {
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  if (sigpu::test::nam_di_input().empty()) GTEST_SKIP() << "no libsndfile";
  const auto path = sigpu::test::nam_fixture("wavenet.nam").string();
  const auto in = inputs();
  const auto g = amp_graph(2, path, ", \"input_gain_db\": 6, \"output_gain_db\": -3.5");
  // The reference: one Processor per channel over the whole signal in one piece, the gains
  // applied in float as the effect documents.
  const nam::Model model = nam::load(path);
  const float gin = float(std::pow(10.0, 6 / 20.0)), gout = float(std::pow(10.0, -3.5 / 20.0));
  Channels want(2, std::vector<float>(kFrames));
  for (int c = 0; c < 2; ++c) {
    nam::Processor p(model, {.sample_rate = 48000, .max_frames = int(kFrames)});
    std::vector<float> x(kFrames);
    for (std::size_t i = 0; i < kFrames; ++i) x[i] = in[c][i] * gin;
    p.process(x.data(), want[c].data(), int(kFrames));
    for (auto& v : want[c]) v *= gout;
  }
  for (int c = 0; c < 2; ++c) {
    double energy = 0;
    for (float v : want[c]) energy += double(v) * v;
    ASSERT_GT(std::sqrt(energy / kFrames), 1e-2) << "channel " << c;
  }
  // Streaming is bit-identical in the nam module and the gains are the same float products,
  // so the effect must equal the reference exactly, whatever the period and backend.
  for (auto backend : {sigpu::Backend::cpu, sigpu::Backend::cpu_parallel}) {
    for (int period : {32, 64, 128}) {
      const auto got = run(g, in, {.backend = backend, .period = period, .threads = 2});
      for (int c = 0; c < 2; ++c) {
        EXPECT_EQ(got[c], want[c]) << "channel " << c << " period " << period;
      }
    }
  }
}

TEST(AudioNam, BadModelsNameNodeAndParameter) {
  const auto missing = error_of([] { amp_graph(1, "/nonexistent/amp.nam"); });
  EXPECT_NE(missing.find("node 'amp' parameter 'model'"), std::string::npos) << missing;
  EXPECT_NE(missing.find("/nonexistent/amp.nam"), std::string::npos) << missing;

  const auto absent = error_of([] {
    audio::Graph::parse(R"({"inputs": 1, "nodes": [{"id": "amp", "type": "nam",
        "input": "in", "params": {}}], "outputs": "amp"})");
  });
  EXPECT_NE(absent.find("node 'amp' parameter 'model'"), std::string::npos) << absent;

  const auto path = source_path("examples/audio/models/tiny-wavenet.nam");
  const auto gain = error_of([&] { amp_graph(1, path, ", \"input_gain_db\": 100"); });
  EXPECT_NE(gain.find("parameter 'input_gain_db'"), std::string::npos) << gain;

  // The model is a 48 kHz one: a 44.1 kHz engine must refuse it, naming both rates.
  const auto g = amp_graph(1, path);
  const auto rate = error_of([&] {
    audio::Engine e(g, {.backend = sigpu::Backend::cpu, .period = 64, .sample_rate = 44100});
  });
  EXPECT_NE(rate.find("node 'amp' parameter 'model'"), std::string::npos) << rate;
  EXPECT_NE(rate.find("48000"), std::string::npos) << rate;
  EXPECT_NE(rate.find("44100"), std::string::npos) << rate;
}

TEST(AudioNam, GuitarExampleRenders) {
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  if (sigpu::test::nam_di_input().empty()) GTEST_SKIP() << "no libsndfile";
  const auto g = audio::Graph::load(source_path("examples/audio/guitar-nam.json"));
  ASSERT_EQ(g.inputs(), 1);
  ASSERT_EQ(g.outputs(), 1);
  const Channels in{inputs()[0]};
  const auto out = run(g, in, {.backend = sigpu::Backend::cpu, .period = 128});
  double energy = 0;
  for (float v : out[0]) {
    ASSERT_TRUE(std::isfinite(v));
    energy += double(v) * v;
  }
  EXPECT_GT(std::sqrt(energy / kFrames), 1e-3);
}

TEST(AudioNamGpu, MatchesTheCpu) {
  if (sigpu::cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  const auto in = inputs();
  const auto g = amp_graph(2, sigpu::test::nam_fixture("wavenet_a1_standard.nam").string(),
                           ", \"input_gain_db\": 3, \"output_gain_db\": -2");
  const auto guitar = audio::Graph::load(source_path("examples/audio/guitar-nam.json"));
  for (int period : {32, 64, 128}) {
    EXPECT_LT(worst_dbfs(run(g, in, {.backend = sigpu::Backend::cpu, .period = period}),
                         run(g, in, {.backend = sigpu::Backend::cuda, .period = period})),
              -90)
        << period;
    const Channels mono{in[0]};
    EXPECT_LT(worst_dbfs(run(guitar, mono, {.backend = sigpu::Backend::cpu, .period = period}),
                         run(guitar, mono, {.backend = sigpu::Backend::cuda, .period = period})),
              -90)
        << period;
  }
}

// A slimmable model's `size` picks the network as nam::Processor::set_size does.
TEST(AudioNam, SizeParameterPicksTheSlimmableSize) {
  const auto path = sigpu::test::fixtures_dir() / "nam-a2" / "slimmable_container.nam";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " absent";
  const nam::Model model = nam::load(path);
  const Channels in = {music(1, 4800, 3)[0]};
  const auto want = [&](double size) {
    nam::Processor p(model, {.sample_rate = 48000, .max_frames = 4800});
    p.set_size(size);
    p.reset();
    std::vector<float> y(4800);
    p.process(in[0].data(), y.data(), 4800);
    return y;
  };
  const auto small = run(amp_graph(1, path.string(), ", \"size\": 0.2"), in,
                         {.backend = sigpu::Backend::cpu, .period = 64});
  const auto full =
      run(amp_graph(1, path.string()), in, {.backend = sigpu::Backend::cpu, .period = 64});
  EXPECT_EQ(small[0], want(0.2));
  EXPECT_EQ(full[0], want(1.0));
  EXPECT_NE(small[0], full[0]);
  // At run time: the Engine's update reaches the Processor, which crossfades.
  const auto y = play_with_size_change(path.string(), "", sigpu::Backend::cpu, in[0]);
  const auto lite = want(0.2);
  const auto whole = want(1.0);
  EXPECT_TRUE(std::equal(y.begin(), y.begin() + 1280, whole.begin()));
  EXPECT_TRUE(std::equal(y.begin() + 1280 + nam::Processor::kSizeCrossfadeFrames, y.end(),
                         lite.begin() + 1280 + nam::Processor::kSizeCrossfadeFrames));
  audio::Engine e(amp_graph(1, path.string()), {.backend = sigpu::Backend::cpu, .period = 64});
  e.setup();
  EXPECT_THROW(e.update("amp", "size", 1.5), sigpu::Error);
  const auto bad = error_of([&] { amp_graph(1, path.string(), ", \"size\": 2"); });
  EXPECT_NE(bad.find("node 'amp' parameter 'size'"), std::string::npos) << bad;
}

// The same on the GPU: the configured size and a change while running (crossfaded at a period
// boundary) give the CPU engine's output within -90 dBFS.
TEST(AudioNamGpu, SizeParameterAndItsChangeMatchTheCpu) {
  if (sigpu::cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  for (const char* name : {"slimmable_container.nam", "slimmable_wavenet.nam", "A2.nam"}) {
    const auto path = sigpu::test::fixtures_dir() / "nam-a2" / name;
    if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " absent";
    const Channels in = {music(1, 4800, 3)[0]};
    const auto play = [&](sigpu::Backend backend) {
      return Channels{play_with_size_change(path.string(), ", \"size\": 0.6", backend, in[0])};
    };
    EXPECT_LT(worst_dbfs(play(sigpu::Backend::cpu), play(sigpu::Backend::cuda)), -90) << name;
  }
}

#endif
