// Biquad EQ against a float64 reference written here from the RBJ cookbook (direct form I,
// long double), and against the known responses (gain at the centre, -3 dB corners).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>

#include "util.hpp"

namespace audio = sigpu::audio;
using namespace sigpu::test::audio;

namespace {

struct Band {
  std::string type;
  double freq, gain_db, q;
};

/// {b0, b1, b2, a0, a1, a2} straight from the cookbook text.
std::array<long double, 6> cookbook(const Band& b, double fs) {
  const long double A = std::pow(10.0L, b.gain_db / 40.0L);
  const long double w0 = 2 * std::numbers::pi_v<long double> * b.freq / fs;
  const long double c = std::cos(w0), s = std::sin(w0), al = s / (2 * b.q);
  const long double r = 2 * std::sqrt(A) * al;
  if (b.type == "lowpass") return {(1 - c) / 2, 1 - c, (1 - c) / 2, 1 + al, -2 * c, 1 - al};
  if (b.type == "highpass") return {(1 + c) / 2, -(1 + c), (1 + c) / 2, 1 + al, -2 * c, 1 - al};
  if (b.type == "bandpass") return {al, 0, -al, 1 + al, -2 * c, 1 - al};
  if (b.type == "notch") return {1, -2 * c, 1, 1 + al, -2 * c, 1 - al};
  if (b.type == "peak") return {1 + al * A, -2 * c, 1 - al * A, 1 + al / A, -2 * c, 1 - al / A};
  if (b.type == "lowshelf") {
    return {A * ((A + 1) - (A - 1) * c + r), 2 * A * ((A - 1) - (A + 1) * c),
            A * ((A + 1) - (A - 1) * c - r), (A + 1) + (A - 1) * c + r,
            -2 * ((A - 1) + (A + 1) * c),    (A + 1) + (A - 1) * c - r};
  }
  return {A * ((A + 1) + (A - 1) * c + r), -2 * A * ((A - 1) + (A + 1) * c),
          A * ((A + 1) + (A - 1) * c - r), (A + 1) - (A - 1) * c + r,
          2 * ((A - 1) - (A + 1) * c),     (A + 1) - (A - 1) * c - r};
}

/// Direct form I in long double over a cascade.
std::vector<float> reference(const std::vector<Band>& bands, const std::vector<float>& x,
                             double fs) {
  std::vector<long double> v(x.begin(), x.end());
  for (const auto& b : bands) {
    const auto k = cookbook(b, fs);
    long double x1 = 0, x2 = 0, y1 = 0, y2 = 0;
    for (auto& s : v) {
      const long double y = (k[0] * s + k[1] * x1 + k[2] * x2 - k[4] * y1 - k[5] * y2) / k[3];
      x2 = x1, x1 = s, y2 = y1, y1 = y, s = y;
    }
  }
  return {v.begin(), v.end()};
}

std::string eq_graph(const std::vector<Band>& bands, int channels) {
  std::string json = "{\"inputs\": " + std::to_string(channels);
  json += ", \"nodes\": [{\"id\": \"eq\", \"type\": \"eq\", \"input\": \"in\", ";
  json += "\"params\": {\"bands\": [";
  for (std::size_t k = 0; k < bands.size(); ++k) {
    const Band& x = bands[k];
    json += k ? ", " : "";
    json += "{\"type\": \"" + x.type + "\", \"freq\": " + std::to_string(x.freq);
    json += ", \"gain_db\": " + std::to_string(x.gain_db) + ", \"q\": " + std::to_string(x.q);
    json += "}";
  }
  json += "]}}], \"outputs\": \"eq\"}";
  return json;
}

const std::vector<Band> kEveryType = {{"highpass", 30, 0, 0.707},   {"lowshelf", 120, 6, 0.707},
                                      {"peak", 60, -9, 4.0},        {"peak", 1000, 12, 0.5},
                                      {"notch", 3000, 0, 8.0},      {"bandpass", 5000, 0, 0.3},
                                      {"highshelf", 8000, -6, 0.9}, {"lowpass", 16000, 0, 1.2}};

}  // namespace

TEST(AudioEq, EveryBandTypeMatchesFloat64Reference) {
  const double fs = 48000;
  const auto g = audio::Graph::parse(eq_graph(kEveryType, 3));
  Channels in = music(2, 48000);
  in.push_back(impulses(1, 48000)[0]);
  for (auto backend : {sigpu::Backend::cpu, sigpu::Backend::cpu_parallel}) {
    const auto out = run(g, in, {.backend = backend, .period = 64, .sample_rate = fs});
    for (int c = 0; c < 3; ++c) {
      const auto d = audio::compare(reference(kEveryType, in[c], fs), out[c]);
      EXPECT_LT(d.max_abs_dbfs, -100) << "channel " << c;
    }
  }
  // Each type alone too, at 44.1 kHz.
  for (const auto& b : kEveryType) {
    const auto one = audio::Graph::parse(eq_graph({b}, 1));
    const auto out =
        run(one, {in[0]}, {.backend = sigpu::Backend::cpu, .period = 32, .sample_rate = 44100});
    EXPECT_LT(audio::compare(reference({b}, in[0], 44100), out[0]).max_abs_dbfs, -100) << b.type;
  }
}

TEST(AudioEq, KnownResponses) {
  // Steady-state sine gain at the frequencies where the cookbook's responses are known.
  const double fs = 48000;
  const auto gain_at = [&](const Band& b, double f) {
    const auto g = audio::Graph::parse(eq_graph({b}, 1));
    Channels in(1, std::vector<float>(48000));
    for (std::size_t i = 0; i < in[0].size(); ++i) {
      in[0][i] = 0.5f * float(std::sin(2 * std::numbers::pi * f * double(i) / fs));
    }
    const auto out = run(g, in, {.backend = sigpu::Backend::cpu, .period = 128, .sample_rate = fs});
    double peak = 0;
    for (std::size_t i = 24000; i < out[0].size(); ++i)
      peak = std::max(peak, double(std::abs(out[0][i])));
    return 20 * std::log10(peak / 0.5);
  };
  EXPECT_NEAR(gain_at({"peak", 1000, 6, 1}, 1000), 6.0, 0.01);
  EXPECT_NEAR(gain_at({"peak", 1000, -12, 2}, 1000), -12.0, 0.01);
  EXPECT_NEAR(gain_at({"lowpass", 2000, 0, std::sqrt(0.5)}, 2000), -3.01, 0.01);
  EXPECT_NEAR(gain_at({"highpass", 300, 0, std::sqrt(0.5)}, 300), -3.01, 0.01);
  EXPECT_NEAR(gain_at({"lowshelf", 200, 9, 0.707}, 30), 9.0, 0.1);
  EXPECT_NEAR(gain_at({"highshelf", 2000, -9, 0.707}, 18000), -9.0, 0.1);
  EXPECT_LT(gain_at({"notch", 1000, 0, 4}, 1000), -40);
  EXPECT_NEAR(gain_at({"bandpass", 3000, 0, 2}, 3000), 0.0, 0.01);
}

TEST(AudioEq, RuntimeChangeIsRampedAndMatchesTheNewFilter) {
  const double fs = 48000;
  const auto g = audio::Graph::parse(eq_graph({{"peak", 1000, 0, 1}}, 1));
  audio::Engine e(g, {.backend = sigpu::Backend::cpu, .period = 64, .sample_rate = fs});
  e.setup();
  std::vector<float> x(64), y(64);
  const float* in = x.data();
  float* out = y.data();
  double prev = 0, biggest_step = 0;
  for (int p = 0; p < 400; ++p) {
    for (int i = 0; i < 64; ++i)
      x[i] = 0.5f * float(std::sin(2 * std::numbers::pi * 1000 * (p * 64 + i) / fs));
    if (p == 200) e.update("eq", "band.0.gain_db", 12);
    e.process(&in, &out);
    for (int i = 0; i < 64; ++i) {
      if (p > 150) biggest_step = std::max(biggest_step, std::abs(double(y[i]) - prev));
      prev = y[i];
    }
  }
  // A 1 kHz sine at amplitude 2 moves at most 2 * 2 pi 1000 / 48000 = 0.26 per sample.
  EXPECT_LT(biggest_step, 0.27);
  double peak = 0;
  for (float v : y) peak = std::max(peak, double(std::abs(v)));
  EXPECT_NEAR(20 * std::log10(peak / 0.5), 12.0, 0.05);
  EXPECT_THROW(e.update("eq", "band.0.freq", 24000), sigpu::Error);
  EXPECT_THROW(e.update("eq", "band.1.freq", 100), sigpu::Error);
  EXPECT_THROW(e.update("eq", "band.0.q", 0), sigpu::Error);
}
