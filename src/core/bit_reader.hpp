// Big-endian, MSB-first bit reader for host and device.
//
// Reads never touch memory outside [data, data + size): the last partial word is assembled
// byte by byte. Reading past the end yields zero bits and sets overrun(), which callers check
// once per unit (a header, a subframe) rather than on every read, as FFmpeg's checked reader
// does. Whole words are loaded at 4-byte-aligned offsets from `data`, so on the device `data`
// must be 4-byte aligned (cudaMalloc memory is).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/hd.hpp"

namespace sigpu {

SIGPU_HD SIGPU_FORCEINLINE int count_leading_zeros64(std::uint64_t x) {
#ifdef __CUDA_ARCH__
  return __clzll(static_cast<long long>(x));
#else
  return x ? __builtin_clzll(x) : 64;
#endif
}

SIGPU_HD SIGPU_FORCEINLINE int count_leading_zeros32(std::uint32_t x) {
#ifdef __CUDA_ARCH__
  return __clz(static_cast<int>(x));
#else
  return x ? __builtin_clz(x) : 32;
#endif
}

class BitReader {
 public:
  SIGPU_HD BitReader(const std::uint8_t* data, std::size_t size, std::size_t start_byte = 0)
      : data_(data), size_(size), word_pos_(start_byte & ~std::size_t{3}) {
    refill();
    skip(static_cast<unsigned>(start_byte & 3) * 8);
  }

  /// Reads n bits, 0 <= n <= 32, as an unsigned value.
  SIGPU_HD SIGPU_FORCEINLINE std::uint32_t read(unsigned n) {
    if (count_ < n) refill();
    std::uint32_t v = n ? static_cast<std::uint32_t>(cache_ >> (64 - n)) : 0;
    consume(n);
    return v;
  }

  /// Reads n bits, 0 <= n <= 64, as an unsigned value.
  SIGPU_HD std::uint64_t read64(unsigned n) {
    if (n <= 32) return read(n);
    std::uint64_t hi = read(n - 32);
    return (hi << 32) | read(32);
  }

  /// Reads an n-bit two's complement value, 0 <= n <= 64; n = 0 gives 0.
  SIGPU_HD std::int64_t read_signed64(unsigned n) {
    if (n == 0) return 0;
    std::uint64_t v = read64(n);
    unsigned shift = 64 - n;
    return static_cast<std::int64_t>(v << shift) >> shift;
  }

  /// Reads an n-bit two's complement value, 0 <= n <= 32.
  SIGPU_HD SIGPU_FORCEINLINE std::int32_t read_signed(unsigned n) {
    if (n == 0) return 0;
    std::uint32_t v = read(n);
    unsigned shift = 32 - n;
    return static_cast<std::int32_t>(v << shift) >> shift;
  }

  /// Peeks at the next n bits, 1 <= n <= 32, without consuming them.
  SIGPU_HD SIGPU_FORCEINLINE std::uint32_t peek(unsigned n) {
    if (count_ < n) refill();
    return static_cast<std::uint32_t>(cache_ >> (64 - n));
  }

  /// Skips n bits, any n.
  SIGPU_HD void skip(std::uint64_t n) {
    while (n > 32) {
      read(32);
      n -= 32;
    }
    read(static_cast<unsigned>(n));
  }

  /// Counts zero bits up to and including the next one bit; returns the number of zeros.
  /// At the end of data it stops, returning the zeros seen, with overrun() set.
  SIGPU_HD SIGPU_FORCEINLINE std::uint32_t read_unary() {
    std::uint32_t zeros = 0;
    for (;;) {
      if (count_ < 32) refill();
      int lz = count_leading_zeros64(cache_);
      if (static_cast<unsigned>(lz) < count_) {
        consume(static_cast<unsigned>(lz) + 1);
        return zeros + static_cast<std::uint32_t>(lz);
      }
      zeros += count_;
      consume(count_);
      if (word_pos_ > size_ + 4) return zeros;  // only zeros remain: overrun() is now set
    }
  }

  /// Moves to `bit` bits from the start of data (past the end reads zeros, as everywhere).
  SIGPU_HD void seek(std::uint64_t bit) {
    word_pos_ = static_cast<std::size_t>(bit >> 5) << 2;
    cache_ = 0;
    count_ = 0;
    refill();
    consume(static_cast<unsigned>(bit & 31));
  }

  SIGPU_HD const std::uint8_t* data() const { return data_; }

  /// Skips to the next byte boundary.
  SIGPU_HD void align_to_byte() { consume(count_ & 7u); }

  /// Bits consumed from the start of `data`.
  SIGPU_HD std::uint64_t bit_position() const {
    return static_cast<std::uint64_t>(word_pos_) * 8 - count_;
  }
  SIGPU_HD std::size_t byte_position() const {
    return static_cast<std::size_t>(bit_position() / 8);
  }
  SIGPU_HD bool overrun() const { return bit_position() > static_cast<std::uint64_t>(size_) * 8; }
  SIGPU_HD std::size_t size() const { return size_; }

 private:
  SIGPU_HD SIGPU_FORCEINLINE void consume(unsigned n) {
    cache_ = n < 64 ? cache_ << n : 0;
    count_ -= n;
  }

  // Appends the next 32 bits; precondition count_ <= 32.
  SIGPU_HD SIGPU_FORCEINLINE void refill() {
    std::uint32_t w;
    if (word_pos_ + 4 <= size_) {
#ifdef __CUDA_ARCH__
      w = __byte_perm(*reinterpret_cast<const std::uint32_t*>(data_ + word_pos_), 0, 0x0123);
#else
      std::memcpy(&w, data_ + word_pos_, 4);
      w = __builtin_bswap32(w);
#endif
    } else {
      w = 0;
      for (std::size_t i = 0; i < 4; ++i)
        w = (w << 8) | (word_pos_ + i < size_ ? data_[word_pos_ + i] : 0u);
    }
    cache_ |= static_cast<std::uint64_t>(w) << (32 - count_);
    count_ += 32;
    word_pos_ += 4;
  }

  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t word_pos_;     ///< byte offset of the next word to load
  std::uint64_t cache_ = 0;  ///< unread bits, MSB first; bits below count_ are zero
  unsigned count_ = 0;       ///< valid bits in cache_
};

}  // namespace sigpu
