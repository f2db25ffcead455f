// Gate and compressor against float64 models written here from their definitions
// (docs/audio.md), and the compressor's static curve against the formula of Giannoulis,
// Massberg and Reiss (JAES 2012).
#include <gtest/gtest.h>

#include <cmath>

#include "util.hpp"

namespace audio = sigpu::audio;
using namespace sigpu::test::audio;

namespace {

double coef(double ms, double fs) {
  return ms <= 0 ? 0 : std::exp(-1.0 / (ms / 1000 * fs));
}

std::vector<float> gate_model(const std::vector<float>& x, double thr_db, double att_ms,
                              double hold_ms, double rel_ms, double range_db, double fs) {
  const double thr = std::pow(10.0, thr_db / 20), floor = std::pow(10.0, range_db / 20);
  const double a = coef(att_ms, fs), r = coef(rel_ms, fs);
  const long hold = std::lround(hold_ms / 1000 * fs);
  double gain = 0;
  long left = 0;
  std::vector<float> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    bool open = std::abs(x[i]) > thr;
    if (open)
      left = hold;
    else if (left > 0)
      --left, open = true;
    const double target = open ? 1.0 : floor;
    const double k = target > gain ? a : r;
    gain = k * gain + (1 - k) * target;
    y[i] = float(x[i] * gain);
  }
  return y;
}

double curve(double x, double T, double R, double W) {
  if (2 * (x - T) < -W) return x;
  if (W > 0 && 2 * std::abs(x - T) <= W)
    return x + (1 / R - 1) * std::pow(x - T + W / 2, 2) / (2 * W);
  return T + (x - T) / R;
}

std::vector<float> compressor_model(const std::vector<float>& x, const std::vector<float>& side,
                                    double T, double R, double W, double att_ms, double rel_ms,
                                    double makeup_db, double fs) {
  const double a = coef(att_ms, fs), r = coef(rel_ms, fs);
  double yl = 0;
  std::vector<float> y(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double s = std::abs(side[i]);
    const double level = s > 1e-10 ? 20 * std::log10(s) : -200;
    const double red = level - curve(level, T, R, W);
    const double k = red > yl ? a : r;
    yl = k * yl + (1 - k) * red;
    y[i] = float(x[i] * std::pow(10.0, (makeup_db - yl) / 20));
  }
  return y;
}

audio::Graph one_node(const std::string& type, const std::string& params, int channels = 2,
                      const std::string& sidechain = "") {
  return audio::Graph::parse(
      "{\"inputs\": " + std::to_string(channels) + ", \"nodes\": [{\"id\": \"x\", \"type\": \"" +
      type + "\", \"input\": \"in:0-" + std::to_string(channels - (sidechain.empty() ? 1 : 2)) +
      "\"" + (sidechain.empty() ? "" : ", \"sidechain\": \"" + sidechain + "\"") +
      ", \"params\": " + params + "}], \"outputs\": \"x\"}");
}

}  // namespace

TEST(AudioDynamics, GateMatchesFloat64Model) {
  const double fs = 48000;
  auto in = music(2, 96000, 5);
  for (std::size_t i = 30000; i < 50000; ++i) in[0][i] *= 0.001f;  // a quiet stretch: closes
  const auto g = one_node("gate", R"({"threshold_db": -40, "attack_ms": 1, "hold_ms": 15,
                                      "release_ms": 60, "range_db": -70})");
  const auto out = run(g, in, {.backend = sigpu::Backend::cpu, .period = 128, .sample_rate = fs});
  for (int c = 0; c < 2; ++c) {
    const auto ref = gate_model(in[c], -40, 1, 15, 60, -70, fs);
    EXPECT_LT(audio::compare(ref, out[c]).max_abs_dbfs, -100) << c;
  }
  // It did close: the quiet stretch is attenuated by far more than it was.
  double loud = 0;
  for (std::size_t i = 45000; i < 50000; ++i) loud = std::max(loud, double(std::abs(out[0][i])));
  EXPECT_LT(loud, 1e-5);
}

TEST(AudioDynamics, CompressorMatchesFloat64Model) {
  const double fs = 48000;
  const auto in = music(2, 96000, 9);
  const auto g = one_node("compressor", R"({"threshold_db": -24, "ratio": 4, "knee_db": 6,
                                            "attack_ms": 3, "release_ms": 90, "makeup_db": 5})");
  const auto out = run(g, in, {.backend = sigpu::Backend::cpu, .period = 64, .sample_rate = fs});
  for (int c = 0; c < 2; ++c) {
    const auto ref = compressor_model(in[c], in[c], -24, 4, 6, 3, 90, 5, fs);
    EXPECT_LT(audio::compare(ref, out[c]).max_abs_dbfs, -100) << c;
  }
}

TEST(AudioDynamics, CompressorSideChainDucks) {
  const double fs = 48000;
  auto in = music(2, 48000, 3);
  for (std::size_t i = 0; i < 24000; ++i) in[1][i] = 0;  // the key is silent first
  const auto g = one_node("compressor", R"({"threshold_db": -40, "ratio": 10, "knee_db": 0,
                                            "attack_ms": 1, "release_ms": 50})",
                          2, "in:1");
  const auto out = run(g, in, {.backend = sigpu::Backend::cpu, .period = 32, .sample_rate = fs});
  const auto ref = compressor_model(in[0], in[1], -40, 10, 0, 1, 50, 0, fs);
  EXPECT_LT(audio::compare(ref, out[0]).max_abs_dbfs, -100);
  for (std::size_t i = 0; i < 24000; ++i)
    ASSERT_EQ(out[0][i], in[0][i]) << i;  // no key, no gain change
}

TEST(AudioDynamics, CompressorStaticCurve) {
  // A constant input settles on the static curve: out/in = curve(x) - x (+ makeup).
  const double fs = 48000;
  for (double level_db : {-40.0, -23.0, -20.0, -17.0, -6.0, 0.0}) {
    const float amp = float(std::pow(10.0, level_db / 20));
    Channels in(1, std::vector<float>(24000, amp));
    const auto g = one_node("compressor", R"({"threshold_db": -20, "ratio": 5, "knee_db": 6,
                                              "attack_ms": 1, "release_ms": 1, "makeup_db": 2})",
                            1);
    const auto out = run(g, in, {.backend = sigpu::Backend::cpu, .period = 128, .sample_rate = fs});
    const double got = 20 * std::log10(out[0].back() / amp);
    const double want = curve(level_db, -20, 5, 6) - level_db + 2;
    EXPECT_NEAR(got, want, 1e-3) << level_db;
  }
}
