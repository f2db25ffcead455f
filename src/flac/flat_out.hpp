// Where the flat residual loop (residual_flat.hpp) puts its samples.
//
// On the host, and on the device without staging, straight into the subframe's scratch. On the
// GPU's flat parse the 32 lanes of a warp write 32 different frames, so a 16-byte store of each
// lane's four samples touched 32 lines: 31 L1 tag requests per store, whose queue held the
// store's registers and delayed the ring's shared-memory loads behind it. Without those stores
// the hour's parse took 2.1 ms instead of 3.3-3.7 (H100, 2026-11-23). With staging, each lane
// collects its samples in two blocks of 256 bytes (two lines) of shared memory, and every block
// of the output that the residual fills whole leaves in one bulk copy (cp.async.bulk), whole
// lines written by the copy engine. A bulk copy's operands must be the same for the whole warp,
// so the copies of a warp's lanes go one after the other, about ten instructions each: with
// blocks of one line they were 12 % of the parse's instructions. The partial blocks at the two
// ends of a subframe's residual (the block it shares with the warm-up or another subframe) are
// stored by the lane itself.
#pragma once

#include <cstdint>

#include "core/hd.hpp"

namespace sigpu::flac {

/// Samples in a block of staging (256 bytes of int32), and the bytes between two lanes' staging
/// in shared memory: two blocks, and 16 bytes more so that the lanes of a quarter-warp storing
/// 16 bytes at the same place of their blocks spread over the banks.
inline constexpr unsigned kFlatBlockSamples = 64;
inline constexpr unsigned kFlatStageBytes = 2 * kFlatBlockSamples * 4 + 16;

template <typename S>
class FlatOut {
 public:
  /// The loop writes out[first, n); `stage` is this lane's staging (kFlatStageBytes of shared
  /// memory, 16-byte aligned), or null. Staging is used for 32-bit samples on sm_90 and later
  /// (bulk copies).
  SIGPU_HD FlatOut(S* out, unsigned first, void* stage) : out_(out), first_(first) {
#ifdef __CUDA_ARCH__
    if (__CUDA_ARCH__ >= 900 && sizeof(S) == 4 && stage) {
      stage_ = static_cast<S*>(stage);
      stage_shared_ = static_cast<unsigned>(__cvta_generic_to_shared(stage));
      phase_ = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(out) / 4) % kFlatBlockSamples;
    }
#else
    (void)stage;
#endif
  }

  /// The bulk copies finished: their blocks are in global memory, and the staging is free for
  /// the next subframe.
  SIGPU_HD ~FlatOut() {
#ifdef __CUDA_ARCH__
    if (stage_) bulk_wait<0>();
#endif
  }
  FlatOut(const FlatOut&) = delete;
  FlatOut& operator=(const FlatOut&) = delete;

  SIGPU_HD SIGPU_FORCEINLINE void put(unsigned i, S v) {
#ifdef __CUDA_ARCH__
    if (stage_) {
      stage_[slot(i)] = v;
      return;
    }
#endif
    out_[i] = v;
  }

  /// Samples i .. i + 3, out + i 16-byte aligned.
  SIGPU_HD SIGPU_FORCEINLINE void put4(unsigned i, const S (&v)[4]) {
#ifdef __CUDA_ARCH__
    if constexpr (sizeof(S) == 4) {
      const auto w = [&](unsigned j) { return static_cast<std::uint32_t>(v[j]); };
      if (stage_)
        *reinterpret_cast<uint4*>(stage_ + slot(i)) = make_uint4(w(0), w(1), w(2), w(3));
      else
        store_global_16(out_ + i, w(0), w(1), w(2), w(3));
    } else
#endif
    {
      for (unsigned j = 0; j < 4; ++j) out_[i + j] = v[j];
    }
  }

  /// Every sample of [first, i) has been put: a block that ends at i leaves.
  SIGPU_HD SIGPU_FORCEINLINE void reached(unsigned i) {
#ifdef __CUDA_ARCH__
    if (stage_ && (i + phase_) % kFlatBlockSamples == 0) block_done(i);
#else
    (void)i;
#endif
  }

  /// The residual ends at i: the samples of its last, partial block.
  SIGPU_HD void finish(unsigned i) {
#ifdef __CUDA_ARCH__
    if (!stage_) return;
    const unsigned r = (i + phase_) % kFlatBlockSamples, block = i > r ? i - r : 0;
    store_samples(block > first_ ? block : first_, i);
#else
    (void)i;
#endif
  }

 private:
#ifdef __CUDA_ARCH__
  /// Sample i's place in the staging: the block of out + i, in the slot of its parity.
  __device__ SIGPU_FORCEINLINE unsigned slot(unsigned i) const {
    return (i + phase_) % (2 * kFlatBlockSamples);
  }

  /// The block of out ending at sample e is complete.
  __device__ void block_done(unsigned e) {
    if (e < first_ + kFlatBlockSamples) {  // it holds warm-up samples, or another subframe's
      store_samples(first_, e);
      return;
    }
    const unsigned s = e - kFlatBlockSamples;
    bulk_fence_shared();
    bulk_copy_to_global(out_ + s, stage_shared_ + slot(s) * 4, kFlatBlockSamples * 4);
    bulk_commit();
    bulk_wait_read<1>();  // the block before, whose slot the next samples take, has been read
  }

  /// Samples [from, to) of out from the staging, by 16 bytes where out is aligned.
  __device__ void store_samples(unsigned from, unsigned to) {
    unsigned j = from;
    for (; j < to && (j + phase_) % 4; ++j) out_[j] = stage_[slot(j)];
    for (; j + 4 <= to; j += 4) {
      const uint4 v = *reinterpret_cast<const uint4*>(stage_ + slot(j));
      store_global_16(out_ + j, v.x, v.y, v.z, v.w);
    }
    for (; j < to; ++j) out_[j] = stage_[slot(j)];
  }

  S* stage_ = nullptr;
  unsigned stage_shared_ = 0;
  unsigned phase_ = 0;  ///< out + i starts a block when (i + phase_) % kFlatBlockSamples == 0
#endif
  S* out_;
  unsigned first_;
};

}  // namespace sigpu::flac
