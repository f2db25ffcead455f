// FIXED/LPC restoration of 32 subframes per warp, with the lanes in step.
//
// One thread walking its own subframe (restore_subframe) makes every load and store of a warp
// touch 32 cache lines, and a warp whose subframes have different orders runs the order's loop
// once per order. Here each lane still owns one subframe's recurrence, but:
//   - every predictor is run as a 32-bit LPC of one order for the whole warp (the largest, in
//     steps of 4): FIXED orders are LPC with the binomial coefficients and no shift, shorter
//     orders get zero coefficients, and VERBATIM and CONSTANT subframes a zero predictor (the
//     latter replaced by its value), so all lanes run the same instructions;
//   - the samples go through a shared-memory tile of 32 samples x 32 subframes: the warp loads
//     and stores one subframe's 32 consecutive samples per instruction (coalesced), and each
//     lane runs its 32 samples from the tile with its coefficients and history in registers.
// The arithmetic is restore_subframe's (32-bit wrapping sums, the shift of the signed sum,
// wrapping adds, the wasted-bits shift), so the results are identical. Subframes whose sums
// need 64 bits (lpc_fits_32) are restored by their lane alone after the warp's loop.
// Every sample of a subframe, warm-up included, passes through the tile, so that once a tile
// is restored it holds samples [i, i + 32) of every lane's subframe: the caller's emit hook
// then stores them, back in place or (RestoreSubframesKernel) straight out as PCM, the frames'
// channels side by side in the tile.
// From a narrow scratch (16-bit samples, flat_out.hpp) a row of the tile arrives as 16-bit
// samples in the upper half of its 32-bit row, and the loop widens them as it goes: sample j is
// read from byte 64 + 2j of the row before the result of sample j is written at byte 4j, and the
// writes stay behind the reads (4j < 64 + 2j for j < 32).
#pragma once

#include <cstdint>
#include <type_traits>

#include "core/hd.hpp"
#include "flac/flat_out.hpp"
#include "flac/subframe.hpp"

namespace sigpu::flac::cuda {

/// The samples of a narrow subframe that did not fit it (NarrowException), one after the other:
/// in registers, where the next one is in the subframe (kNoException: none) and its value; in
/// shared memory (SpillWalk), where the frame's list goes on. Few subframes have any, so the
/// restore's loop holds two registers for them.
struct SpillCursor {
  std::uint32_t at = kNoException;
  std::int32_t value = 0;
};
struct SpillWalk {
  std::uint32_t next, first, end;  ///< the list's next entry; the subframe's samples in the frame
};

/// The next entry of w's list inside its subframe, and w moved past it.
__device__ inline SpillCursor next_spilled(const NarrowException* pool, SpillWalk& w) {
  while (w.next != kNoException) {
    const NarrowException e = pool[w.next];
    w.next = e.next;
    if (e.at < w.first) continue;  // an earlier channel's
    if (e.at < w.end) return {e.at - w.first, e.value};
    w.next = kNoException;
  }
  return {};
}

/// One lane's subframe: x[0, n), restored in place; samples before `from` are passed through
/// (warm-up, or all of a VERBATIM subframe), the rest predicted. S is std::int32_t, or
/// std::int16_t for a narrow scratch (whose subframes are never `alone`: see ParseFramesKernel).
template <typename S>
struct RestoreLane {
  const SubframeParams* p = nullptr;
  S* x = nullptr;
  unsigned n = 0, from = 0, order = 0, wasted = 0;
  int shift = 0;
  bool constant = false, alone = false;  ///< alone: restore_subframe by the lane afterwards
  std::int32_t value = 0;                ///< CONSTANT's
  /// Narrow: the frame's list of the values the scratch could not hold, and where the
  /// subframe starts in the frame.
  std::uint32_t spilled = kNoException, first = 0;

  /// Samples that go through the warp's tile.
  __device__ unsigned tiled() const { return alone ? 0 : n; }
};

/// What the warp loop does for subframe p (x, n its samples).
template <typename S>
__device__ inline RestoreLane<S> restore_lane(const SubframeParams& p, S* x, unsigned n) {
  RestoreLane<S> l;
  l.p = &p;
  l.x = x;
  l.n = n;
  l.wasted = p.wasted;
  l.from = n;  // VERBATIM: passed through
  if (p.kind == SubframeParams::constant) {
    l.constant = true;
    l.value = static_cast<std::int32_t>(p.constant_value);
    l.from = 0;
  } else if (p.kind == SubframeParams::fixed && p.order <= 4) {
    l.order = l.from = p.order < n ? p.order : n;
  } else if (p.kind == SubframeParams::lpc) {
    if (!lpc_fits_32(p.bits, p.precision, p.order)) {
      l.alone = true;
    } else {
      l.order = l.from = p.order < n ? p.order : n;
      l.shift = p.shift;
    }
  }
  return l;
}

/// The coefficients of lane l's predictor as an LPC of order P (zeros past its own order).
template <unsigned P, typename S>
__device__ inline void restore_coefficients(const RestoreLane<S>& l, std::uint32_t (&coef)[P]) {
  // FIXED order k predicts with the binomial coefficients of 1 - (1 - z^-1)^k:
  // c_j = (-1)^j C(k, j + 1).
  const bool fixed = l.order && l.p->kind == SubframeParams::fixed;
  std::int32_t binomial = static_cast<std::int32_t>(l.order);  // C(k, j + 1)
#pragma unroll
  for (unsigned j = 0; j < P; ++j) {
    std::int32_t c = 0;
    if (j < l.order) c = fixed ? (j % 2 ? -binomial : binomial) : l.p->coef[j];
    coef[j] = static_cast<std::uint32_t>(c);
    binomial =
        binomial * (static_cast<std::int32_t>(l.order) - std::int32_t(j) - 1) / std::int32_t(j + 2);
  }
}

/// Samples per lane per tile, and the tile's row pitch (one more, so that a lane's row and a
/// subframe's run both fall on 32 different banks).
inline constexpr unsigned kRestoreTile = 32, kRestorePitch = kRestoreTile + 1;

/// Shared memory one warp needs.
struct RestoreWarpSmem {
  std::int32_t tile[2][32 * kRestorePitch];  ///< the tile restored, and the next one arriving
  void* at[32];                              ///< each lane's samples
  unsigned left[32];                         ///< and how many
  SpillWalk spilled[32];                     ///< narrow: each lane's list
};

/// Where a narrow row starts in its 32-bit row (see the top of the file).
inline constexpr unsigned kNarrowRowOffset = kRestoreTile / 2;

/// Restores the lanes' subframes (a lane with no subframe passes RestoreLane{}), P the warp's
/// padded order. After each tile, emit(s, tile, i) stores it: lane q's samples [i, i + 32) are
/// tile[q * kRestorePitch + j], those below s.left[q] - i valid. All 32 lanes must call it.
template <unsigned P, typename S, typename Emit>
__device__ void warp_restore(const RestoreLane<S>& l, RestoreWarpSmem& s,
                             const NarrowException* pool, Emit&& emit) {
  constexpr bool kNarrow = sizeof(S) == 2;
  const unsigned lane = threadIdx.x % 32;
  std::uint32_t coef[P], past[P] = {};  // past[j] = x[i - 1 - j]
  restore_coefficients<P>(l, coef);
  s.at[lane] = l.x;
  s.left[lane] = l.tiled();
  const unsigned most = __reduce_max_sync(0xFFFFFFFFu, l.tiled());
  SpillCursor spilled;
  if constexpr (kNarrow) {
    s.spilled[lane] = {l.spilled, l.first, l.first + l.n};
    spilled = next_spilled(pool, s.spilled[lane]);
  }
  __syncwarp();
  // The tile at `done` into its buffer with asynchronous copies: the next tile's arrive while
  // the current one is computed. (Loaded into 32 registers, the runs took the kernel to 163
  // registers, 3 blocks per SM and 1.67 waves for the hour.) 32-bit samples: subframe q's run
  // one sample per lane. Narrow: two runs per turn, a pair of samples per lane, by 4-byte copies
  // where the run is 4-byte aligned.
  //
  // A tile whole in every lane's subframe (all but a subframe's last) whose narrow runs lie
  // 4-byte aligned (all but those of odd block sizes) is fetched without the per-run checks:
  // they were a fifth of the hour's restore (Nsight Compute, 2026-11-23).
  const unsigned least = __reduce_min_sync(0xFFFFFFFFu, l.tiled());
  const bool aligned = __all_sync(0xFFFFFFFFu, reinterpret_cast<std::uintptr_t>(l.x) % 4 == 0);
  auto shared_at = [](const std::int32_t* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
  };
  auto fetch = [&](unsigned done) {
    std::int32_t* tile = s.tile[done / kRestoreTile % 2];
    const bool whole = aligned && done + kRestoreTile <= least;
    auto have = [&](unsigned q) { return s.left[q] > done ? s.left[q] - done : 0; };
    if constexpr (kNarrow) {
      const unsigned half = lane / 16, pair = lane % 16;
      auto at = [&](unsigned q) { return tile + q * kRestorePitch + kNarrowRowOffset + pair; };
      auto from = [&](unsigned q) { return static_cast<const S*>(s.at[q]) + done + 2 * pair; };
      if (whole) {
#pragma unroll
        for (unsigned q = half; q < 32; q += 2) copy_async_4(shared_at(at(q)), from(q));
      } else {
#pragma unroll
        for (unsigned q = half; q < 32; q += 2) {
          const unsigned n = have(q);
          if (2 * pair >= n) {
            *at(q) = 0;
          } else if (reinterpret_cast<std::uintptr_t>(from(q)) % 4 == 0) {
            // A last odd sample brings the one after it along: the scratch has room past the
            // narrow samples (it is sized for 32-bit ones), and past `left` nothing is stored.
            copy_async_4(shared_at(at(q)), from(q));
          } else {
            *at(q) = static_cast<std::uint16_t>(from(q)[0]) |
                     (2 * pair + 1 < n ? std::uint32_t{static_cast<std::uint16_t>(from(q)[1])} << 16
                                       : 0u);
          }
        }
      }
    } else {
      auto at = [&](unsigned q) { return tile + q * kRestorePitch + lane; };
      auto from = [&](unsigned q) { return static_cast<const S*>(s.at[q]) + done + lane; };
#pragma unroll
      for (unsigned q = 0; q < 32; ++q) {
        if (whole || lane < have(q))
          copy_async_4(shared_at(at(q)), from(q));
        else
          *at(q) = 0;
      }
    }
    copy_async_commit();
  };
  // A CONSTANT subframe's value laid over its run (which holds nothing) without a branch: a
  // choice between the value and the prediction was a branch around the sum at every sample.
  const std::uint32_t keep = l.constant ? 0u : ~0u;
  const std::uint32_t fill = l.constant ? static_cast<std::uint32_t>(l.value) : 0u;
  fetch(0);
  for (unsigned done = 0; done < most; done += kRestoreTile) {
    if (done + kRestoreTile < most) {
      fetch(done + kRestoreTile);
      copy_async_wait<1>();
    } else {
      copy_async_wait<0>();
    }
    __syncwarp();
    std::int32_t* tile = s.tile[done / kRestoreTile % 2];
    std::int32_t* row = tile + lane * kRestorePitch;
    const std::int16_t* narrow_row = reinterpret_cast<const std::int16_t*>(row + kNarrowRowOffset);
    // With `spills`, the loop also takes the values the narrow scratch could not hold; a
    // separate loop for the few tiles that have any, so that the others keep their registers.
    const unsigned warm = l.from > done ? l.from - done : 0;  // samples passed through
    auto run = [&](auto spills) {
#pragma unroll
      for (unsigned j = 0; j < kRestoreTile; ++j) {
        // The newest sample's term last: the others are ready before it is.
        std::uint32_t sum = 0;
#pragma unroll
        for (unsigned q = P; q-- > 0;) sum += coef[q] * past[q];
        auto raw = static_cast<std::uint32_t>(kNarrow ? std::int32_t{narrow_row[j]} : row[j]);
        if (decltype(spills)::value && done + j == spilled.at) {
          raw = static_cast<std::uint32_t>(spilled.value);
          spilled = next_spilled(pool, s.spilled[lane]);
        }
        const std::uint32_t predicted =
            raw + static_cast<std::uint32_t>(static_cast<std::int32_t>(sum) >> l.shift);
        const std::uint32_t v = ((j < warm ? raw : predicted) & keep) | fill;
        row[j] = static_cast<std::int32_t>(v << l.wasted);
#pragma unroll
        for (unsigned q = P - 1; q > 0; --q) past[q] = past[q - 1];
        past[0] = v;
      }
    };
    if (kNarrow && __any_sync(0xFFFFFFFFu, spilled.at < done + kRestoreTile))
      run(std::true_type{});
    else
      run(std::false_type{});
    __syncwarp();
    emit(s, static_cast<const std::int32_t*>(tile), done);
    __syncwarp();
  }
  if constexpr (!kNarrow) {
    if (l.alone) {
      restore_lpc64(l.x, l.n, l.p->coef, l.p->order, l.p->shift);
      if (l.wasted)
        for (unsigned i = 0; i < l.n; ++i)
          l.x[i] = static_cast<std::int32_t>(static_cast<std::uint32_t>(l.x[i]) << l.wasted);
    }
  }
}

/// The emit hook of warp_restore that writes each tile back in place, except for the lanes in
/// `skip` (whose samples the caller stores itself).
struct WriteBackTile {
  std::uint32_t skip = 0;
  __device__ void operator()(const RestoreWarpSmem& s, const std::int32_t* tile,
                             unsigned done) const {
    const unsigned lane = threadIdx.x % 32;
#pragma unroll
    for (unsigned q = 0; q < 32; ++q) {
      const unsigned have = s.left[q] > done ? s.left[q] - done : 0;
      if (lane < have && !(skip >> q & 1))
        static_cast<std::int32_t*>(s.at[q])[done + lane] = tile[q * kRestorePitch + lane];
    }
  }
};

/// The longest order the restore runs in the same kernel as the common ones (see
/// RestoreSubframesKernel).
inline constexpr unsigned kRestoreShortOrders = 16;

/// warp_restore with the warp's order (the largest of its lanes') rounded up to 4, 8, 12 or 16,
/// or with kLong (an order past kRestoreShortOrders) to 32.
template <bool kLong, typename S, typename Emit>
__device__ inline void warp_restore_any(unsigned order, const RestoreLane<S>& l, RestoreWarpSmem& s,
                                        const NarrowException* pool, Emit&& emit) {
  if constexpr (kLong)
    warp_restore<32>(l, s, pool, emit);
  else if (order <= 4)
    warp_restore<4>(l, s, pool, emit);
  else if (order <= 8)
    warp_restore<8>(l, s, pool, emit);
  else if (order <= 12)
    warp_restore<12>(l, s, pool, emit);
  else
    warp_restore<16>(l, s, pool, emit);
}

}  // namespace sigpu::flac::cuda
