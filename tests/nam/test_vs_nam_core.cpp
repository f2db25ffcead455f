// The CPU reference against NeuralAmpModelerCore's own render of every fixture model (and of
// each size of the slimmable ones), on the DI input and on a music-like input. The renders are
// in tests/nam/nam_core_render/ (README.md there says how they were made).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sigpu/nam.hpp>

#include "nam/nam_fixtures.hpp"

namespace nam = sigpu::nam;

namespace {

// The part of the DI render stored: 0.25 s from where the guitar starts (1 s in).
constexpr std::size_t kDiFrom = 48000, kDiFrames = 12000;
constexpr double kTolerance = 2e-5;

struct Case {
  const char* folder;
  const char* model;
  double size;  // < 0: the model's default (its largest)
};

const Case kCases[] = {
    {"nam", "lstm", -1},
    {"nam", "wavenet", -1},
    {"nam", "wavenet_a1_standard", -1},
    {"nam-a2", "A2", -1},
    {"nam-a2", "A2", 0.25},
    {"nam-a2", "slimmable_container", -1},
    {"nam-a2", "slimmable_container", 0.1},
    {"nam-a2", "slimmable_container", 0.5},
    {"nam-a2", "slimmable_wavenet", -1},
    {"nam-a2", "slimmable_wavenet", 0.1},
    {"nam-a2", "slimmable_wavenet", 0.5},
    {"nam-a2", "wavenet_a2_max", -1},
    {"nam-a2", "wavenet_condition_dsp", -1},
};

std::string render_name(const Case& c, const char* input) {
  std::string n = c.model;
  if (c.size >= 0) {
    std::ostringstream s;
    s << ".slim" << c.size;
    n += s.str();
  }
  return n + "." + input + ".f32";
}

std::vector<float> read_render(const std::string& name) {
  std::ifstream f(std::string(SIGPU_SOURCE_DIR) + "/tests/nam/nam_core_render/" + name,
                  std::ios::binary);
  std::vector<float> v;
  float x;
  while (f.read(reinterpret_cast<char*>(&x), sizeof x)) v.push_back(x);
  return v;
}

// NAM core's render: blocks of 64 after a reset (which pre-warms).
std::vector<float> run(const nam::Model& m, double size, const std::vector<float>& x) {
  nam::Processor p(m, {.sample_rate = m.sample_rate, .max_frames = 64});
  if (size >= 0) {
    p.set_size(size);
    p.reset();
  }
  std::vector<float> y(x.size());
  for (std::size_t at = 0; at < x.size(); at += 64)
    p.process(x.data() + at, y.data() + at,
              static_cast<int>(std::min<std::size_t>(64, x.size() - at)));
  return y;
}

double max_abs_diff(const std::vector<float>& y, std::size_t from, const std::vector<float>& ref) {
  double e = 0;
  for (std::size_t i = 0; i < ref.size(); ++i)
    e = std::max(e, std::abs(static_cast<double>(y[from + i]) - ref[i]));
  return e;
}

}  // namespace

TEST(NamVsNamCore, EveryFixtureWithinTwoHundredThousandthsOnDiAndMusic) {
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  std::vector<float> di = sigpu::test::nam_di_input();
  ASSERT_GE(di.size(), kDiFrom + kDiFrames) << "input.wav unreadable (libsndfile missing?)";
  di.resize(kDiFrom + kDiFrames);  // what follows does not change the part compared
  std::vector<float> music = sigpu::test::nam_music_input();
  for (const Case& c : kCases) {
    const auto path = sigpu::test::fixtures_dir() / c.folder / (std::string(c.model) + ".nam");
    if (!std::filesystem::exists(path)) {  // a fixtures folder without nam-a2/, say
      std::printf("  %s absent: not compared\n", path.string().c_str());
      continue;
    }
    const nam::Model m = nam::load(path);
    for (const auto& [input, x, from, frames] :
         {std::tuple{"di", &di, kDiFrom, kDiFrames},
          std::tuple{"music", &music, std::size_t{0}, music.size()}}) {
      const std::vector<float> ref = read_render(render_name(c, input));
      ASSERT_EQ(ref.size(), frames) << render_name(c, input);
      const double e = max_abs_diff(run(m, c.size, *x), from, ref);
      EXPECT_LE(e, kTolerance) << render_name(c, input);
      std::printf("  %-36s max |sigpu - NAM core| %.2e\n", render_name(c, input).c_str(), e);
    }
  }
}

// A size change while running crossfades between two warm networks: no step larger than the
// signal's own, and the new size's output once the fade is over.
TEST(NamVsNamCore, SizeChangeWhileRunningCrossfades) {
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  const auto path = sigpu::test::fixtures_dir() / "nam-a2" / "A2.nam";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " missing";
  const nam::Model m = nam::load(path);
  ASSERT_EQ(m.sizes.size(), 2u);
  EXPECT_EQ(m.size_index(0.25), 0);
  EXPECT_EQ(m.size_index(0.5), 1);
  const std::vector<float> x = sigpu::test::nam_music_input();
  const std::vector<float> full = run(m, 1.0, x), lite = run(m, 0.25, x);
  nam::Processor p(m, {.sample_rate = m.sample_rate, .max_frames = 64});
  std::vector<float> y(x.size());
  const std::size_t at = 3200;
  for (std::size_t t = 0; t < x.size(); t += 64) {
    if (t == at) p.set_size(0.25);
    p.process(x.data() + t, y.data() + t,
              static_cast<int>(std::min<std::size_t>(64, x.size() - t)));
  }
  double before = 0, steady = 0, jump = 0, signal_step = 0;
  for (std::size_t t = 1; t < x.size(); ++t) {
    if (t < at) before = std::max(before, static_cast<double>(std::abs(y[t] - full[t])));
    if (t >= at + nam::Processor::kSizeCrossfadeFrames)
      steady = std::max(steady, static_cast<double>(std::abs(y[t] - lite[t])));
    jump = std::max(jump, static_cast<double>(std::abs(y[t] - y[t - 1])));
    signal_step = std::max({signal_step, static_cast<double>(std::abs(full[t] - full[t - 1])),
                            static_cast<double>(std::abs(lite[t] - lite[t - 1]))});
  }
  EXPECT_EQ(before, 0.0);
  EXPECT_EQ(steady, 0.0);
  EXPECT_LE(jump, signal_step * 1.01);
}
