// Encoded, noisy LTE turbo code blocks for the decoder tests: random information bits per
// block, the 36.212 encoder, BPSK over AWGN at a given Eb/N0, float LLRs.
#pragma once

#include <sigpu/turbo.hpp>

#include <cstdint>
#include <random>
#include <vector>

namespace sigpu::test {

struct TurboFrames {
  std::vector<int> K;
  std::vector<std::uint8_t> info;
  std::vector<float> llr;
};

inline TurboFrames make_turbo_frames(const std::vector<int>& K, double ebn0_db,
                                     std::uint64_t seed) {
  TurboFrames f;
  f.K = K;
  std::mt19937 rng(static_cast<std::uint32_t>(seed));
  for (std::size_t b = 0; b < K.size(); ++b) {
    std::vector<std::uint8_t> c(K[b]);
    for (auto& x : c) x = static_cast<std::uint8_t>(rng() & 1u);
    const auto cw = turbo::encode(c);
    std::vector<float> l(turbo::llr_count(K[b]));
    turbo::awgn_llrs(cw, {.ebn0_db = ebn0_db, .seed = seed}, b, l);
    f.info.insert(f.info.end(), c.begin(), c.end());
    f.llr.insert(f.llr.end(), l.begin(), l.end());
  }
  return f;
}

}  // namespace sigpu::test
