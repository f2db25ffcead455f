// Partitioned Rice residuals (RFC 9639 section 9.2.7) in one flat loop, for the GPU's
// one-thread-per-frame parse, where the 32 lanes of a warp walk 32 different frames.
//
// The plain twin (residual.hpp) nests a loop over the samples of a partition inside a loop over
// the partitions, and its unary reader loops until it sees a one bit. Lanes whose partitions
// end at different samples then leave the inner loop at different times, and those that left
// wait there for the others (the inner loop's exit is where a warp reconverges): on the H100 the
// thread parse ran with 7.7 of 32 lanes active (docs/flac.md). Here one loop runs over every sample
// of the subframe with the same short instruction sequence for every lane: the quotient is the
// leading-zero count of a 64-bit bit cache, the remainder the k bits after it, and the cache is
// topped up from a word that was loaded one refill earlier (so the load's latency hides behind
// the codes decoded meanwhile; its byte swap waits for that refill too: swapped at the load,
// the parse took 5.0 ms instead of 4.1). A new partition (new k, or an escaped partition), a code
// longer than the cache and the end of the data are rare branches inside the loop; the slow path
// reads exactly as BitReader does, so errors and end positions are the plain twin's. The samples
// leave four to a store (SampleSink).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/bit_reader.hpp"
#include "core/hd.hpp"
#include "flac/errors.hpp"
#include "flac/residual.hpp"
#include "flac/rice_segment.hpp"
#include "flac/subframe.hpp"

namespace sigpu::flac {

/// An MSB-first bit cache with one word of lookahead. Reads never touch memory outside
/// [data, data + size); bits past the end read as zero. Whole words are loaded at 4-byte-aligned
/// offsets, so on the device `data` must be 4-byte aligned (cudaMalloc memory is).
class FlatBits {
 public:
  SIGPU_HD FlatBits(const std::uint8_t* data, std::size_t size, std::uint64_t bit)
      : data_(data), size_(size), word_(static_cast<std::size_t>(bit >> 5) << 2) {
    cache_ = std::uint64_t(window().word(word_)) << 32;
    next_ = window().raw_word(word_ + 4);
    word_ += 8;
    count_ = 32;
    consume(static_cast<unsigned>(bit & 31));
  }

  /// Bits consumed from the start of `data`.
  SIGPU_HD std::uint64_t position() const { return std::uint64_t(word_ - 4) * 8 - count_; }
  SIGPU_HD bool overrun() const { return position() > std::uint64_t(size_) * 8; }

  /// Keeps at least 33 bits in the cache: appends the lookahead word and loads the next one,
  /// which is not needed before the following refill.
  SIGPU_HD SIGPU_FORCEINLINE void top_up() {
    if (count_ > 32) return;
    cache_ |= std::uint64_t(BitWindow::big_endian(next_)) << (32 - count_);
    count_ += 32;
    next_ = window().raw_word(word_);
    word_ += 4;
#ifdef __CUDA_ARCH__
    // A word ahead hides a few samples' worth of latency, not a trip to memory: the line
    // 256 bytes on is asked into L1 now, once per line.
    if ((word_ & 127) == 0 && word_ + 256 < size_)
      asm volatile("prefetch.global.L1 [%0];" ::"l"(data_ + word_ + 256));
#endif
  }

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

  /// The Rice code with parameter k (k <= 30) when it lies whole in the cache and its quotient
  /// is at most max_quotient: its zigzagged value into *u, true. Otherwise false, nothing read.
  /// The caller has topped up, so the cache holds at least 33 bits.
  SIGPU_HD SIGPU_FORCEINLINE bool try_rice(unsigned k, std::uint32_t max_quotient,
                                           std::uint32_t* u) {
    // The quotient comes from the cache's top word alone (a longer one takes the slow path):
    // a 32-bit leading-zero count is one GPU instruction where a 64-bit one is five, on the
    // chain from one code to the next (the hour's parse: 1 % faster on the H100).
    const unsigned q =
        static_cast<unsigned>(count_leading_zeros32(static_cast<std::uint32_t>(cache_ >> 32)));
    const unsigned len = q + 1 + k;
    if (q > 31 || len > count_ || q > max_quotient) return false;
    const auto after_stop = static_cast<std::uint32_t>((cache_ << (q + 1)) >> 32);
    *u = (q << k) | ((after_stop >> 1) >> (31 - k));
    cache_ <<= len;  // at most 31 + 1 + 30 bits
    count_ -= len;
    return true;
  }

 private:
  SIGPU_HD SIGPU_FORCEINLINE void consume(unsigned n) {
    cache_ = n < 64 ? cache_ << n : 0;
    count_ -= n;
  }

  SIGPU_HD SIGPU_FORCEINLINE BitWindow window() const {
    return {data_, size_};
  }

  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t word_;         ///< byte offset of the word after next_
  std::uint64_t cache_ = 0;  ///< unread bits, MSB first; bits below count_ are zero
  std::uint32_t next_ = 0;   ///< the word after the cache's bits, as loaded (raw_word)
  unsigned count_ = 0;       ///< valid bits in cache_
};

/// Where decode_residual_flat puts its samples. On the device four consecutive 32-bit samples
/// leave in one 16-byte store: the lanes of a warp write 32 different frames, so each store is
/// an L2 request of its own, and with one per sample those requests kept the parse's path to
/// L2 67 % busy (Nsight Compute) while its ALUs idled; in fours, the hour's parse went from
/// 7.7 to 3.7 ms on the H100 (docs/flac.md).
template <typename S>
class SampleSink {
 public:
  SIGPU_HD explicit SampleSink(S* out) : out_(out) {}

  /// out[i] = v; i is one more than the previous call's.
  SIGPU_HD SIGPU_FORCEINLINE void put(unsigned i, S v) {
#ifdef __CUDA_ARCH__
    if constexpr (sizeof(S) == 4) {
      if (held_ == 0 && (reinterpret_cast<std::uintptr_t>(out_ + i) & 15) != 0) {
        out_[i] = v;  // up to the first 16-byte boundary
        return;
      }
      if (held_ == 3) {
        store_global_16(out_ + i - 3, a_, b_, c_, v);
        held_ = 0;
        return;
      }
      a_ = b_;
      b_ = c_;
      c_ = v;
      ++held_;
      return;
    }
#endif
    out_[i] = v;
  }

  /// Stores what put() holds back; `end` is one past the last index put.
  SIGPU_HD SIGPU_FORCEINLINE void flush(unsigned end) {
    if (held_ == 3) out_[end - 3] = a_;
    if (held_ >= 2) out_[end - 2] = b_;
    if (held_ >= 1) out_[end - 1] = c_;
    held_ = 0;
  }

 private:
  S* out_;
  S a_ = 0, b_ = 0, c_ = 0;  ///< the last held_ samples put, oldest first, ending at c_
  unsigned held_ = 0;
};

/// Decodes the residual whose layout `l` (checked against the block and `order`) has just been
/// read, from `bits`, into out[order .. n): the same values, errors and end position as
/// decode_residual.
template <typename S>
SIGPU_HD FrameError decode_residual_flat(FlatBits& bits, const ResidualLayout& l, S* out,
                                         unsigned order) {
  SampleSink<S> sink(out);
  unsigned i = order, partition = 0, partition_end = order, k = 0;  // a header comes first
  std::uint32_t max_quotient = 0;
  auto done = [&](FrameError e) {
    sink.flush(i);
    return e;
  };
  for (;;) {
    if (i == partition_end) {  // a new partition (rare): its parameter, or its escaped samples
      if (partition > 0 && bits.overrun()) return done(FrameError::truncated);
      if (partition == l.partitions) return done(FrameError::ok);
      partition_end = ++partition * l.partition_size;
      k = bits.read(l.param_bits);
      if (k == l.escape) {
        const unsigned width = bits.read(5);
        for (; i < partition_end; ++i) sink.put(i, bits.read_signed(width));
      }
      max_quotient = 0xFFFFFFFFu >> k;
      continue;
    }
    bits.top_up();
    std::uint32_t u;
    if (!bits.try_rice(k, max_quotient, &u)) {  // a long code, or the end of the data (rare)
      const std::uint32_t q = bits.read_unary();
      if (q > max_quotient)
        return done(bits.overrun() ? FrameError::truncated : FrameError::rice_overflow);
      u = (q << k) | bits.read(k);
    }
    sink.put(i, zigzag_decode(u));
    ++i;
  }
}

/// The Bulk of parse_subframe (see SerialBulk) with the residuals read by decode_residual_flat;
/// VERBATIM samples are read as the serial twin reads them.
struct FlatBulk : SerialBulk {
  const std::uint8_t* data;
  std::size_t size;

  SIGPU_HD FlatBulk(const std::uint8_t* d, std::size_t n) : data(d), size(n) {}

  template <typename S>
  SIGPU_HD FrameError residual(BitReader& br, S* out, unsigned n, unsigned order) const {
    ResidualLayout l;
    const FrameError le = read_residual_layout(br, n, order, l);
    if (le != FrameError::ok) return le;
    FlatBits bits(data, size, br.bit_position());
    const FrameError e = decode_residual_flat(bits, l, out, order);
    if (e != FrameError::ok) return e;
    const std::uint64_t end = bits.position();  // within the data: not overrun
    br = BitReader(data, size, static_cast<std::size_t>(end >> 3));
    br.skip(end & 7);
    return FrameError::ok;
  }
};

}  // namespace sigpu::flac
