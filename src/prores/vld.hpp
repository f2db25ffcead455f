// Variable-length decoding of one slice component (RDD 36 section 7.1), written once for the
// CPU decoder and the CUDA VLD kernel. It follows FFmpeg's decoder step for step, including
// its 16-bit wrap-around, so that every valid stream decodes to the same coefficients.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/bit_reader.hpp"
#include "core/hd.hpp"
#include "prores/tables.hpp"

namespace sigpu::prores {

/// What went wrong in a slice; 0 is success. Names in vld_error_name().
enum VldError : int {
  kVldOk = 0,
  kVldBadCodeword = 1,    ///< an exp-Golomb code longer than 31 bits
  kVldCoeffOverrun = 2,   ///< AC run past the last coefficient of the slice
  kVldBadHeader = 3,      ///< slice header sizes do not fit the slice
  kVldOutOfFrame = 4,     ///< slice table points outside the frame
  kVldSliceTooSmall = 5,  ///< slice shorter than 6 bytes
  kVldBadPicture = 6,     ///< picture header unusable: the whole picture is lost
};

inline const char* vld_error_name(int e) {
  switch (e) {
    case kVldBadCodeword:
      return "invalid codeword (exp-Golomb code over 31 bits)";
    case kVldCoeffOverrun:
      return "AC coefficients run past the end of the slice";
    case kVldBadHeader:
      return "slice header plane sizes exceed the slice";
    case kVldOutOfFrame:
      return "slice data lies outside the frame";
    case kVldSliceTooSmall:
      return "slice shorter than 6 bytes";
    case kVldBadPicture:
      return "picture header invalid";
    default:
      return "ok";
  }
}

SIGPU_HD SIGPU_FORCEINLINE unsigned leading_zeros32(std::uint32_t x) {
#ifdef __CUDA_ARCH__
  return static_cast<unsigned>(__clz(static_cast<int>(x)));
#else
  return x ? static_cast<unsigned>(__builtin_clz(x)) : 32u;
#endif
}

/// The VLD's bit reader: MSB first over bytes [begin, end) of `base`, zero bits past the end,
/// as core's BitReader reads them, but shaped for the coefficient loop, the decoder's hot spot.
/// On the GPU each thread walks its own slice, and a load per 32-bit refill left the warps
/// waiting on memory most of the time (H100: 133 cycles per issued instruction): this reader
/// loads 16-byte chunks, one chunk ahead of the one being read, so the next chunk arrives while
/// the current one is decoded. Also 32-bit offsets, and one refill test per codeword, since
/// fill() leaves at least 32 bits in the cache and no codeword is longer than 31. Chunks are
/// loaded at 16-byte-aligned offsets from `base`, so on the device `base` must be 16-byte aligned
/// (cudaMalloc memory is); a chunk reaching past `end` is read byte by byte, never beyond it.
class VldBits {
 public:
  SIGPU_HD VldBits(const std::uint8_t* base, std::uint32_t begin, std::uint32_t end)
      : base_(base), end_(end), next_(begin & ~15u), ahead_at_(next_ + 16) {
    load_chunk(next_, cur_);
    load_chunk(ahead_at_, ahead_);
    for (std::uint32_t i = 0; i < ((begin & 15u) >> 2); ++i) take_word();
    fill();
    consume((begin & 3u) * 8);
  }

  /// Makes at least 32 bits available at the top of cache().
  SIGPU_HD SIGPU_FORCEINLINE void fill() {
    if (count_ >= 32) return;
    cache_ |= static_cast<std::uint64_t>(take_word()) << (32 - count_);
    count_ += 32;
  }
  /// The unread bits, MSB first; bits past the valid ones are zero.
  SIGPU_HD SIGPU_FORCEINLINE std::uint64_t cache() const { return cache_; }
  /// Drops n <= 32 bits (n no more than are valid).
  SIGPU_HD SIGPU_FORCEINLINE void consume(unsigned n) {
    cache_ <<= n;
    count_ -= n;
  }
  /// Bits before `end`; negative once reading went past it.
  SIGPU_HD SIGPU_FORCEINLINE int bits_left() const {
    return static_cast<int>(end_ - next_) * 8 + static_cast<int>(count_);
  }

 private:
  // The next word of the current chunk; the chunk ahead becomes current when it runs out, and
  // the one after it is requested. Words shift down so that indices stay constant (registers).
  SIGPU_HD SIGPU_FORCEINLINE std::uint32_t take_word() {
    if (words_ == 0) {
      for (int i = 0; i < 4; ++i) cur_[i] = ahead_[i];
      ahead_at_ += 16;
      load_chunk(ahead_at_, ahead_);
      words_ = 4;
    }
    const std::uint32_t w = cur_[0];
    cur_[0] = cur_[1];
    cur_[1] = cur_[2];
    cur_[2] = cur_[3];
    --words_;
    next_ += 4;
    return w;
  }

  // The 16 bytes at `at` (16-byte aligned) as four big-endian words, zero past end_.
  SIGPU_HD SIGPU_FORCEINLINE void load_chunk(std::uint32_t at, std::uint32_t (&w)[4]) const {
    const std::uint32_t room = at < end_ ? end_ - at : 0;  // bytes of the chunk before the end
    if (room >= 16) {
#ifdef __CUDA_ARCH__
      const uint4 v = __ldg(reinterpret_cast<const uint4*>(base_ + at));
      w[0] = __byte_perm(v.x, 0, 0x0123);
      w[1] = __byte_perm(v.y, 0, 0x0123);
      w[2] = __byte_perm(v.z, 0, 0x0123);
      w[3] = __byte_perm(v.w, 0, 0x0123);
#else
      for (int i = 0; i < 4; ++i) {
        std::memcpy(&w[i], base_ + at + 4 * i, 4);
        w[i] = __builtin_bswap32(w[i]);
      }
#endif
      return;
    }
    for (std::uint32_t i = 0; i < 4; ++i) {
      std::uint32_t x = 0;
      for (std::uint32_t k = 4 * i; k < 4 * i + 4; ++k)
        x = (x << 8) | (k < room ? base_[at + k] : 0u);
      w[i] = x;
    }
  }

  const std::uint8_t* base_;
  std::uint32_t end_;
  std::uint32_t next_;      ///< byte offset of the next word to enter the cache
  std::uint32_t ahead_at_;  ///< byte offset of the chunk in ahead_
  std::uint32_t cur_[4] = {}, ahead_[4] = {};
  int words_ = 4;  ///< words of cur_ not yet taken
  std::uint64_t cache_ = 0;
  unsigned count_ = 0;  ///< valid bits in cache_
};

/// Decodes the Rice/exp-Golomb codeword at the top of `cache` (32 valid bits or more) with the
/// given codebook byte; returns its length in bits, or 0 for a code FFmpeg refuses (longer than
/// 31 bits). Both kinds of code are computed and one is selected: neighbouring GPU threads meet
/// different kinds, and selects do not make a warp diverge as branches do.
SIGPU_HD SIGPU_FORCEINLINE unsigned decode_codeword(std::uint64_t cache, unsigned codebook,
                                                    unsigned& value) {
  const unsigned switch_bits = codebook & 3;
  const unsigned rice_order = codebook >> 5;
  const unsigned exp_order = (codebook >> 2) & 7;
  const auto top = static_cast<std::uint32_t>(cache >> 32);
  // FFmpeg takes 31 - av_log2(cache); av_log2(0) is 0, so an all-zero cache counts 31.
  const unsigned q = top ? leading_zeros32(top) : 31u;
  const bool exp_golomb = q > switch_bits;
  // Rice codes are at most 3 + 1 + 7 bits: only exp-Golomb codes can be too long.
  const unsigned len = exp_golomb ? exp_order - switch_bits + (q << 1) : q + 1 + rice_order;
  if (len > 31) return 0;
  const auto raw = static_cast<unsigned>(cache >> (64 - len));
  value = exp_golomb ? raw - (1u << exp_order) + ((switch_bits + 1) << rice_order)
                     : (q << rice_order) + (raw & ((1u << rice_order) - 1));
  return len;
}

/// DC coefficients of `blocks` blocks (RDD 36 section 7.1.1.1), handed to put(block, 0, value).
template <typename Put>
SIGPU_HD SIGPU_FORCEINLINE int decode_dc(VldBits& br, int blocks, Put& put) {
  unsigned code;
  br.fill();
  unsigned n = decode_codeword(br.cache(), kFirstDcCodebook, code);
  if (!n) return kVldBadCodeword;
  br.consume(n);
  auto prev = static_cast<std::int16_t>((code >> 1) ^ (0u - (code & 1)));
  put(0, 0, prev);
  code = 5;
  unsigned sign = 0;
  for (int b = 1; b < blocks; ++b) {
    br.fill();
    n = decode_codeword(br.cache(), dc_codebook(code), code);
    if (!n) return kVldBadCodeword;
    br.consume(n);
    sign = code ? sign ^ (0u - (code & 1)) : 0u;
    prev = static_cast<std::int16_t>(prev + ((((code + 1) >> 1) ^ sign) - sign));
    put(b, 0, prev);
  }
  return kVldOk;
}

/// AC coefficients, interleaved across the slice's blocks (RDD 36 section 7.1.1.2), handed to
/// put(block, coding position, value); stops where only zero bits remain before the reader's
/// end.
template <typename Put>
SIGPU_HD SIGPU_FORCEINLINE int decode_ac(VldBits& br, int log2_blocks, Put& put) {
  const unsigned block_mask = (1u << log2_blocks) - 1;
  const unsigned max_coeffs = 64u << log2_blocks;
  unsigned run = 4, level = 2;
  for (unsigned pos = block_mask;;) {
    br.fill();
    const int left = br.bits_left();
    if (left <= 0 || (left < 32 && (br.cache() >> (64 - left)) == 0)) break;
    unsigned n = decode_codeword(br.cache(), run_codebook(run), run);
    if (!n) return kVldBadCodeword;
    br.consume(n);
    pos += run + 1;
    if (pos >= max_coeffs) return kVldCoeffOverrun;
    br.fill();
    n = decode_codeword(br.cache(), level_codebook(level), level);
    if (!n) return kVldBadCodeword;
    // The sign bit follows: with 32 bits filled and a level code of 31 at most, it is there.
    const unsigned sign = 0u - static_cast<unsigned>((br.cache() << n) >> 63);
    br.consume(n + 1);
    level += 1;
    put(static_cast<int>(pos & block_mask), static_cast<int>(pos >> log2_blocks),
        static_cast<std::int16_t>((level ^ sign) - sign));
  }
  return kVldOk;
}

/// Coefficients of one component of one slice, bytes [begin, end) of `base`, of 1 << log2_blocks
/// blocks: put(block, i, value) receives each nonzero coefficient with its coding position i
/// (scan order, 0-63); the others are zero.
template <typename Put>
SIGPU_HD inline int decode_component(const std::uint8_t* base, std::size_t begin, std::size_t end,
                                     int log2_blocks, Put&& put) {
  VldBits br(base, static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(end));
  const int e = decode_dc(br, 1 << log2_blocks, put);
  if (e != kVldOk) return e;
  return decode_ac(br, log2_blocks, put);
}

/// The slice header (RDD 36 section 5.3.1) with FFmpeg's clamping of the quantiser.
struct SliceHeader {
  int header_size = 0;
  int qscale = 1;              ///< effective scale: 1-128, or (q - 96) * 4 above 128
  int size[4] = {0, 0, 0, 0};  ///< bytes of Y, Cb, Cr, alpha
};

/// Parses a slice of `size` bytes (size >= 6 is checked by the caller).
SIGPU_HD inline int parse_slice_header(const std::uint8_t* p, int size, SliceHeader& h) {
  h.header_size = p[0] >> 3;
  int q = p[1] < 1 ? 1 : (p[1] > 224 ? 224 : p[1]);
  h.qscale = q > 128 ? (q - 96) << 2 : q;
  h.size[0] = (p[2] << 8) | p[3];
  h.size[1] = (p[4] << 8) | p[5];
  if (h.header_size > 7) {
    if (size < 8) return kVldBadHeader;
    h.size[2] = (p[6] << 8) | p[7];
  } else {
    h.size[2] = size - h.size[0] - h.size[1] - h.header_size;
  }
  if (h.size[2] < 0 || h.header_size + h.size[0] + h.size[1] + h.size[2] > size)
    return kVldBadHeader;
  h.size[3] = size - h.size[0] - h.size[1] - h.size[2] - h.header_size;
  return kVldOk;
}

/// Scales a decoded alpha value (8 or 16 bits) to the output precision as FFmpeg does.
SIGPU_HD SIGPU_FORCEINLINE std::uint16_t scale_alpha(unsigned v, int alpha_bits, int bit_depth) {
  if (alpha_bits == 16) return static_cast<std::uint16_t>(v >> (16 - bit_depth));
  return static_cast<std::uint16_t>(bit_depth == 10 ? (v << 2) | (v >> 6) : (v << 4) | (v >> 4));
}

/// Run-length coded alpha of one slice (RDD 36 section 7.1.2): `count` values in raster order
/// of the slice's 16-row strip, handed to put(index, value).
template <typename Put>
SIGPU_HD inline void decode_alpha(const std::uint8_t* base, std::size_t begin, std::size_t end,
                                  int count, int alpha_bits, int bit_depth, Put&& put) {
  BitReader br(base, end, begin);
  const std::uint64_t end_bit = static_cast<std::uint64_t>(end) * 8;
  const unsigned mask = (1u << alpha_bits) - 1;
  unsigned alpha = mask;
  int idx = 0;
  do {
    do {
      int val;
      if (br.read(1)) {
        val = static_cast<int>(br.read(alpha_bits));
      } else {
        val = static_cast<int>(br.read(alpha_bits == 16 ? 7 : 4));
        const int sign = val & 1;
        val = (val + 2) >> 1;
        if (sign) val = -val;
      }
      alpha = (alpha + static_cast<unsigned>(val)) & mask;
      put(idx++, scale_alpha(alpha, alpha_bits, bit_depth));
      if (idx >= count) break;
    } while (br.bit_position() < end_bit && br.read(1));
    int run = static_cast<int>(br.read(4));
    if (!run) run = static_cast<int>(br.read(11));
    if (idx + run > count) run = count - idx;
    const std::uint16_t v = scale_alpha(alpha, alpha_bits, bit_depth);
    for (int i = 0; i < run; ++i) put(idx++, v);
  } while (idx < count);
}

}  // namespace sigpu::prores
