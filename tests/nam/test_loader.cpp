// The .nam loader: the fixtures' facts, and a clear error naming the file and the field for
// every kind of bad input the issue lists.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include <sigpu/nam.hpp>

#include "nam/nam_fixtures.hpp"

namespace nam = sigpu::nam;
using sigpu::test::nam_fixture;

namespace {

std::string read_text(const std::string& name) {
  std::ifstream f(nam_fixture(name));
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The message parse() throws for `text`, or "" when it loads.
std::string load_error(const std::string& text) {
  try {
    nam::parse(text, "bad.nam");
  } catch (const sigpu::Error& e) {
    return e.what();
  }
  return "";
}

std::string replace_once(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

}  // namespace

TEST(NamLoader, SmallWaveNet) {
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  const nam::Model m = nam::load(nam_fixture("wavenet.nam"));
  EXPECT_EQ(m.architecture, nam::Architecture::wavenet);
  EXPECT_EQ(m.version, "0.5.4");
  ASSERT_EQ(m.wavenet.layer_arrays.size(), 2u);
  EXPECT_EQ(m.wavenet.layer_arrays[0].channels, 3);
  EXPECT_EQ(m.wavenet.layer_arrays[0].head_size, 2);
  EXPECT_EQ(m.wavenet.layer_arrays[1].dilations, std::vector<int>{8});
  EXPECT_TRUE(m.wavenet.layer_arrays[1].head_bias);
  EXPECT_EQ(m.weights.size(), 131u);
  EXPECT_FLOAT_EQ(m.wavenet.head_scale, 0.02f);
  EXPECT_TRUE(m.sample_rate_in_file);
  EXPECT_EQ(m.sample_rate, 48000);
  ASSERT_TRUE(m.loudness_db.has_value());
  EXPECT_NEAR(*m.loudness_db, -20.02, 0.01);
  EXPECT_EQ(m.receptive_field(), 2 * (1 + 2) + 2 * 8);
  EXPECT_EQ(m.prewarm_samples(), 1 + 22);
}

TEST(NamLoader, StandardA1WaveNet) {
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  const nam::Model m = nam::load(nam_fixture("wavenet_a1_standard.nam"));
  EXPECT_EQ(m.weights.size(), 13802u);
  EXPECT_FALSE(m.sample_rate_in_file);  // version 0.5.0: no sample_rate, 48 kHz assumed
  EXPECT_EQ(m.sample_rate, 48000);
  EXPECT_EQ(m.prewarm_samples(), 1 + 2 * 2 * 1023);
  EXPECT_FALSE(m.loudness_db.has_value());
}

TEST(NamLoader, Lstm) {
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  const nam::Model m = nam::load(nam_fixture("lstm.nam"));
  EXPECT_EQ(m.architecture, nam::Architecture::lstm);
  EXPECT_EQ(m.lstm.num_layers, 1);
  EXPECT_EQ(m.lstm.hidden_size, 3);
  EXPECT_EQ(m.weights.size(), 70u);
  EXPECT_EQ(m.prewarm_samples(), 24000);  // half a second at 48 kHz
}

TEST(NamLoader, MissingFile) {
  try {
    nam::load(nam_fixture("no-such-model.nam"));
    FAIL() << "loaded a missing file";
  } catch (const sigpu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no-such-model.nam: cannot open"), std::string::npos)
        << e.what();
  }
}

TEST(NamLoader, TruncatedFile) {
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  const std::string text = read_text("wavenet_a1_standard.nam");
  const std::string e = load_error(text.substr(0, text.size() / 2));
  EXPECT_NE(e.find("bad.nam: invalid JSON at byte"), std::string::npos) << e;
  EXPECT_NE(e.find("(in weights["), std::string::npos) << e;
}

TEST(NamLoader, UnknownArchitecture) {
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  const std::string e =
      load_error(replace_once(read_text("wavenet.nam"), "\"WaveNet\"", "\"Transformer\""));
  EXPECT_NE(e.find("bad.nam: architecture: unknown architecture \"Transformer\""),
            std::string::npos)
      << e;
}

TEST(NamLoader, WeightCountMismatchNamesBothNumbers) {
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  // Drop the first weight of the small WaveNet: 130 instead of 131.
  std::string text = read_text("wavenet.nam");
  text = replace_once(text, "\"weights\": [-0.6180188059806824, ", "\"weights\": [");
  const std::string e = load_error(text);
  EXPECT_NE(e.find("bad.nam: weights: the config needs 131 weights, the file has 130"),
            std::string::npos)
      << e;
  // A config that asks for more weights than the file holds: one more dilation.
  const std::string e2 = load_error(
      replace_once(read_text("wavenet.nam"), "\"dilations\": [8]", "\"dilations\": [8, 16]"));
  EXPECT_NE(e2.find("the config needs 153 weights, the file has 131"), std::string::npos) << e2;
}

TEST(NamLoader, NanAndNonNumericWeights) {
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  const std::string text = read_text("wavenet.nam");
  const std::string nan = load_error(replace_once(text, "0.35968291759490967", "NaN"));
  EXPECT_NE(nan.find("(in weights[4])"), std::string::npos) << nan;
  EXPECT_NE(nan.find("NaN and Infinity are not JSON numbers"), std::string::npos) << nan;
  const std::string null = load_error(replace_once(text, "0.35968291759490967", "null"));
  EXPECT_NE(null.find("bad.nam: weights[4]: expected a number, got null"), std::string::npos)
      << null;
  const std::string huge = load_error(replace_once(text, "0.35968291759490967", "1e39"));
  EXPECT_NE(huge.find("bad.nam: weights[4]: not a finite float"), std::string::npos) << huge;
}

TEST(NamLoader, BadConfigFieldsAreNamed) {
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  const std::string text = read_text("wavenet.nam");
  EXPECT_NE(load_error(replace_once(text, "\"dilations\": [1, 2]", "\"dilations\": [1, -2]"))
                .find("bad.nam: config.layers[0].dilations[1]: expected an integer in 1..65536"),
            std::string::npos);
  EXPECT_NE(load_error(replace_once(text, "\"kernel_size\": 3,", ""))
                .find("bad.nam: config.layers[0].kernel_size: missing"),
            std::string::npos);
  EXPECT_NE(load_error(replace_once(text, "\"activation\": \"Tanh\"", "\"activation\": \"Mish\""))
                .find("config.layers[0].activation: unsupported activation \"Mish\""),
            std::string::npos);
  EXPECT_NE(load_error(replace_once(text, "\"input_size\": 3", "\"input_size\": 4"))
                .find("config.layers[1].input_size: is 4 but the previous layer array has 3"),
            std::string::npos);
  EXPECT_NE(load_error(replace_once(text, "\"version\": \"0.5.4\"", "\"version\": \"0.8.0\""))
                .find("bad.nam: version: unsupported version \"0.8.0\""),
            std::string::npos);
  EXPECT_NE(load_error(replace_once(text, "\"weights\": [", "\"weightz\": ["))
                .find("bad.nam: weights: missing"),
            std::string::npos);
  EXPECT_NE(load_error("[1, 2]").find("bad.nam: expected a JSON object"), std::string::npos);
  EXPECT_NE(load_error("").find("bad.nam: invalid JSON at byte 0"), std::string::npos);
}

TEST(NamLoader, SampleRateMismatchIsRefused) {
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  const nam::Model m = nam::load(nam_fixture("wavenet.nam"));
  try {
    nam::Processor p(m, {.sample_rate = 44100});
    FAIL() << "ran a 48 kHz model at 44.1 kHz";
  } catch (const sigpu::Error& e) {
    const std::string s = e.what();
    EXPECT_NE(s.find("trained at 48000 Hz but runs at 44100 Hz"), std::string::npos) << s;
    EXPECT_NE(s.find("does not resample"), std::string::npos) << s;
  }
  const nam::Model a1 = nam::load(nam_fixture("wavenet_a1_standard.nam"));
  try {
    nam::Processor p(a1, {.sample_rate = 96000});
    FAIL() << "ran a 48 kHz model at 96 kHz";
  } catch (const sigpu::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no sample_rate in the file: 48 kHz assumed"),
              std::string::npos)
        << e.what();
  }
}

// The error classes the CLI maps to exit codes: InputError (3) for a file that is not a usable
// .nam model, UnsupportedError (4) for a well-formed one sigpu does not run.
TEST(NamLoader, ErrorClasses) {
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  const std::string text = read_text("wavenet.nam");
  const auto parse = [](const std::string& t) { nam::parse(t, "bad.nam"); };
  EXPECT_THROW(parse(replace_once(text, "\"WaveNet\"", "\"Transformer\"")),
               sigpu::UnsupportedError);
  EXPECT_THROW(parse(replace_once(text, "\"0.5.4\"", "\"0.8.0\"")), sigpu::UnsupportedError);
  EXPECT_THROW(parse(replace_once(text, "\"channels\": 3", "\"channels\": 100000")),
               sigpu::UnsupportedError);
  EXPECT_THROW(parse(replace_once(text, "\"channels\": 3", "\"channels\": 0")), sigpu::InputError);
  EXPECT_THROW(parse(replace_once(text, "\"weights\": [-0.6180188059806824, ", "\"weights\": [")),
               sigpu::InputError);
  EXPECT_THROW(parse("{"), sigpu::InputError);
  EXPECT_THROW(nam::load(std::filesystem::temp_directory_path()), sigpu::InputError);
  EXPECT_THROW(nam::load("/nonexistent/model.nam"), sigpu::InputError);
}

// Weights are taken out of the JSON tree as they are parsed; elements that are containers are
// still reported by index, and the config's dimensions are checked against the count first.
TEST(NamLoader, WeightsThatAreNotNumbers) {
  SIGPU_SKIP_WITHOUT_NAM_FIXTURES();
  const std::string text = read_text("wavenet.nam");
  const std::string arr =
      load_error(replace_once(text, "[-0.6180188059806824, ", "[[-0.6180188059806824], "));
  EXPECT_NE(arr.find("bad.nam: weights[0]: expected a number, got array"), std::string::npos)
      << arr;
  const std::string obj = load_error(replace_once(text, "-0.6180188059806824, ", "{\"a\": [1]}, "));
  EXPECT_NE(obj.find("bad.nam: weights[0]: expected a number, got object"), std::string::npos)
      << obj;
  // A weight of another "weights" key nested in metadata is not one of the model's.
  const nam::Model m = nam::parse(
      replace_once(text, "\"metadata\": {", "\"metadata\": {\"weights\": [1, 2, 3], "), "ok.nam");
  EXPECT_EQ(m.weights.size(), 131u);
}

namespace {

std::filesystem::path a2_fixture(const std::string& name) {
  return sigpu::test::fixtures_dir() / "nam-a2" / name;
}

std::string read_a2_text(const std::string& name) {
  std::ifstream f(a2_fixture(name));
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

// Formats 0.6 and 0.7: what the fixtures' READMEs say each model uses is what is loaded.
TEST(NamLoader, A2FixturesLoadWithTheirFeatures) {
  if (!std::filesystem::exists(a2_fixture("A2.nam"))) GTEST_SKIP() << "nam-a2 fixtures absent";
  const nam::Model a2 = nam::load(a2_fixture("A2.nam"));
  EXPECT_EQ(a2.architecture, nam::Architecture::slimmable_container);
  ASSERT_EQ(a2.sizes.size(), 2u);
  EXPECT_EQ(a2.sizes[0].max_value, 0.5);
  const nam::LayerArray& full = a2.sizes[1].model->wavenet.layer_arrays[0];
  EXPECT_EQ(full.channels, 8);
  EXPECT_EQ(full.kernel_sizes[14], 15);
  EXPECT_EQ(full.head_kernel_size, 16);
  EXPECT_EQ(full.activations[0].kind, nam::Activation::leaky_relu);
  EXPECT_EQ(a2.sizes[1].model->weights.size(), 12146u);

  const nam::Model max = nam::load(a2_fixture("wavenet_a2_max.nam"));
  ASSERT_TRUE(max.wavenet.condition_dsp);
  const nam::LayerArray& c1 = max.wavenet.condition_dsp->wavenet.layer_arrays[1];
  EXPECT_EQ(c1.gating[0], nam::Gating::blended);
  EXPECT_EQ(c1.activations[0].negative_slopes, (std::vector<float>{0.04f, 0.05f}));
  EXPECT_EQ(c1.secondary[0].kind, nam::Activation::leaky_hardtanh);
  EXPECT_FLOAT_EQ(c1.secondary[0].max_val, 0.9f);
  const nam::LayerArray& m0 = max.wavenet.layer_arrays[0];
  EXPECT_EQ(m0.condition_size, 8);
  EXPECT_EQ(m0.groups_input_mixin, 4);
  EXPECT_TRUE(m0.head1x1);
  EXPECT_EQ(m0.film[nam::layer1x1_post_film].groups, 8);

  const nam::Model slim = nam::load(a2_fixture("slimmable_wavenet.nam"));
  ASSERT_EQ(slim.sizes.size(), 3u);
  EXPECT_EQ(slim.sizes[0].channels, std::vector<int>{1});
  EXPECT_EQ(slim.size_index(0.1), 0);
  EXPECT_EQ(slim.size_index(0.5), 1);
  EXPECT_EQ(slim.size_index(1.0), 2);
}

// An unknown gating mode, activation, slimmable method or post-stack head is refused with
// the file, the JSON path and what is supported.
TEST(NamLoader, A2FieldsSigpuDoesNotRunAreNamed) {
  if (!std::filesystem::exists(a2_fixture("A2.nam"))) GTEST_SKIP() << "nam-a2 fixtures absent";
  const std::string max = read_a2_text("wavenet_a2_max.nam");
  const std::string gating = load_error(replace_once(max, "\"blended\"", "\"mixed\""));
  EXPECT_NE(gating.find("bad.nam: config.condition_dsp: config.layers[1].gating_mode[0]: "
                        "unknown gating_mode \"mixed\" (none, gated, blended)"),
            std::string::npos)
      << gating;
  const std::string act = load_error(replace_once(max, "\"Softsign\"", "\"Mish\""));
  EXPECT_NE(act.find("unsupported activation \"Mish\""), std::string::npos) << act;
  const std::string slim = load_error(
      replace_once(read_a2_text("slimmable_wavenet.nam"), "slice_channels_uniform", "prune"));
  EXPECT_NE(slim.find("config.layers[0].slimmable.method: unsupported slimmable method \"prune\""),
            std::string::npos)
      << slim;
  EXPECT_THROW(nam::parse(replace_once(max, "\"0.6.0\"", "\"0.8.0\""), "bad.nam"),
               sigpu::UnsupportedError);
}
