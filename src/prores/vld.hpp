// Variable-length decoding of one slice component (RDD 36 section 7.1), written once for the
// CPU decoder and the CUDA VLD kernel. It follows FFmpeg's decoder step for step, including
// its 16-bit wrap-around, so that every valid stream decodes to the same coefficients.
#pragma once

#include <cstddef>
#include <cstdint>

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

/// Reads one Rice/exp-Golomb codeword with the given codebook byte. False on a code FFmpeg
/// refuses (longer than 31 bits).
SIGPU_HD SIGPU_FORCEINLINE bool read_codeword(BitReader& br, unsigned codebook, unsigned& value) {
  const unsigned switch_bits = codebook & 3;
  const unsigned rice_order = codebook >> 5;
  const unsigned exp_order = (codebook >> 2) & 7;
  const std::uint32_t cache = br.peek(32);
  // FFmpeg takes 31 - av_log2(cache); av_log2(0) is 0, so an all-zero cache counts 31.
  const unsigned q = cache ? leading_zeros32(cache) : 31u;
  if (q > switch_bits) {
    const unsigned bits = exp_order - switch_bits + (q << 1);
    if (bits > 31) return false;
    value = br.read(bits) - (1u << exp_order) + ((switch_bits + 1) << rice_order);
  } else if (rice_order) {
    br.skip(q + 1);
    value = (q << rice_order) + br.read(rice_order);
  } else {
    value = q;
    br.skip(q + 1);
  }
  return true;
}

/// DC coefficients of `blocks` blocks into out[64 * b] (RDD 36 section 7.1.1.1).
SIGPU_HD SIGPU_FORCEINLINE int decode_dc(BitReader& br, std::int16_t* out, int blocks) {
  unsigned code;
  if (!read_codeword(br, kFirstDcCodebook, code)) return kVldBadCodeword;
  auto prev = static_cast<std::int16_t>((code >> 1) ^ (0u - (code & 1)));
  out[0] = prev;
  code = 5;
  unsigned sign = 0;
  for (int b = 1; b < blocks; ++b) {
    if (!read_codeword(br, dc_codebook(code), code)) return kVldBadCodeword;
    sign = code ? sign ^ (0u - (code & 1)) : 0u;
    prev = static_cast<std::int16_t>(prev + ((((code + 1) >> 1) ^ sign) - sign));
    out[64 * b] = prev;
  }
  return kVldOk;
}

/// AC coefficients, interleaved across the slice's blocks (RDD 36 section 7.1.1.2), stopping
/// where only zero bits remain before `end_bit`.
SIGPU_HD SIGPU_FORCEINLINE int decode_ac(BitReader& br, std::uint64_t end_bit, std::int16_t* out,
                                         int log2_blocks, const std::uint8_t* scan) {
  const unsigned block_mask = (1u << log2_blocks) - 1;
  const unsigned max_coeffs = 64u << log2_blocks;
  unsigned run = 4, level = 2;
  for (unsigned pos = block_mask;;) {
    const std::int64_t left =
        static_cast<std::int64_t>(end_bit) - static_cast<std::int64_t>(br.bit_position());
    if (left <= 0 || (left < 32 && br.peek(static_cast<unsigned>(left)) == 0)) break;
    if (!read_codeword(br, run_codebook(run), run)) return kVldBadCodeword;
    pos += run + 1;
    if (pos >= max_coeffs) return kVldCoeffOverrun;
    if (!read_codeword(br, level_codebook(level), level)) return kVldBadCodeword;
    level += 1;
    const unsigned sign = 0u - br.read(1);
    out[((pos & block_mask) << 6) + scan[pos >> log2_blocks]] =
        static_cast<std::int16_t>((level ^ sign) - sign);
  }
  return kVldOk;
}

/// Coefficients of one component of one slice: bytes [begin, end) of `base`; `out` holds
/// 64 << log2_blocks zeroed coefficients, raster order per block.
SIGPU_HD inline int decode_component(const std::uint8_t* base, std::size_t begin, std::size_t end,
                                     int log2_blocks, const std::uint8_t* scan, std::int16_t* out) {
  BitReader br(base, end, begin);
  const int e = decode_dc(br, out, 1 << log2_blocks);
  if (e != kVldOk) return e;
  return decode_ac(br, static_cast<std::uint64_t>(end) * 8, out, log2_blocks, scan);
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
