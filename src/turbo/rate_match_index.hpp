// The index math of rate matching (36.212 5.1.4.1), written once for the CPU (rate_match.cpp)
// and the GPU (cuda/rate_match_kernel.cuh): which bit of d0 | d1 | d2 each position of the
// circular buffer w holds, the inverse, where a transmission starts (k0), and the saturating sum
// of HARQ combining.
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/hd.hpp"

namespace sigpu::turbo {

inline constexpr int kSubblockColumns = 32;   // C_subblock
inline constexpr std::int32_t kNullBit = -1;  // a dummy or filler position of w

/// Table 5.1.4-1, P(j): the original column of permuted column j, which is j with its five bits
/// reversed (so P is its own inverse).
SIGPU_HD SIGPU_FORCEINLINE int column_permutation(int j) {
  return ((j & 1) << 4) | ((j & 2) << 2) | (j & 4) | ((j & 8) >> 2) | ((j & 16) >> 4);
}

/// The circular buffer of one code block for one transmission.
struct CircularBuffer {
  int K = 0, F = 0;
  int D = 0;     ///< K + 4: the length of each stream d(i)
  int R = 0;     ///< R_subblock: rows of the sub-block interleaver
  int K_pi = 0;  ///< R * 32
  int N_D = 0;   ///< dummy bits in front of each stream
  int N_cb = 0;  ///< soft buffer entries: positions 0..N_cb - 1 of w
  int k0 = 0;    ///< the first position of redundancy version rv
};

/// K, F and N_cb as RateMatchParams holds them (already checked; N_cb not 0).
SIGPU_HD inline CircularBuffer make_circular_buffer(int K, int F, int N_cb, int rv) {
  CircularBuffer b;
  b.K = K;
  b.F = F;
  b.D = K + 4;
  b.R = (b.D + kSubblockColumns - 1) / kSubblockColumns;  // the least R with D <= 32 R
  b.K_pi = b.R * kSubblockColumns;
  b.N_D = b.K_pi - b.D;
  b.N_cb = N_cb;
  b.k0 = b.R * (2 * ((N_cb + 8 * b.R - 1) / (8 * b.R)) * rv + 2);
  return b;
}

/// The index in d0 | d1 | d2 of the bit at position j (< K_w) of w, or kNullBit. v(i)_k reads
/// y_pi(k), y holding N_D dummy bits and then d(i); the third stream reads one position further
/// on (its pi(k) in 5.1.4.1.1 has a + 1); parity 1 and 2 are interlaced after the K_pi
/// systematic positions; the F filler bits open d0 and d1.
SIGPU_HD inline std::int32_t circular_buffer_source(const CircularBuffer& b, int j) {
  int stream = 0, k = j;
  if (j >= b.K_pi) {
    stream = 1 + (j - b.K_pi) % 2;
    k = (j - b.K_pi) / 2;
  }
  int y = column_permutation(k / b.R) + kSubblockColumns * (k % b.R);
  if (stream == 2) y = y + 1 == b.K_pi ? 0 : y + 1;
  const int i = y - b.N_D;
  if (i < 0 || (stream < 2 && i < b.F)) return kNullBit;
  return stream * b.D + i;
}

/// The inverse: the position in w of bit i (< D) of stream d(stream), or kNullBit for a filler
/// bit. It may be N_cb or beyond: a bit that a limited soft buffer never holds.
SIGPU_HD inline int circular_buffer_position(const CircularBuffer& b, int stream, int i) {
  if (stream < 2 && i < b.F) return kNullBit;
  int y = i + b.N_D;
  if (stream == 2) y = y == 0 ? b.K_pi - 1 : y - 1;
  const int k = column_permutation(y % kSubblockColumns) * b.R + y / kSubblockColumns;
  return stream == 0 ? k : b.K_pi + 2 * k + (stream - 1);
}

/// a + b, saturated for integer LLRs at the symmetric range quantize() uses (+-127, +-32767).
template <class T>
SIGPU_HD SIGPU_FORCEINLINE T saturating_add(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return a + b;
  } else {
    constexpr int hi = sizeof(T) == 1 ? 127 : 32767;
    const int s = int(a) + int(b);
    return static_cast<T>(s > hi ? hi : (s < -hi ? -hi : s));
  }
}

}  // namespace sigpu::turbo
