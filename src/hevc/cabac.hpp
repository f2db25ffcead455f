// The CABAC arithmetic decoding engine (9.3.4.3) and the context variables (9.3.2.2).
//
// The engine keeps the 9-bit ivlOffset of the specification at bit kShift of a 64-bit `value_`
// with the bits read ahead below it (`bits_left_` of them, topped up 3 or 4 bytes at a time),
// and ivlCurrRange at the same bit of `range_`: a bin compares and subtracts them as they are,
// with no shift by a varying amount on the path from one bin to the next, and renormalisation
// shifts both. The number of bits the specification's decoder has consumed is always known, so
// substreams (tiles, WPP rows) and PCM samples start right after it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sigpu::hevc {

/// Context variable indices (one per ctxIdx of the tables in 9.3.2.2).
enum Ctx : int {
  kCtxSaoMerge = 0,
  kCtxSaoType = 1,
  kCtxSplitCu = 2,  // 3
  kCtxTransquantBypass = 5,
  kCtxPartMode = 6,
  kCtxPrevIntraLuma = 7,
  kCtxIntraChroma = 8,
  kCtxSplitTransform = 9,  // 3
  kCtxCbfLuma = 12,        // 2
  kCtxCbfChroma = 14,      // 5
  kCtxCuQpDelta = 19,      // 2
  kCtxTransformSkip = 21,  // 2: luma, chroma
  kCtxLastX = 23,          // 18
  kCtxLastY = 41,          // 18
  kCtxCodedSubBlock = 59,  // 4
  kCtxSig = 63,            // 44 (42 + 2 transform-skip contexts)
  kCtxGreater1 = 107,      // 24
  kCtxGreater2 = 131,      // 6
  // Inter slices only.
  kCtxCuSkip = 137,         // 3
  kCtxPredMode = 140,       // 1
  kCtxPartModeInter = 141,  // 3: part_mode's ctxInc 1..3 (kCtxPartMode is ctxInc 0)
  kCtxMergeFlag = 144,
  kCtxMergeIdx = 145,
  kCtxInterPredIdc = 146,  // 5
  kCtxRefIdx = 151,        // 2 (both lists)
  kCtxMvdGreater0 = 153,
  kCtxMvdGreater1 = 154,
  kCtxMvpFlag = 155,
  kCtxRqtRootCbf = 156,
  kCtxCount = 157,
};

using ContextSet = std::array<std::uint8_t, kCtxCount>;  ///< (pStateIdx << 1) | valMps

namespace cabac_tables {
// Table 9-52 (rangeTabLps) and 9-53 (transIdxLps).
inline constexpr std::uint8_t kLpsRange[64][4] = {
    {128, 176, 208, 240}, {128, 167, 197, 227}, {128, 158, 187, 216}, {123, 150, 178, 205},
    {116, 142, 169, 195}, {111, 135, 160, 185}, {105, 128, 152, 175}, {100, 122, 144, 166},
    {95, 116, 137, 158},  {90, 110, 130, 150},  {85, 104, 123, 142},  {81, 99, 117, 135},
    {77, 94, 111, 128},   {73, 89, 105, 122},   {69, 85, 100, 116},   {66, 80, 95, 110},
    {62, 76, 90, 104},    {59, 72, 86, 99},     {56, 69, 81, 94},     {53, 65, 77, 89},
    {51, 62, 73, 85},     {48, 59, 69, 80},     {46, 56, 66, 76},     {43, 53, 63, 72},
    {41, 50, 59, 69},     {39, 48, 56, 65},     {37, 45, 54, 62},     {35, 43, 51, 59},
    {33, 41, 48, 56},     {32, 39, 46, 53},     {30, 37, 43, 50},     {29, 35, 41, 48},
    {27, 33, 39, 45},     {26, 31, 37, 43},     {24, 30, 35, 41},     {23, 28, 33, 39},
    {22, 27, 32, 37},     {21, 26, 30, 35},     {20, 24, 29, 33},     {19, 23, 27, 31},
    {18, 22, 26, 30},     {17, 21, 25, 28},     {16, 20, 23, 27},     {15, 19, 22, 25},
    {14, 18, 21, 24},     {14, 17, 20, 23},     {13, 16, 19, 22},     {12, 15, 18, 21},
    {12, 14, 17, 20},     {11, 14, 16, 19},     {11, 13, 15, 18},     {10, 12, 15, 17},
    {10, 12, 14, 16},     {9, 11, 13, 15},      {9, 11, 12, 14},      {8, 10, 12, 14},
    {8, 9, 11, 13},       {7, 9, 11, 12},       {7, 9, 10, 12},       {7, 8, 10, 11},
    {6, 8, 9, 11},        {6, 7, 9, 10},        {6, 7, 8, 9},         {2, 2, 2, 2},
};
inline constexpr std::uint8_t kTransIdxLps[64] = {
    0,  0,  1,  2,  2,  4,  4,  5,  6,  7,  8,  9,  9,  11, 11, 12, 13, 13, 15, 15, 16, 16,
    18, 18, 19, 19, 21, 21, 22, 22, 23, 24, 24, 25, 26, 26, 27, 27, 28, 29, 29, 30, 30, 30,
    31, 32, 32, 33, 33, 33, 34, 34, 35, 35, 35, 36, 36, 36, 37, 37, 37, 38, 38, 63,
};

/// The next context state ((pStateIdx << 1) | valMps) after an MPS ([ctx][0]) and after an LPS
/// ([ctx][1]) (9.3.4.3.2), by the current one, so that the engine updates a context with one
/// load whichever it decoded.
struct Transitions {
  std::uint8_t next[128][2] = {};
  constexpr Transitions() {
    for (int ctx = 0; ctx < 128; ++ctx) {
      const int state = ctx >> 1, mps_val = ctx & 1;
      next[ctx][0] = static_cast<std::uint8_t>(((state < 62 ? state + 1 : state) << 1) | mps_val);
      next[ctx][1] =
          static_cast<std::uint8_t>((kTransIdxLps[state] << 1) | (mps_val ^ (state == 0)));
    }
  }
};
inline constexpr Transitions kTransitions;

/// rangeTabLps by the context ((pStateIdx << 1) | valMps) and ivlCurrRange >> 6 (4..7 between
/// renormalisations), so that the engine indexes it without shifting or masking either.
struct LpsByContext {
  std::uint8_t range[128][8] = {};
  constexpr LpsByContext() {
    for (int ctx = 0; ctx < 128; ++ctx)
      for (int q = 0; q < 4; ++q) range[ctx][4 + q] = kLpsRange[ctx >> 1][q];
  }
};
inline constexpr LpsByContext kLpsByContext;

}  // namespace cabac_tables

/// Initial context states at SliceQpY for initType 0 (I), 1 or 2 (9.3.2.2).
ContextSet init_contexts(int slice_qp, int init_type = 0);

/// rangeTabLps[pStateIdx][qRangeIdx] and transIdxLps[pStateIdx] (Tables 9-52, 9-53), for the
/// CABAC encoder that writes the tests' synthetic streams.
int cabac_lps_range(int state, int q_range_idx);
int cabac_trans_idx_lps(int state);

class Cabac {
 public:
  /// Starts decoding at byte `start` of data[0, size) (9.3.2.5). False when the first 9 bits,
  /// ivlOffset, are 510 or 511, which no conforming stream starts with: every bin keeps
  /// ivlOffset below ivlCurrRange, and the bypass runs' division relies on it.
  [[nodiscard]] bool init(const std::uint8_t* data, std::size_t size, std::size_t start);

  // Defined here so that they inline into the syntax parsers: a bin costs a few cycles, a call
  // would double that.
  // Without a branch on the bin: the bins of residual coding, most of the work, are as good as
  // random, and a mispredicted branch costs more than computing both outcomes.
  int decode(std::uint8_t& ctx) {
    const unsigned s = ctx;
    const std::uint64_t lps =
        std::uint64_t{cabac_tables::kLpsByContext.range[s][range_ >> (kShift + 6)]} << kShift;
    range_ -= lps;
    const unsigned is_lps = value_ >= range_ ? 1u : 0u;
    const std::uint64_t mask = 0 - std::uint64_t{is_lps};
    value_ -= range_ & mask;
    range_ = (lps & mask) | (range_ & ~mask);
    ctx = cabac_tables::kTransitions.next[s][is_lps];
    // The shifts that bring the range back to 256..510 (none after most MPSs).
    renorm(__builtin_clzll(range_) - (63 - kShift - 8));
    return static_cast<int>((s & 1) ^ is_lps);
  }
  int bypass() {
    value_ <<= 1;
    if (--bits_left_ < 8) refill();
    if (value_ >= range_) {
      value_ -= range_;
      return 1;
    }
    return 0;
  }
  // A run of bypass bins is the binary long division of ivlOffset, with the bits that follow
  // it, by ivlCurrRange (9.3.4.3.4 shifts a bit in and subtracts the range where it fits): m of
  // them are the quotient of one division, with no branch per bin.
  /// n bypass bins (n <= 32), the first in the most significant bit.
  std::uint32_t bypass_bits(int n) {
    std::uint32_t v = 0;
    while (n > 0) {
      const int m = n < kBypassRun ? n : kBypassRun;
      if (bits_left_ < m) refill();
      v = (v << m) | take_run(peek_run(m), m, m);
      n -= m;
    }
    if (bits_left_ < 8) refill();
    return v;
  }
  /// Bypass bins equal to 1 up to the first 0 (read too) or up to `max` of them: how many 1s.
  int bypass_ones(int max) {
    int ones = 0;
    for (;;) {
      const int m = max - ones < kBypassRun ? max - ones : kBypassRun;
      if (m <= 0) break;
      if (bits_left_ < m) refill();
      const std::uint32_t q = peek_run(m);
      // Leading ones of the m bins; with one in front of m < 32 bits no clz of zero.
      const int run = __builtin_clz(~(q << (32 - m)));
      ones += run;
      if (run < m) {
        take_run(q, m, run + 1);
        break;
      }
      take_run(q, m, m);
    }
    if (bits_left_ < 8) refill();
    return ones;
  }
  int terminate() {
    range_ -= std::uint64_t{2} << kShift;
    if (value_ >= range_) return 1;
    if (range_ < kRange256) renorm(1);
    return 0;
  }

  /// After a terminate bin equal to 1: where the next byte-aligned data (a substream or PCM
  /// samples) starts. The last bit the engine read is the encoder's final one bit (the
  /// alignment or stop bit, 9.3.4.3.5); zero bits up to the byte boundary follow.
  std::size_t aligned_position_after_terminate() const {
    return static_cast<std::size_t>((consumed_bits() + 7) / 8);
  }
  /// True once the engine has consumed bits more than two bytes beyond the end of its data.
  bool overrun() const { return consumed_bits() > (std::uint64_t{size_} + 2) * 8; }

 private:
  static constexpr int kShift = 32;  ///< where ivlOffset and ivlCurrRange sit
  static constexpr std::uint64_t kRange256 = std::uint64_t{256} << kShift;

  std::uint64_t consumed_bits() const {
    return std::uint64_t{pos_} * 8 - static_cast<unsigned>(bits_left_);
  }
  std::uint32_t next_byte() { return pos_ < size_ ? data_[pos_++] : (++pos_, 0u); }
  /// Tops the bits read ahead up to 25..32 (past the end of the data: zeros).
  void refill() {
    if (bits_left_ > kShift - 8) return;
    if (pos_ <= size_ && size_ - pos_ >= 4) {  // whole bytes at once, big-endian
      const int bytes = (kShift - bits_left_) >> 3;
      std::uint32_t word;
      std::memcpy(&word, data_ + pos_, 4);
      const std::uint64_t top = __builtin_bswap32(word) >> (32 - 8 * bytes);
      value_ |= top << (kShift - 8 * bytes - bits_left_);
      pos_ += static_cast<std::size_t>(bytes);
      bits_left_ += 8 * bytes;
      return;
    }
    while (bits_left_ <= kShift - 8) {
      value_ |= std::uint64_t{next_byte()} << (kShift - 8 - bits_left_);
      bits_left_ += 8;
    }
  }
  static constexpr int kBypassRun = 16;  ///< bins per division: ivlOffset << 16 fits 32 bits

  /// The next m <= kBypassRun bypass bins (bits_left_ >= m), not consumed.
  std::uint32_t peek_run(int m) const {
    return static_cast<std::uint32_t>(value_ >> (kShift - m)) /
           static_cast<std::uint32_t>(range_ >> kShift);
  }
  /// Consumes the first `take` of the m bins peek_run(m) gave as q, and returns them.
  std::uint32_t take_run(std::uint32_t q, int m, int take) {
    q >>= m - take;
    value_ = (value_ << take) -
             (std::uint64_t{q * static_cast<std::uint32_t>(range_ >> kShift)} << kShift);
    bits_left_ -= take;
    return q;
  }
  void renorm(int n) {  // n <= 7 <= bits_left_
    range_ <<= n;
    value_ <<= n;
    bits_left_ -= n;
    if (bits_left_ < 8) refill();
  }

  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0, pos_ = 0;
  std::uint64_t value_ = 0;  ///< ivlOffset << kShift plus the bits read ahead below it
  std::uint64_t range_ = std::uint64_t{510} << kShift;  ///< ivlCurrRange << kShift
  int bits_left_ = 0;
};

}  // namespace sigpu::hevc
