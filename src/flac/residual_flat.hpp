// Partitioned Rice residuals (RFC 9639 section 9.2.7) in one flat loop, for the GPU's
// one-thread-per-frame parse, where the 32 lanes of a warp walk 32 different frames.
//
// The plain twin (residual.hpp) nests a loop over the samples of a partition inside a loop over
// the partitions, and its unary reader loops until it sees a one bit. Lanes whose partitions
// end at different samples then leave the inner loop at different times, and those that left
// wait there for the others (the inner loop's exit is where a warp reconverges): on the H100 the
// thread parse ran with 7.7 of 32 lanes active (docs/flac.md). Here one loop runs over every sample
// of the subframe with the same short instruction sequence for every lane: the quotient is the
// leading-zero count of a 64-bit bit cache, the remainder the k bits after it; on the device the
// cache is topped up from words each lane streams through shared memory (FlatBits). A new
// partition (new k, or an escaped partition), a code longer than the cache and the end of the
// data are rare branches inside the loop; the slow path reads exactly as BitReader does, so
// errors and end positions are the plain twin's. The samples leave four to a store
// (decode_residual_flat).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/bit_reader.hpp"
#include "core/hd.hpp"
#include "flac/errors.hpp"
#include "flac/flat_out.hpp"
#include "flac/residual.hpp"
#include "flac/rice_segment.hpp"
#include "flac/subframe.hpp"

namespace sigpu::flac {

/// A lane's ring (FlatBits): kFlatRingWords words in chunks of kFlatChunkWords, each filled by
/// one 16-byte copy. The lanes of a block (kFlatRingLanes, one warp) lie side by side chunk by
/// chunk: chunk c of lane q is words [(c * kFlatRingLanes + q) * kFlatChunkWords, +4) of the
/// block's rings, so that a lane's word falls on one of 4 banks of its own and the lanes that
/// share those banks (q, q + 8, q + 16, q + 24) meet only when they read the same word of a chunk.
inline constexpr unsigned kFlatRingWords = 32;
inline constexpr unsigned kFlatChunkWords = 4;
inline constexpr unsigned kFlatRingLanes = 32;

/// An MSB-first bit cache over 32-bit words. Reads never touch memory outside
/// [data, data + size); bits past the end read as zero. Whole words are read at 4-byte-aligned
/// offsets, so on the device `data` must be 4-byte aligned (cudaMalloc memory is).
///
/// On the device a lane may stream its words through a ring in shared memory (`ring`, this
/// lane's first word; used when `data` is 16-byte aligned): stream() asks for the next chunk of
/// 16 bytes with an asynchronous copy (cp.async) and the cache is topped up from words that have
/// arrived. One copy per 16 bytes, not per word: each copy of the warp touches 32 lines (32
/// frames) and waits in the load/store queue with the turn's shared-memory loads; a tenth of
/// the parse's instructions went (alone it left the hour's time as it was: the residual stores,
/// FlatOut, were the queue's main load then). A lane's own lookahead in a register
/// hid nothing in the parse, where the 32 lanes walk 32 frames: a register has one scoreboard
/// for the whole warp, so a lane topping up waited for the load another lane had just started
/// into the same register, and 58 % of the parse's stall samples were such waits (Nsight
/// Compute, the hour, 2026-11-22). Copies into shared memory hold no register, and the lanes
/// ask for them together, once per turn of the residual loop. Words the ring does not hold
/// yet are read from global memory, as they are without a ring.
class FlatBits {
 public:
  /// Words a turn of the residual loop may take into the cache (Ahead): one per code.
  static constexpr unsigned kTurnWords = 4;

  SIGPU_HD FlatBits(const std::uint8_t* data, std::size_t size, std::uint64_t bit,
                    std::uint32_t* ring = nullptr)
      : data_(data), size_(size), base_(static_cast<std::size_t>(bit >> 5) << 2) {
#ifdef __CUDA_ARCH__
    if (ring && reinterpret_cast<std::uintptr_t>(data) % 16 == 0) {
      // Words are counted from the 16-byte chunk of the first bit, which the copies read whole.
      ring_ = ring;
      ring_shared_ = static_cast<std::uint32_t>(__cvta_generic_to_shared(ring));
      read_ = static_cast<std::uint32_t>(bit >> 5) % kFlatChunkWords;
      base_ = static_cast<std::size_t>(bit >> 7) << 4;
      src_ = data + base_;
      const std::size_t whole = base_ < size ? (size - base_) / 16 * kFlatChunkWords : 0;
      whole_ = whole < 0xFFFFFFFFu ? static_cast<std::uint32_t>(whole) : 0xFFFFFFFFu;
      // The first half ring at once: the first codes wait for it here, once per subframe.
      for (unsigned j = 0; j < kFlatRingWords / 2; j += kFlatChunkWords) copy_chunk();
      copy_async_commit();
      copy_async_wait<0>();
      safe_ = h1_ = h2_ = h3_ = h4_ = issued_;
    }
#else
    (void)ring;
#endif
    cache_ = std::uint64_t(fetch()) << 32;
    count_ = 32;
    consume(static_cast<unsigned>(bit & 31));
  }

  // The copies in flight land before the ring is used again (the next subframe's FlatBits, or
  // another block, once this one has ended).
  SIGPU_HD ~FlatBits() {
#ifdef __CUDA_ARCH__
    if (ring_) copy_async_wait<0>();
#endif
  }
  FlatBits(const FlatBits&) = delete;
  FlatBits& operator=(const FlatBits&) = delete;

  /// Bits consumed from the start of `data`.
  SIGPU_HD std::uint64_t position() const {
    return (std::uint64_t(base_) + std::uint64_t(read_) * 4) * 8 - count_;
  }
  SIGPU_HD bool overrun() const {
    return position() > std::uint64_t(size_) * 8;
  }

  /// Keeps at least 33 bits in the cache.
  SIGPU_HD SIGPU_FORCEINLINE void top_up() {
    if (count_ > 32) return;
    cache_ |= std::uint64_t(fetch()) << (32 - count_);
    count_ += 32;
  }

  /// With a ring: asks for the next chunk when the ring has room for it and learns which
  /// words have arrived, and makes sure the next kTurnWords have (see Ahead). Called by every
  /// lane at the same point of each turn of its loop. Copies asked for four calls ago have
  /// arrived (cp.async.wait_group 3): a turn's work hides the copies' latency. A chunk per turn
  /// (128 bits) outruns the codes: a turn takes about 50 bits at the hour's Rice parameters.
  SIGPU_HD SIGPU_FORCEINLINE void stream() {
#ifdef __CUDA_ARCH__
    if (!ring_) return;
    copy_async_wait<3>();
    safe_ = h4_;
    h4_ = h3_;
    h3_ = h2_;
    h2_ = h1_;
    if (issued_ + kFlatChunkWords <= read_ + kFlatRingWords) copy_chunk();
    copy_async_commit();
    h1_ = issued_;
    if (read_ + kTurnWords > safe_) catch_up();
#endif
  }

#ifdef __CUDA_ARCH__
  /// The words a turn's codes may take into the cache (at most one each, kTurnWords codes):
  /// with a ring, stream() has made sure they have arrived, so the turn loads them at its
  /// start, together, and its codes take them without a branch or a wait. Refilled as each
  /// lane needed it, a word was a branch that split the warp (10 of 32 lanes on it, Nsight
  /// Compute) and a shared-memory load on the chain from one code to the next (the hour's
  /// parse on the H100: 3.36-3.60 -> 3.30-3.31 ms).
  struct Ahead {
    std::uint32_t w[kTurnWords];
  };

  __device__ SIGPU_FORCEINLINE bool streaming() const {
    return ring_ != nullptr;
  }

  __device__ SIGPU_FORCEINLINE Ahead ahead() const {
    Ahead a;
    SIGPU_UNROLL
    for (unsigned j = 0; j < kTurnWords; ++j)
      a.w[j] = BitWindow::big_endian(ring_[slot(read_ + j)]);
    return a;
  }

  /// top_up() from the turn's words, without a branch.
  __device__ SIGPU_FORCEINLINE void top_up(Ahead& a) {
    const bool need = count_ <= 32;
    cache_ |= need ? std::uint64_t(a.w[0]) << (32 - count_) : 0;
    count_ += need ? 32 : 0;
    read_ += need;
    SIGPU_UNROLL
    for (unsigned j = 0; j + 1 < kTurnWords; ++j) a.w[j] = need ? a.w[j + 1] : a.w[j];
  }
#endif

  /// Reads n bits, 0 <= n <= 32.
  SIGPU_HD SIGPU_FORCEINLINE std::uint32_t read(unsigned n) {
    if (count_ < n) top_up();
    const std::uint32_t v = static_cast<std::uint32_t>((cache_ >> 1) >> (63 - n));
    consume(n);
    return v;
  }

  /// An n-bit two's complement value, 0 <= n <= 32.
  SIGPU_HD SIGPU_FORCEINLINE std::int32_t read_signed(unsigned n) {
    if (n == 0) return 0;
    return static_cast<std::int32_t>(read(n) << (32 - n)) >> (32 - n);
  }

  /// Zero bits up to and including the next one bit (BitReader::read_unary): at the end of the
  /// data it stops, returning the zeros seen, with overrun() set.
  SIGPU_HD std::uint32_t read_unary() {
    std::uint32_t zeros = 0;
    for (;;) {
      top_up();
      const unsigned lz = static_cast<unsigned>(count_leading_zeros64(cache_));
      if (lz < count_) {
        consume(lz + 1);
        return zeros + lz;
      }
      zeros += count_;
      consume(count_);
      if (overrun()) return zeros;
    }
  }

  /// The Rice code with parameter k (k <= 30) when `active`, it lies whole in the cache and its
  /// quotient is at most max_quotient (at most 31): read, its zigzagged value into *u, true.
  /// Otherwise false, nothing read. Without a branch: the lanes of a warp walk different frames and
  /// would part at one. The caller has topped up, so the cache holds at least 33 bits.
  SIGPU_HD SIGPU_FORCEINLINE bool try_rice(unsigned k, std::uint32_t max_quotient, bool active,
                                           std::uint32_t* u) {
    // The quotient comes from the cache's top word alone (a longer one takes the slow path):
    // a 32-bit leading-zero count is one GPU instruction where a 64-bit one is five, on the
    // chain from one code to the next (the hour's parse: 1 % faster on the H100). A top word
    // of zeros counts 32, over any max_quotient.
    const unsigned q =
        static_cast<unsigned>(count_leading_zeros32(static_cast<std::uint32_t>(cache_ >> 32)));
    const unsigned len = q + 1 + k;
    const bool ok = active && len <= count_ && q <= max_quotient;
    const auto after_stop = static_cast<std::uint32_t>((cache_ << (q + 1)) >> 32);
    *u = (q << k) | ((after_stop >> 1) >> (31 - k));
    const unsigned taken = ok ? len : 0;  // at most 31 + 1 + 30 bits
    cache_ <<= taken;
    count_ -= taken;
    return ok;
  }

 private:
  SIGPU_HD SIGPU_FORCEINLINE void consume(unsigned n) {
    cache_ = n < 64 ? cache_ << n : 0;
    count_ -= n;
  }

  /// The next word, in the bitstream's order.
  SIGPU_HD SIGPU_FORCEINLINE std::uint32_t fetch() {
    const std::uint32_t w = read_;
    ++read_;
#ifdef __CUDA_ARCH__
    if (w < safe_) return BitWindow::big_endian(ring_[slot(w)]);
#endif
    return BitWindow{data_, size_}.word(base_ + std::size_t(w) * 4);
  }

#ifdef __CUDA_ARCH__
  /// Word w's place in the ring, from ring_.
  __device__ static SIGPU_FORCEINLINE unsigned slot(std::uint32_t w) {
    return w / kFlatChunkWords % (kFlatRingWords / kFlatChunkWords) * kFlatRingLanes *
               kFlatChunkWords +
           w % kFlatChunkWords;
  }

  /// Asks for the chunk of word issued_ into its place: the bytes of it that are in the data,
  /// zeros after.
  __device__ SIGPU_FORCEINLINE void copy_chunk() {
    const std::size_t byte = base_ + std::size_t(issued_) * 4;
    // The data's last bytes, or none, past whole_ (rare); an address in the data all the same.
    const unsigned valid = issued_ < whole_ ? 16u : byte < size_ ? unsigned(size_ - byte) : 0u;
    const std::uint8_t* src = valid ? src_ : data_;
    copy_async_16(ring_shared_ + slot(issued_) * 4, src, valid);
    issued_ += kFlatChunkWords;
    src_ += 16;
  }

  /// The next kTurnWords words into the ring and arrived (rare: a lane that read faster than
  /// its copies).
  __device__ void catch_up() {
    while (issued_ < read_ + kTurnWords) copy_chunk();
    copy_async_commit();
    copy_async_wait<0>();
    safe_ = h1_ = h2_ = h3_ = h4_ = issued_;
  }
#endif

  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t base_;         ///< byte offset of word 0: the word of the first bit
  std::uint64_t cache_ = 0;  ///< unread bits, MSB first; bits below count_ are zero
  unsigned count_ = 0;       ///< valid bits in cache_
  std::uint32_t read_ = 0;   ///< words taken into the cache
#ifdef __CUDA_ARCH__
  std::uint32_t* ring_ = nullptr;
  std::uint32_t ring_shared_ = 0;                    ///< ring_ as a shared-memory address
  const std::uint8_t* src_ = nullptr;                ///< word issued_ in the data
  std::uint32_t whole_ = 0;                          ///< words in whole chunks from base_ on
  std::uint32_t issued_ = 0;                         ///< words asked for
  std::uint32_t safe_ = 0;                           ///< words that have arrived in the ring
  std::uint32_t h1_ = 0, h2_ = 0, h3_ = 0, h4_ = 0;  ///< issued_ after the last four stream()s
#endif
};

/// Decodes the residual whose layout `l` (checked against the block and `order`) has just been
/// read, from `bits`, into out[order .. n): the same values, errors and end position as
/// decode_residual.
///
/// One loop runs over the whole subframe with the same instructions for every lane: each turn
/// either starts a partition (rare) or decodes the codes up to the next 16-byte boundary of
/// `out` (four, unless the partition ends sooner or a code needs the slow path). On the device
/// four 32-bit samples then leave together, to the lane's staging in shared memory when `stage`
/// is given (FlatOut), else in one 16-byte store: with one store per sample, the stores of 32
/// lanes to 32 frames kept the parse's path to L2 67 % busy (Nsight Compute) while its ALUs
/// idled (7.7 -> 3.7 ms for the hour on the H100). The turn of four codes also pays the loop's
/// own bookkeeping once per four codes instead of once per code (docs/flac.md).
///
/// S is std::int32_t, or std::int16_t for a narrow scratch, whose values that do not fit go to
/// `spill` (FlatOut).
template <typename S>
SIGPU_HD FrameError decode_residual_flat(FlatBits& bits, const ResidualLayout& l, S* out,
                                         unsigned order, void* stage = nullptr,
                                         NarrowSpill* spill = nullptr) {
  // out + i is aligned to four samples when (i + phase) % 4 == 0.
  const auto phase = static_cast<unsigned>(reinterpret_cast<std::uintptr_t>(out) / sizeof(S));
  FlatOut<S> o(out, order, stage, spill);
  unsigned i = order, partition = 0, partition_end = order, k = 0;  // a header comes first
  std::uint32_t max_quotient = 0;
  for (;;) {
    bits.stream();
    if (i == partition_end) {  // a new partition (rare): its parameter, or its escaped samples
      if (partition > 0 && bits.overrun()) return FrameError::truncated;
      if (partition == l.partitions) {
        o.finish(i);
        return FrameError::ok;
      }
      partition_end = ++partition * l.partition_size;
      k = bits.read(l.param_bits);
      if (k == l.escape) {
        const unsigned width = bits.read(5);
        while (i < partition_end) {
          o.put(i, bits.read_signed(width));
          o.reached(++i);
        }
      }
      max_quotient = (0xFFFFFFFFu >> k) < 31 ? 0xFFFFFFFFu >> k : 31;
      continue;
    }
    const unsigned to_boundary = 4 - ((i + phase) & 3);
    const unsigned want = to_boundary < partition_end - i ? to_boundary : partition_end - i;
    std::int32_t v[4] = {};
    unsigned got = 0;
    // Four codes, each taken while the ones before it were and it is wanted; the same
    // instructions for every lane.
    auto codes = [&](auto&& top_up) {
      SIGPU_UNROLL
      for (unsigned j = 0; j < 4; ++j) {
        top_up();
        std::uint32_t u;
        const bool ok = bits.try_rice(k, max_quotient, j < want && got == j, &u);
        v[j] = zigzag_decode(u);
        got += ok;
      }
    };
#ifdef __CUDA_ARCH__
    if (bits.streaming()) {
      FlatBits::Ahead a = bits.ahead();
      codes([&] { bits.top_up(a); });
    } else
#endif
      codes([&] { bits.top_up(); });
    if (got == 4) {
      o.put4(i, v);
      i += 4;
      o.reached(i);
      continue;
    }
    SIGPU_UNROLL
    for (unsigned j = 0; j < 4; ++j)
      if (j < got) o.put(i + j, v[j]);
    i += got;
    o.reached(i);
    if (got == want) continue;
    // A code longer than the cache or with a long quotient, or the end of the data (rare): read
    // as BitReader reads it.
    const std::uint32_t q = bits.read_unary();
    if (q > (0xFFFFFFFFu >> k))
      return bits.overrun() ? FrameError::truncated : FrameError::rice_overflow;
    o.put(i, zigzag_decode((q << k) | bits.read(k)));
    o.reached(++i);
  }
}

/// The Bulk of parse_subframe (see SerialBulk) with the residuals read by decode_residual_flat;
/// warm-up and VERBATIM samples are read as the serial twin reads them. Into a narrow scratch
/// (std::int16_t samples, at most 16-bit audio), the values that do not fit go to `spill`.
struct FlatBulk : SerialBulk {
  const std::uint8_t* data;
  std::size_t size;
  std::uint32_t* ring;  ///< this lane's ring (FlatBits), or null
  void* stage;          ///< this lane's staging (FlatOut), or null
  NarrowSpill* spill;   ///< for a narrow scratch

  SIGPU_HD FlatBulk(const std::uint8_t* d, std::size_t n, std::uint32_t* r = nullptr,
                    void* st = nullptr, NarrowSpill* sp = nullptr)
      : data(d), size(n), ring(r), stage(st), spill(sp) {}

  template <typename S>
  SIGPU_HD void warmup(BitReader& br, S* out, unsigned n, unsigned bits) const {
    if constexpr (sizeof(S) == 2) {
      for (unsigned i = 0; i < n; ++i) {
        const std::int32_t v = br.read_signed(bits);  // bits <= 17: the side channel
        spill->keep(out + i, v);
        out[i] = static_cast<S>(v);
      }
    } else {
      read_samples(br, out, n, bits);
    }
  }
  template <typename S>
  SIGPU_HD FrameError verbatim(BitReader& br, S* out, unsigned n, unsigned bits) const {
    warmup(br, out, n, bits);
    return FrameError::ok;
  }

  template <typename S>
  SIGPU_HD FrameError residual(BitReader& br, S* out, unsigned n, unsigned order) const {
    ResidualLayout l;
    const FrameError le = read_residual_layout(br, n, order, l);
    if (le != FrameError::ok) return le;
    FlatBits bits(data, size, br.bit_position(), ring);
    const FrameError e = decode_residual_flat(bits, l, out, order, stage, spill);
    if (e != FrameError::ok) return e;
    const std::uint64_t end = bits.position();  // within the data: not overrun
    br = BitReader(data, size, static_cast<std::size_t>(end >> 3));
    br.skip(end & 7);
    return FrameError::ok;
  }
};

}  // namespace sigpu::flac
