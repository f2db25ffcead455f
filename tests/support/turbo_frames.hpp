// Encoded, noisy LTE turbo code blocks for the decoder tests: the 36.212 encoder, BPSK over
// AWGN at a given Eb/N0, float LLRs; information bits either random per block or the code
// blocks of a segmented transport block (CRC24A, and CRC24B per block).
#pragma once

#include <sigpu/turbo.hpp>

#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace sigpu::test {

/// n values drawn uniformly from the integers [lo, hi], as T (LLRs, soft buffers, bits).
template <typename T>
std::vector<T> random_values(std::size_t n, std::mt19937& rng, int lo, int hi) {
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(dist(rng));
  return v;
}

/// The message of the sigpu::Error f throws, or "(no error)".
inline std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const sigpu::Error& e) {
    return e.what();
  }
  return "(no error)";
}

struct TurboFrames {
  std::vector<int> K;
  std::vector<std::uint8_t> info;
  std::vector<float> llr;

  /// Encodes one more code block and sends it as frame K.size() of the seed's noise.
  void add(std::span<const std::uint8_t> bits, double ebn0_db, std::uint64_t seed) {
    const auto cw = turbo::encode(bits);
    std::vector<float> l(turbo::llr_count(cw.K));
    turbo::awgn_llrs(cw, {.ebn0_db = ebn0_db, .seed = seed}, K.size(), l);
    K.push_back(cw.K);
    info.insert(info.end(), bits.begin(), bits.end());
    llr.insert(llr.end(), l.begin(), l.end());
  }
};

inline TurboFrames make_turbo_frames(const std::vector<int>& K, double ebn0_db,
                                     std::uint64_t seed) {
  TurboFrames f;
  std::mt19937 rng(static_cast<std::uint32_t>(seed));
  for (int k : K) {
    std::vector<std::uint8_t> c(k);
    for (auto& x : c) x = static_cast<std::uint8_t>(rng() & 1u);
    f.add(c, ebn0_db, seed);
  }
  return f;
}

/// The code blocks of one random transport block of A bits.
inline TurboFrames make_turbo_transport_block(int A, double ebn0_db, std::uint64_t seed) {
  std::mt19937 rng(static_cast<std::uint32_t>(seed));
  std::vector<std::uint8_t> tb(A);
  for (auto& x : tb) x = static_cast<std::uint8_t>(rng() & 1u);
  const auto plan = turbo::plan_segmentation(A);
  const auto blocks = turbo::segment(tb, plan);
  TurboFrames f;
  std::size_t at = 0;
  for (int k : plan.K) {
    f.add(std::span<const std::uint8_t>(blocks.data() + at, k), ebn0_db, seed);
    at += k;
  }
  return f;
}

}  // namespace sigpu::test
