// The CABAC arithmetic decoding engine (9.3.4.3) and the context variables of I slices.
//
// The engine keeps the 9-bit ivlOffset of the specification in the top of `value_`, with
// `extra_` bits read ahead below it, so that the number of bits the specification's decoder has
// consumed is always known: substreams (tiles, WPP rows) and PCM samples start right after it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace sigpu::hevc {

/// Context variable indices (one per ctxIdx of the I-slice tables in 9.3.2.2).
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
  kCtxCount = 137,
};

using ContextSet = std::array<std::uint8_t, kCtxCount>;  ///< (pStateIdx << 1) | valMps

/// Initial context states for an I slice at SliceQpY (9.3.2.2).
ContextSet init_contexts(int slice_qp);

/// rangeTabLps[pStateIdx][qRangeIdx] and transIdxLps[pStateIdx] (Tables 9-52, 9-53), for the
/// CABAC encoder that writes the tests' synthetic streams.
int cabac_lps_range(int state, int q_range_idx);
int cabac_trans_idx_lps(int state);

class Cabac {
 public:
  /// Starts decoding at byte `start` of data[0, size) (9.3.2.5).
  void init(const std::uint8_t* data, std::size_t size, std::size_t start);

  int decode(std::uint8_t& ctx);
  int bypass();
  std::uint32_t bypass_bits(int n);
  int terminate();

  /// After a terminate bin equal to 1: where the next byte-aligned data (a substream or PCM
  /// samples) starts. The last bit the engine read is the encoder's final one bit (the
  /// alignment or stop bit, 9.3.4.3.5); zero bits up to the byte boundary follow.
  std::size_t aligned_position_after_terminate() const {
    return static_cast<std::size_t>((consumed_bits() + 7) / 8);
  }
  /// True once the engine has read beyond the end of its data.
  bool overrun() const { return pos_ > size_ + 2; }

 private:
  std::uint64_t consumed_bits() const {
    return std::uint64_t{pos_} * 8 - static_cast<unsigned>(extra_);
  }
  std::uint32_t next_byte() { return pos_ < size_ ? data_[pos_++] : (++pos_, 0u); }
  void renorm(int n) {
    while (extra_ < n) {
      value_ = (value_ << 8) | next_byte();
      extra_ += 8;
    }
    range_ <<= n;
    extra_ -= n;
  }

  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0, pos_ = 0;
  std::uint32_t value_ = 0;  ///< ivlOffset << extra_ plus the read-ahead bits
  int extra_ = 0;
  std::uint32_t range_ = 510;
};

}  // namespace sigpu::hevc
