// The convolution effect (a wrapper of the convolution module): against direct time-domain
// convolution in float64, its routings (per channel, mono to stereo, true stereo), wet/dry, the
// CUDA twin, and the errors for bad IRs.
#include <gtest/gtest.h>

#if defined(SIGPU_HAVE_AUDIO_CONVOLUTION) && defined(SIGPU_HAVE_SNDFILE)
#include <sndfile.h>

#include <filesystem>
#include <functional>

#include "support/rng.hpp"
#include "util.hpp"

namespace audio = sigpu::audio;
using namespace sigpu::test::audio;
namespace fs = std::filesystem;

namespace {

/// The running test's own folder: ctest runs tests as parallel processes, and two of them that
/// write an IR of the same name with different taps read each other's file.
fs::path data_dir() {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path d = fs::path(SIGPU_BINARY_DIR) / "test-data" / "audio" / "convolution" /
                     (std::string(test->test_suite_name()) + "." + test->name());
  fs::create_directories(d);
  return d;
}

/// Decaying noise, `channels` different IRs, as a float WAV (exact samples).
Channels write_ir(const std::string& name, int channels, int taps, int rate = 48000) {
  Channels irs(channels, std::vector<float>(taps));
  sigpu::test::Rng rng{std::uint64_t(channels * 1000 + taps)};
  for (int c = 0; c < channels; ++c) {
    for (int i = 0; i < taps; ++i)
      irs[c][i] = float(rng.symmetric() * std::exp(-4.0 * i / taps) * 0.3);
  }
  SF_INFO info{};
  info.samplerate = rate;
  info.channels = channels;
  info.format = SF_FORMAT_WAV | SF_FORMAT_FLOAT;
  SNDFILE* f = sf_open((data_dir() / name).c_str(), SFM_WRITE, &info);
  std::vector<float> inter(std::size_t(taps) * channels);
  for (int i = 0; i < taps; ++i) {
    for (int c = 0; c < channels; ++c) inter[std::size_t(i) * channels + c] = irs[c][i];
  }
  sf_writef_float(f, inter.data(), taps);
  sf_close(f);
  return irs;
}

std::vector<double> direct(const std::vector<float>& x, const std::vector<float>& h) {
  std::vector<double> y(x.size(), 0.0);
  for (std::size_t n = 0; n < x.size(); ++n) {
    const std::size_t k_end = std::min(h.size(), n + 1);
    double acc = 0;
    for (std::size_t k = 0; k < k_end; ++k) acc += double(h[k]) * x[n - k];
    y[n] = acc;
  }
  return y;
}

audio::Graph graph(int inputs, const std::string& ir, const std::string& extra = "") {
  return audio::Graph::parse(
      "{\"inputs\": " + std::to_string(inputs) +
      ", \"nodes\": [{\"id\": \"conv\", \"type\": \"convolution\", \"input\": \"in\", "
      "\"params\": {\"ir\": \"" +
      (data_dir() / ir).string() + "\"" + extra + "}}], \"outputs\": \"conv\"}");
}

}  // namespace

TEST(AudioConvolution, RoutingsMatchDirectConvolution) {
  const auto mono = write_ir("ir-mono.wav", 1, 3000);
  const auto stereo = write_ir("ir-stereo.wav", 2, 2500);
  const auto quad = write_ir("ir-true-stereo.wav", 4, 2000);
  const auto in = music(2, 9600, 17);
  for (auto backend : {sigpu::Backend::cpu, sigpu::Backend::cpu_parallel}) {
    const audio::EngineOptions o{.backend = backend, .period = 64};
    auto out = run(graph(2, "ir-mono.wav"), in, o);
    for (int c = 0; c < 2; ++c) {
      const auto ref = direct(in[c], mono[0]);
      EXPECT_LT(audio::compare(std::vector<float>(ref.begin(), ref.end()), out[c]).max_abs_dbfs,
                -100);
    }
    out = run(graph(1, "ir-stereo.wav"), {in[0]}, o);
    for (int c = 0; c < 2; ++c) {
      const auto ref = direct(in[0], stereo[c]);
      EXPECT_LT(audio::compare(std::vector<float>(ref.begin(), ref.end()), out[c]).max_abs_dbfs,
                -100);
    }
    out = run(graph(2, "ir-true-stereo.wav"), in, o);
    for (int c = 0; c < 2; ++c) {
      const auto a = direct(in[0], quad[c]), b = direct(in[1], quad[2 + c]);
      std::vector<float> ref(a.size());
      for (std::size_t i = 0; i < a.size(); ++i) ref[i] = float(a[i] + b[i]);
      EXPECT_LT(audio::compare(ref, out[c]).max_abs_dbfs, -100) << c;
    }
  }
}

TEST(AudioConvolution, WetAndDry) {
  const auto ir = write_ir("ir-mono.wav", 1, 3000);
  const auto in = music(1, 4800, 18);
  const auto out = run(graph(1, "ir-mono.wav", ", \"wet\": 0.5, \"dry\": 0.8"), in,
                       {.backend = sigpu::Backend::cpu, .period = 128});
  const auto wet = direct(in[0], ir[0]);
  std::vector<float> ref(wet.size());
  for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = float(0.5 * wet[i] + 0.8 * in[0][i]);
  EXPECT_LT(audio::compare(ref, out[0]).max_abs_dbfs, -100);
}

TEST(AudioConvolution, BadImpulseResponsesAreNamed) {
  write_ir("ir-44k.wav", 1, 100, 44100);
  write_ir("ir-stereo.wav", 2, 100);
  auto e = error_of([] { audio::Engine x(graph(1, "ir-44k.wav"), {.sample_rate = 48000}); });
  EXPECT_NE(e.find("node 'conv' parameter 'ir'"), std::string::npos) << e;
  EXPECT_NE(e.find("is at 44100 Hz but the graph runs at 48000 Hz"), std::string::npos) << e;
  e = error_of([] { graph(1, "no-such-ir.wav"); });
  EXPECT_NE(e.find("node 'conv' parameter 'ir': cannot read"), std::string::npos) << e;
  {
    SF_INFO info{.samplerate = 48000, .channels = 1, .format = SF_FORMAT_WAV | SF_FORMAT_PCM_16};
    sf_close(sf_open((data_dir() / "ir-empty.wav").c_str(), SFM_WRITE, &info));
  }
  e = error_of([] { graph(1, "ir-empty.wav"); });
  EXPECT_NE(e.find("node 'conv' parameter 'ir'"), std::string::npos) << e;
  e = error_of([] { graph(3, "ir-stereo.wav"); });
  EXPECT_NE(e.find("node 'conv' port 'input': 3 channels routed to an IR of 2"), std::string::npos)
      << e;
  e = error_of([] { graph(1, "ir-stereo.wav", ", \"dry\": 1"); });
  EXPECT_NE(e.find("node 'conv' parameter 'dry'"), std::string::npos) << e;
  e = error_of([] { audio::Engine x(graph(1, "ir-stereo.wav"), {.period = 100}); });
  EXPECT_NE(e.find("power-of-two period"), std::string::npos) << e;
}

TEST(AudioConvolution, ReverbExampleRenders) {
  const auto g = audio::Graph::load(source_path("examples/audio/reverb.json"));
  auto in = impulses(2, 48000, 24000);
  const auto out = run(g, in, {.backend = sigpu::Backend::cpu, .period = 128});
  // The tail after the first impulse (at sample 0 and 1) carries the room.
  double tail = 0;
  for (int i = 2000; i < 20000; ++i) tail += double(out[0][i]) * out[0][i];
  EXPECT_GT(tail, 1e-6);
}

TEST(AudioConvolutionGpu, MatchesTheCpu) {
  if (sigpu::cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  write_ir("ir-true-stereo.wav", 4, 2000);
  const auto g = audio::Graph::load(source_path("examples/audio/reverb.json"));
  const auto in = music(2, 48000, 19);
  for (int period : {32, 128}) {
    const auto cpu = run(g, in, {.backend = sigpu::Backend::cpu, .period = period});
    const auto gpu = run(g, in, {.backend = sigpu::Backend::cuda, .period = period});
    EXPECT_LT(worst_dbfs(cpu, gpu), -100) << period;
    const auto ts = graph(2, "ir-true-stereo.wav");
    EXPECT_LT(worst_dbfs(run(ts, in, {.backend = sigpu::Backend::cpu, .period = period}),
                         run(ts, in, {.backend = sigpu::Backend::cuda, .period = period})),
              -100);
  }
}
#endif
