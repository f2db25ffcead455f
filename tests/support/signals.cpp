#include "support/signals.hpp"

#include "support/rng.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "support/var_encoder.hpp"

namespace sigpu::test {
namespace {

std::int64_t lo_of(unsigned bps) {
  return -(std::int64_t(1) << (bps - 1));
}
std::int64_t hi_of(unsigned bps) {
  return (std::int64_t(1) << (bps - 1)) - 1;
}

void check(unsigned channels, unsigned bps) {
  if (channels < 1 || channels > 8 || bps < 4 || bps > 32)
    throw std::invalid_argument("signals: channels must be 1..8 and bits per sample 4..32");
}

/// Music-like: a few voices of harmonic notes (attack/decay envelopes, vibrato), each panned
/// differently per channel, plus decaying noise bursts on the beat. Values in [-1, 1].
std::vector<double> music_planar(unsigned channels, std::size_t frames, std::uint64_t seed) {
  Rng rng{seed * 7919 + 17};
  const double rate = 44100.0;
  const int voices = 4, harmonics = 6;
  const std::size_t beat = 11025;  // 120 bpm at 44.1 kHz
  std::vector<std::vector<double>> voice(voices, std::vector<double>(frames, 0.0));
  static const int scale[] = {0, 2, 4, 5, 7, 9, 11};
  for (int v = 0; v < voices; ++v) {
    std::size_t t = 0;
    const std::size_t note_len = beat / (v == voices - 1 ? 2 : 1) * (v == 0 ? 2 : 1);
    while (t < frames) {
      int midi = 36 + 12 * v + scale[rng.below(7)] + (v == voices - 1 ? 12 : 0);
      double f0 = 440.0 * std::pow(2.0, (midi - 69) / 12.0);
      double amps[harmonics];
      for (int h = 0; h < harmonics; ++h) amps[h] = (0.6 + 0.4 * rng.uniform()) / (h + 1);
      std::size_t len = std::min(note_len, frames - t);
      double decay = 2.0 + 6.0 * rng.uniform(), phase = 0.0;
      for (std::size_t i = 0; i < len; ++i) {
        double sec = double(i) / rate;
        double env = std::min(1.0, sec / 0.01) * std::exp(-decay * sec);
        phase += 2.0 * std::numbers::pi * f0 *
                 (1.0 + 0.003 * std::sin(2.0 * std::numbers::pi * 5.0 * sec)) / rate;
        double x = 0.0;
        for (int h = 0; h < harmonics; ++h) x += amps[h] * std::sin((h + 1) * phase);
        voice[v][t + i] = 0.5 * env * x;
      }
      t += len;
    }
  }
  std::vector<double> out(frames * channels);
  for (unsigned c = 0; c < channels; ++c) {
    double pan[voices];
    for (int v = 0; v < voices; ++v)
      pan[v] = 0.3 + 0.7 * std::fabs(std::sin(1.3 * (c + 1) * (v + 1) + seed));
    Rng noise{seed * 104729 + c};
    for (std::size_t i = 0; i < frames; ++i) {
      double x = 0.0;
      for (int v = 0; v < voices; ++v) x += pan[v] * voice[v][i];
      std::size_t in_beat = i % beat;  // drum-like burst at every beat, a louder one every 4
      double burst = std::exp(-double(in_beat) / (i / beat % 4 == 0 ? 2500.0 : 600.0));
      x += 0.25 * burst * noise.symmetric();
      x += 0.002 * noise.symmetric();  // a little hiss so nothing is exactly periodic
      out[i * channels + c] = std::clamp(0.45 * x, -1.0, 1.0);
    }
  }
  return out;
}

std::int32_t from_unit(double x, unsigned bps) {
  double full = std::ldexp(1.0, int(bps) - 1);  // 2^(bps-1)
  auto v = static_cast<std::int64_t>(std::llround(x * full));
  return static_cast<std::int32_t>(std::clamp(v, lo_of(bps), hi_of(bps)));
}

/// A byte pool for one channel: filler, sync pairs, fake headers and whole valid frames.
std::vector<std::uint8_t> adversarial_pool(std::size_t bytes_wanted, unsigned channels,
                                           unsigned bps, const AdversarialParams& p, Rng& rng) {
  std::vector<std::uint8_t> pool;
  const double samples_per_byte = 8.0 / bps;
  while (pool.size() < bytes_wanted) {
    // The outer frame this byte will land in, and the number a decoder expects next.
    auto sample_pos = static_cast<std::uint64_t>(pool.size() * samples_per_byte);
    std::uint64_t outer_frame = sample_pos / std::max<std::uint32_t>(p.block_size, 1);
    std::uint64_t number = p.variable_blocksize ? (outer_frame + rng.below(3)) * p.block_size
                                                : outer_frame + rng.below(3);
    switch (rng.below(6)) {
      case 0:
      case 1: {  // random filler keeps it incompressible
        unsigned n = 1 + rng.below(48);
        for (unsigned i = 0; i < n; ++i) pool.push_back(static_cast<std::uint8_t>(rng.next()));
        break;
      }
      case 2: {  // bare sync codes, sometimes in runs of 0xFF
        unsigned ff = 1 + (rng.below(4) == 0 ? rng.below(8) : 0);
        for (unsigned i = 0; i < ff; ++i) pool.push_back(0xFF);
        pool.push_back(rng.below(2) ? 0xF8 : 0xF9);
        break;
      }
      case 3:
      case 4: {  // a complete valid frame with CONSTANT subframes: the outer block size,
                 // channel count, bps and rate, CRC-8 and CRC-16 correct
        std::uint32_t bs = rng.below(3) == 0 ? 16 + rng.below(200)
                                             : std::clamp<std::uint32_t>(p.block_size, 16, 65535);
        std::vector<std::int64_t> values(channels);
        for (auto& v : values) v = rng.signed_bits(bps);
        auto f = flacbits::encode_constant_frame(values, bs, bps, p.sample_rate,
                                                 p.variable_blocksize, number);
        if (rng.below(4) == 0) f.resize(f.size() - 1 - rng.below(3));  // or a truncated one
        pool.insert(pool.end(), f.begin(), f.end());
        break;
      }
      default: {  // a short valid VERBATIM frame (header and CRC-16 good)
        std::uint32_t bs = 1 + rng.below(24);
        std::vector<std::vector<std::int64_t>> ch(channels, std::vector<std::int64_t>(bs));
        for (auto& c : ch)
          for (auto& v : c) v = rng.signed_bits(bps);
        auto f = flacbits::encode_frame(ch, bps, p.sample_rate, p.variable_blocksize, number,
                                        VarSubframes::verbatim);
        pool.insert(pool.end(), f.begin(), f.end());
        break;
      }
    }
  }
  return pool;
}

/// Reads `frames` samples of `bps` bits from the bit stream of `bytes` (repeated),
/// starting at byte `start`.
void unpack(std::span<const std::uint8_t> bytes, std::size_t start, unsigned bps,
            std::size_t frames, unsigned channels, unsigned channel,
            std::vector<std::int32_t>& out) {
  std::uint64_t bitpos = std::uint64_t(start) * 8;
  const std::uint64_t total_bits = std::uint64_t(bytes.size()) * 8;
  for (std::size_t i = 0; i < frames; ++i) {
    std::uint64_t v = 0;
    for (unsigned b = 0; b < bps; ++b, ++bitpos) {
      if (bitpos >= total_bits) bitpos = 0;
      v = (v << 1) | ((bytes[bitpos >> 3] >> (7 - (bitpos & 7))) & 1);
    }
    auto s = static_cast<std::int64_t>(v << (64 - bps)) >> (64 - bps);  // sign-extend
    out[i * channels + channel] = static_cast<std::int32_t>(s);
  }
}

}  // namespace

std::string_view to_string(Signal s) {
  switch (s) {
    case Signal::music:
      return "music";
    case Signal::white_noise:
      return "noise";
    case Signal::silence:
      return "silence";
    case Signal::square:
      return "square";
    case Signal::adversarial:
      return "adversarial";
    case Signal::wasted_bits:
      return "wasted";
  }
  return "?";
}

std::vector<std::int32_t> make_signal(Signal kind, unsigned channels, unsigned bps,
                                      std::size_t frames, std::uint64_t seed) {
  check(channels, bps);
  std::vector<std::int32_t> out(frames * channels, 0);
  switch (kind) {
    case Signal::silence:
      break;
    case Signal::white_noise: {
      Rng rng{seed * 31 + 5};
      for (auto& v : out) v = static_cast<std::int32_t>(rng.signed_bits(bps));
      break;
    }
    case Signal::square: {
      for (unsigned c = 0; c < channels; ++c) {
        std::size_t period = 64 + 37 * c + seed % 16;
        for (std::size_t i = 0; i < frames; ++i) {
          bool up = (i / (period / 2)) % 2 == 0;
          if (c % 2) up = !up;  // neighbouring channels at opposite extremes: side needs bps+1 bits
          out[i * channels + c] = static_cast<std::int32_t>(up ? hi_of(bps) : lo_of(bps));
        }
      }
      break;
    }
    case Signal::music:
    case Signal::wasted_bits: {
      auto x = music_planar(channels, frames, seed);
      for (std::size_t i = 0; i < x.size(); ++i) out[i] = from_unit(x[i], bps);
      if (kind == Signal::wasted_bits) {
        for (std::size_t i = 0; i < frames; ++i) {
          unsigned shift = std::min<unsigned>(
              bps - 2, static_cast<unsigned>((i / 3000) % 5) * (bps >= 16 ? 2 : 1));
          for (unsigned c = 0; c < channels; ++c) {
            auto& v = out[i * channels + c];
            v = static_cast<std::int32_t>((std::int64_t(v) >> shift) * (std::int64_t(1) << shift));
          }
        }
      }
      break;
    }
    case Signal::adversarial:
      return make_adversarial(channels, bps, frames, {}, seed);
  }
  return out;
}

std::vector<std::int32_t> make_adversarial(unsigned channels, unsigned bps, std::size_t frames,
                                           const AdversarialParams& params, std::uint64_t seed) {
  check(channels, bps);
  std::vector<std::int32_t> out(frames * channels);
  std::size_t bytes_per_channel = (frames * bps + 7) / 8;
  for (unsigned c = 0; c < channels; ++c) {
    Rng rng{seed * 1000003 + c};
    auto pool = adversarial_pool(bytes_per_channel + 1, channels, bps, params, rng);
    unpack(pool, 0, bps, frames, channels, c, out);
  }
  return out;
}

std::vector<std::int32_t> samples_from_bytes(std::span<const std::uint8_t> bytes, unsigned channels,
                                             unsigned bps, std::size_t frames) {
  check(channels, bps);
  if (bytes.empty()) throw std::invalid_argument("samples_from_bytes: no bytes");
  std::vector<std::int32_t> out(frames * channels);
  for (unsigned c = 0; c < channels; ++c)
    unpack(bytes, c * bytes.size() / channels, bps, frames, channels, c, out);
  return out;
}

}  // namespace sigpu::test
