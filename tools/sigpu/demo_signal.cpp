#include "demo_signal.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace sigpu::cli {
namespace {

/// splitmix64: tiny, and unlike <random>'s distributions it gives the same numbers everywhere.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }  ///< [0, 1)
  float bipolar() { return float(2 * uniform() - 1); }           ///< [-1, 1)

 private:
  std::uint64_t s_;
};

constexpr double kPi = std::numbers::pi;
constexpr double kBpm = 112;

double midi_hz(double note) {
  return 440.0 * std::pow(2.0, (note - 69) / 12);
}

/// Constant-power gains for a position from -1 (left) to +1 (right).
struct Pan {
  float l, r;
  explicit Pan(float position)
      : l(float(std::cos((position + 1) * kPi / 4))),
        r(float(std::sin((position + 1) * kPi / 4))) {}
};

struct Mix {
  std::vector<float> l, r;
  explicit Mix(std::size_t n) : l(n), r(n) {}
  void add(std::size_t at, float v, Pan pan) {
    if (at >= l.size()) return;
    l[at] += v * pan.l;
    r[at] += v * pan.r;
  }
};

struct Chord {
  int root;      ///< MIDI note of the bass
  int tones[3];  ///< MIDI notes of the triad
};
// Am - F - C - G, one bar each.
constexpr Chord kProgression[] = {
    {45, {57, 60, 64}}, {41, {57, 60, 65}}, {48, {55, 60, 64}}, {43, {55, 59, 62}}};
constexpr int kPentatonic[] = {69, 72, 74, 76, 79, 81};

/// Karplus-Strong: a noise burst circulating through a delay line with a lowpass in the loop.
void pluck(Mix& m, std::size_t start, double hz, float amp, Pan pan, double seconds, double rate,
           Rng& rng) {
  const std::size_t period = std::max<std::size_t>(2, std::size_t(std::lround(rate / hz)));
  std::vector<float> line(period);
  float prev = 0;
  for (auto& x : line) x = prev = 0.5f * (prev + rng.bipolar());  // soften the attack
  const std::size_t n = std::size_t(seconds * rate);
  for (std::size_t i = 0, k = 0; i < n; ++i) {
    const std::size_t next = k + 1 == period ? 0 : k + 1;
    const float y = line[k];
    line[k] = 0.4985f * (line[k] + line[next]);
    k = next;
    m.add(start + i, amp * y, pan);
  }
}

/// A soft additive-synth pad: each tone a detuned pair, one per side, read from a wavetable.
void pad(Mix& m, std::size_t start, std::size_t length, const Chord& c, double rate,
         const std::vector<float>& table) {
  const std::size_t release = std::size_t(0.6 * rate), attack = std::size_t(0.4 * rate);
  const double size = double(table.size());
  for (int tone : c.tones) {
    for (int side = 0; side < 2; ++side) {
      const Pan pan(side ? 0.7f : -0.7f);
      const double step = midi_hz(tone + (side ? 0.04 : -0.04)) / rate * size;
      double phase = size * (side ? 0.25 : 0.0);
      for (std::size_t i = 0; i < length + release; ++i) {
        float env = i < attack ? float(i) / attack : 1.0f;
        if (i >= length) env *= 1.0f - float(i - length) / release;
        const float v = 0.035f * env * table[std::size_t(phase)];
        phase += step;
        if (phase >= size) phase -= size;
        m.add(start + i, v, pan);
      }
    }
  }
}

void bass(Mix& m, std::size_t start, double hz, double seconds, double rate) {
  const std::size_t n = std::size_t(seconds * rate);
  for (std::size_t i = 0; i < n; ++i) {
    const double t = i / rate, ph = 2 * kPi * hz * t;
    const double env = (1 - std::exp(-t * 300)) * std::exp(-t * 4);
    const double v = std::sin(ph) + 0.45 * std::sin(2 * ph) + 0.2 * std::sin(3 * ph);
    m.add(start + i, float(0.22 * env * v), Pan(0));
  }
}

void kick(Mix& m, std::size_t start, double rate) {
  double phase = 0;
  for (std::size_t i = 0; i < std::size_t(0.45 * rate); ++i) {
    const double t = i / rate;
    phase += 2 * kPi * (48 + 110 * std::exp(-t * 35)) / rate;
    m.add(start + i, float(0.55 * std::exp(-t * 9) * std::sin(phase)), Pan(0));
  }
}

/// Noise through a crude band-pass (difference of two one-pole lowpasses), plus a body tone.
void snare(Mix& m, std::size_t start, double rate, Rng& rng) {
  const Pan pan(-0.15f);
  float lo = 0, hi = 0;
  for (std::size_t i = 0; i < std::size_t(0.3 * rate); ++i) {
    const double t = i / rate;
    const float x = rng.bipolar();
    hi += 0.45f * (x - hi);
    lo += 0.05f * (x - lo);
    const double body = 0.5 * std::sin(2 * kPi * 185 * t) * std::exp(-t * 30);
    m.add(start + i, float(0.3 * (std::exp(-t * 16) * (hi - lo) + body)), pan);
  }
}

void hihat(Mix& m, std::size_t start, double rate, Rng& rng, bool open, float accent) {
  const Pan pan(0.35f);
  float lo = 0;
  const double decay = open ? 11 : 70;
  for (std::size_t i = 0; i < std::size_t((open ? 0.3 : 0.07) * rate); ++i) {
    const float x = rng.bipolar();
    lo += 0.3f * (x - lo);
    m.add(start + i, float(0.1 * accent * std::exp(-double(i) / rate * decay)) * (x - lo), pan);
  }
}

/// Freeverb-style: parallel damped combs into series allpasses, one set per side.
class Reverb {
 public:
  Reverb(double rate, std::size_t spread) {
    for (std::size_t d : {1116, 1188, 1277, 1356, 1422, 1491})
      combs_.push_back({std::vector<float>(std::size_t(d * rate / 44100) + spread)});
    for (std::size_t d : {556, 441, 341})
      allpasses_.push_back({std::vector<float>(std::size_t(d * rate / 44100) + spread)});
  }
  float process(float x) {
    float y = 0;
    for (auto& c : combs_) {
      const float out = c.buf[c.at];
      c.store = out * 0.8f + c.store * 0.2f;
      c.buf[c.at] = x + c.store * 0.83f;
      c.at = (c.at + 1) % c.buf.size();
      y += out;
    }
    for (auto& a : allpasses_) {
      const float b = a.buf[a.at];
      a.buf[a.at] = y + b * 0.5f;
      a.at = (a.at + 1) % a.buf.size();
      y = b - y;
    }
    return y;
  }

 private:
  struct Line {
    std::vector<float> buf;
    std::size_t at = 0;
    float store = 0;
  };
  std::vector<Line> combs_, allpasses_;
};

}  // namespace

DemoSignal synthesize_demo(double seconds, std::uint64_t seed, std::uint32_t sample_rate) {
  const double rate = sample_rate;
  const std::size_t n = std::size_t(seconds * rate);
  const double beat = 60.0 / kBpm;
  auto at = [&](double beats) { return std::size_t(beats * beat * rate); };
  Rng rng(seed);
  Mix m(n);

  std::vector<float> table(4096);
  for (std::size_t i = 0; i < table.size(); ++i)
    for (int k = 1; k <= 6; ++k)
      table[i] += float(std::sin(2 * kPi * k * double(i) / table.size()) / std::pow(k, 1.5));

  const int bars = int(std::ceil(seconds / (4 * beat)));
  for (int bar = 0; bar < bars; ++bar) {
    const Chord& c = kProgression[bar % 4];
    const double b0 = 4.0 * bar;
    pad(m, at(b0), at(4), c, rate, table);
    for (int e = 0; e < 8; ++e) {  // eighth-note arpeggio, drifting across the stereo field
      static constexpr int kPattern[] = {0, 1, 2, 3, 2, 1, 3, 2};
      const int tone = kPattern[e] == 3 ? c.tones[0] + 12 : c.tones[kPattern[e]];
      const std::size_t s = at(b0 + e / 2.0);
      const Pan pan(float(0.6 * std::sin(2 * kPi * double(s) / rate / 7.0)));
      pluck(m, s, midi_hz(tone), 0.28f, pan, 1.4, rate, rng);
      hihat(m, s, rate, rng, e == 7, e % 2 ? 0.6f : 1.0f);
    }
    for (int q = 0; q < 4; ++q) {
      if (bar >= 2 && rng.uniform() < 0.65)  // the lead comes in after two bars
        pluck(m, at(b0 + q + (rng.uniform() < 0.3 ? 0.5 : 0.0)),
              midi_hz(kPentatonic[rng.next() % std::size(kPentatonic)]), 0.24f, Pan(0.3f), 1.8,
              rate, rng);
      bass(m, at(b0 + q), midi_hz(q == 3 ? c.root + 7 : c.root), beat * 0.9, rate);
      if (q % 2 == 0) kick(m, at(b0 + q), rate);
      if (q % 2 == 1) snare(m, at(b0 + q), rate, rng);
    }
    if (bar % 2 == 1) kick(m, at(b0 + 2.5), rate);
  }

  DemoSignal out;
  out.sample_rate = sample_rate;
  out.samples.resize(2 * n);
  Reverb left(rate, 0), right(rate, 23);
  const std::size_t fade = std::min(n, std::size_t(2 * rate));
  float peak = 1e-9f;
  for (std::size_t i = 0; i < n; ++i) {
    const float send = 0.02f * (m.l[i] + m.r[i]);
    const float g = i + fade >= n ? float(n - i) / fade : 1.0f;
    out.samples[2 * i] = g * (m.l[i] + 0.9f * left.process(send));
    out.samples[2 * i + 1] = g * (m.r[i] + 0.9f * right.process(send));
    peak = std::max({peak, std::abs(out.samples[2 * i]), std::abs(out.samples[2 * i + 1])});
  }
  const float gain = 0.891f / peak;  // -1 dBFS
  for (auto& x : out.samples) x *= gain;
  return out;
}

std::vector<std::int32_t> quantize(const std::vector<float>& x, unsigned bits, std::uint64_t seed) {
  Rng rng(seed ^ 0xD1B54A32D192ED03ull);
  const double scale = double(1u << (bits - 1));
  const double lo = -scale, hi = scale - 1;
  std::vector<std::int32_t> out(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double dither = rng.uniform() - rng.uniform();
    out[i] = std::int32_t(std::clamp(std::round(x[i] * scale + dither), lo, hi));
  }
  return out;
}

}  // namespace sigpu::cli
