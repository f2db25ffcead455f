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
//
// The scratch holds 32-bit samples, or 16-bit ones (a narrow scratch: half the bytes written
// here and read back by the restore). A value that does not fit (a residual or a side channel's
// sample past 16 bits: a few in a minute of music) is listed whole beside it (NarrowSpill), and
// the restore takes it from there.
#pragma once

#include <cstdint>

#include "core/hd.hpp"

namespace sigpu::flac {

/// Bytes in a block of staging, and the bytes between two lanes' staging in shared memory: two
/// blocks, and 16 bytes more so that the lanes of a quarter-warp storing 16 bytes at the same
/// place of their blocks spread over the banks.
inline constexpr unsigned kFlatBlockBytes = 256;
inline constexpr unsigned kFlatStageBytes = 2 * kFlatBlockBytes + 16;

/// Whether v fits a 16-bit scratch sample.
SIGPU_HD SIGPU_FORCEINLINE bool fits_narrow(std::int32_t v) {
  return (static_cast<std::uint32_t>(v) + 0x8000u) >> 16 == 0;
}

/// A sample of a narrow scratch that does not fit it: its place, counted from its frame's first
/// sample, its value, and the frame's next one (a list in sample order), or kNoException.
struct NarrowException {
  std::uint32_t at;
  std::int32_t value;
  std::uint32_t next;
};
inline constexpr std::uint32_t kNoException = ~0u;

/// Lists a frame's samples that do not fit a narrow scratch in a pool shared by all frames.
/// When the pool is full the frame is `refused`, and the decode must be made again with 32-bit
/// scratch (a stream of noise, say, where every other sample would be listed).
struct NarrowSpill {
  NarrowException* pool;
  std::uint32_t* used;  ///< entries taken from the pool, by every frame
  std::uint32_t capacity;
  const std::int16_t* frame;  ///< the frame's first sample
  std::uint32_t head = kNoException, tail = kNoException;
  bool refused = false;

  /// `value`, to be stored at `where` cut to 16 bits: listed when it does not fit.
  SIGPU_HD SIGPU_FORCEINLINE void keep(const std::int16_t* where, std::int32_t value) {
    if (!fits_narrow(value)) add(where, value);
  }

 private:
  SIGPU_HD void add(const std::int16_t* where, std::int32_t value) {
#ifdef __CUDA_ARCH__
    const std::uint32_t e = atomicAdd(used, 1u);
#else
    const std::uint32_t e = (*used)++;
#endif
    if (e >= capacity) {
      refused = true;
      return;
    }
    pool[e] = {static_cast<std::uint32_t>(where - frame), value, kNoException};
    if (tail == kNoException)
      head = e;
    else
      pool[tail].next = e;
    tail = e;
  }
};

/// S is std::int32_t, or std::int16_t for a narrow scratch.
template <typename S>
class FlatOut {
  static_assert(sizeof(S) == 4 || sizeof(S) == 2);
  static constexpr unsigned kBlock = kFlatBlockBytes / sizeof(S);  ///< samples per block
  static constexpr unsigned kPer16 = 16 / sizeof(S);               ///< samples per 16 bytes

 public:
  /// The loop writes out[first, n); `stage` is this lane's staging (kFlatStageBytes of shared
  /// memory, 16-byte aligned), or null: staging is used on sm_90 and later (bulk copies).
  /// `spill` (narrow only) lists the samples that do not fit.
  SIGPU_HD FlatOut(S* out, unsigned first, void* stage, NarrowSpill* spill)
      : out_(out), first_(first), spill_(spill) {
#ifdef __CUDA_ARCH__
    if (__CUDA_ARCH__ >= 900 && stage) {
      stage_ = static_cast<S*>(stage);
      stage_shared_ = static_cast<unsigned>(__cvta_generic_to_shared(stage));
      phase_ = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(out) / sizeof(S)) % kBlock;
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

  SIGPU_HD SIGPU_FORCEINLINE void put(unsigned i, std::int32_t v) {
    if constexpr (sizeof(S) == 2) spill_->keep(out_ + i, v);
#ifdef __CUDA_ARCH__
    if (stage_) {
      stage_[slot(i)] = static_cast<S>(v);
      return;
    }
#endif
    out_[i] = static_cast<S>(v);
  }

  /// Samples i .. i + 3, out + i aligned to their size (16 or 8 bytes).
  SIGPU_HD SIGPU_FORCEINLINE void put4(unsigned i, const std::int32_t (&v)[4]) {
    const auto w = [&](unsigned j) { return static_cast<std::uint32_t>(v[j]); };
    if constexpr (sizeof(S) == 2) {
      if (((w(0) + 0x8000u) | (w(1) + 0x8000u) | (w(2) + 0x8000u) | (w(3) + 0x8000u)) >> 16)
        for (unsigned j = 0; j < 4; ++j) spill_->keep(out_ + i + j, v[j]);
    }
#ifdef __CUDA_ARCH__
    if constexpr (sizeof(S) == 4) {
      if (stage_)
        *reinterpret_cast<uint4*>(stage_ + slot(i)) = make_uint4(w(0), w(1), w(2), w(3));
      else
        store_global_16(out_ + i, w(0), w(1), w(2), w(3));
    } else {
      const uint2 pair = make_uint2((w(0) & 0xFFFFu) | w(1) << 16, (w(2) & 0xFFFFu) | w(3) << 16);
      *reinterpret_cast<uint2*>(stage_ ? stage_ + slot(i) : out_ + i) = pair;
    }
#else
    for (unsigned j = 0; j < 4; ++j) out_[i + j] = static_cast<S>(v[j]);
#endif
  }

  /// Every sample of [first, i) has been put: a block that ends at i leaves.
  SIGPU_HD SIGPU_FORCEINLINE void reached(unsigned i) {
#ifdef __CUDA_ARCH__
    if (stage_ && (i + phase_) % kBlock == 0) block_done(i);
#else
    (void)i;
#endif
  }

  /// The residual ends at i: the samples of its last, partial block.
  SIGPU_HD void finish(unsigned i) {
#ifdef __CUDA_ARCH__
    if (!stage_) return;
    const unsigned r = (i + phase_) % kBlock, block = i > r ? i - r : 0;
    store_samples(block > first_ ? block : first_, i);
#else
    (void)i;
#endif
  }

 private:
#ifdef __CUDA_ARCH__
  /// Sample i's place in the staging: the block of out + i, in the slot of its parity.
  __device__ SIGPU_FORCEINLINE unsigned slot(unsigned i) const {
    return (i + phase_) % (2 * kBlock);
  }

  /// The block of out ending at sample e is complete.
  __device__ void block_done(unsigned e) {
    if (e < first_ + kBlock) {  // it holds warm-up samples, or another subframe's
      store_samples(first_, e);
      return;
    }
    const unsigned s = e - kBlock;
    bulk_fence_shared();
    bulk_copy_to_global(out_ + s, stage_shared_ + slot(s) * sizeof(S), kFlatBlockBytes);
    bulk_commit();
    bulk_wait_read<1>();  // the block before, whose slot the next samples take, has been read
  }

  /// Samples [from, to) of out from the staging, by 16 bytes where out is aligned.
  __device__ void store_samples(unsigned from, unsigned to) {
    unsigned j = from;
    for (; j < to && (j + phase_) % kPer16; ++j) out_[j] = stage_[slot(j)];
    for (; j + kPer16 <= to; j += kPer16) {
      const uint4 v = *reinterpret_cast<const uint4*>(stage_ + slot(j));
      store_global_16(out_ + j, v.x, v.y, v.z, v.w);
    }
    for (; j < to; ++j) out_[j] = stage_[slot(j)];
  }

  S* stage_ = nullptr;
  unsigned stage_shared_ = 0;
  unsigned phase_ = 0;  ///< out + i starts a block when (i + phase_) % kBlock == 0
#endif
  S* out_;
  unsigned first_;
  NarrowSpill* spill_;
};

}  // namespace sigpu::flac
