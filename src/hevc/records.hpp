// Per-picture reconstruction records: what the parse of a picture's slice data (CABAC, merge and
// AMVP) hands to the reconstruction (prediction, dequantisation, inverse transforms). Structure
// of arrays, fixed-width fields, no pointers: every entry is found by its index and every block
// by its position, so that the same arrays can be copied to device memory and read by kernels
// with one thread block per entry. docs/design/hevc.md ("Reconstruction records") describes the
// layout and the stages that consume it. Positions fit 16 bits: parse_sps caps each picture
// dimension at 16888.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sigpu::hevc {

/// CuRecords::flags
enum CuFlag : std::uint8_t {
  kCuIntra = 1,          ///< CuPredMode is MODE_INTRA
  kCuBypass = 2,         ///< cu_transquant_bypass_flag
  kCuPcm = 4,            ///< pcm_flag: samples in PictureRecords::pcm
  kCuPartModeShift = 4,  ///< PartMode (0..7) in the top four bits
};

/// TuRecords::flags
enum TuFlag : std::uint8_t {
  kTuCoded = 1,   ///< coded_block_flag: coefficients follow
  kTuSkip = 2,    ///< transform_skip_flag
  kTuIntra = 4,   ///< predicted by intra prediction (else the inter prediction is in place)
  kTuBypass = 8,  ///< cu_transquant_bypass_flag: the levels are the residual
  kTuCorner = 16  ///< intra: the reference sample above-left, p[-1][-1], is available
};

/// TuRecords::avail of an intra block of n samples a side: bit u (0 <= u < 2n / unit) of the low
/// half says that the u-th unit of the column on its left, top down, is available for intra
/// prediction (8.4.4.2.2: decoded, in the slice and tile, and with constrained_intra_pred_flag
/// not inter); bit u of the high half the same of the row above, left to right. A unit holds
/// the reference samples beside one 4x4 luma block: 4 luma or 2 chroma samples (4:2:0).
constexpr int kAvailTopShift = 16;
constexpr int avail_unit(int comp) {
  return comp ? 2 : 4;
}

/// One entry per coding unit, in decoding order.
struct CuRecords {
  std::vector<std::uint16_t> x, y;  ///< luma position
  std::vector<std::uint8_t> log2;   ///< log2CbSize
  std::vector<std::uint8_t> flags;  ///< CuFlag
  /// IntraPredModeY of the (up to four) prediction blocks in z order, and IntraPredModeC.
  std::vector<std::array<std::uint8_t, 4>> luma_modes;
  std::vector<std::uint8_t> chroma_mode;
  /// The CU's first entries in PuRecords, TuRecords and PictureRecords::pcm; each range ends
  /// where the next CU's begins (or at the array's end).
  std::vector<std::uint32_t> pu_begin, tu_begin, pcm_begin;

  std::size_t size() const { return x.size(); }
};

/// One entry per inter prediction unit, in decoding order: its final motion.
struct PuRecords {
  std::vector<std::uint16_t> x, y;  ///< luma position
  std::vector<std::uint8_t> w, h;   ///< luma size, 4 to 64
  /// mvL0 (x, y) then mvL1, quarter samples; refIdxL0 and refIdxL1, -1 when the list is unused.
  std::vector<std::array<std::int16_t, 4>> mv;
  std::vector<std::array<std::int8_t, 2>> ref_idx;
  /// Index into the picture's slices (DecodedPicture::slice_refs, the slice headers): the
  /// reference lists ref_idx points into and the weighted-prediction table.
  std::vector<std::uint16_t> slice;

  std::size_t size() const { return x.size(); }
};

/// One entry per transform block of one colour component, in decoding order (luma, then Cb
/// and Cr of the same transform unit, or after the fourth 4x4 luma block). Intra blocks are
/// recorded coded or not (they are predicted); inter blocks only when coded.
struct TuRecords {
  std::vector<std::uint16_t> x, y;  ///< position in the component's samples
  std::vector<std::uint8_t> log2;   ///< log2TrafoSize of this component's block
  std::vector<std::uint8_t> comp;   ///< cIdx
  std::vector<std::uint8_t>
      mode;                      ///< intra prediction mode (predModeIntra; also scan, DST); 0 inter
  std::vector<std::uint8_t> qp;  ///< qP of 8.6.2 (QpBdOffset included)
  std::vector<std::uint8_t> flags;  ///< TuFlag
  /// Intra blocks: their reference samples' availability, as above (0 for inter blocks).
  /// Recorded at parse time, where the slice and tile maps and the neighbours' prediction modes
  /// are at hand, so that reconstruction (CPU or GPU) needs no more than the planes.
  std::vector<std::uint32_t> avail;
  std::vector<std::uint8_t> cols;  ///< the non-zero coefficients lie in the first cols
  std::vector<std::uint8_t> rows;  ///< columns and rows (bounds the inverse transform's work)
  std::vector<std::uint32_t> coeff_begin;  ///< into PictureRecords::coeffs
  std::vector<std::uint16_t> coeff_count;

  std::size_t size() const { return x.size(); }
};

/// A non-zero coefficient: TransCoeffLevel (16 bits, two's complement) in the low half and
/// its raster index y * n + x in the block in the high half.
constexpr std::uint32_t pack_coeff(int index, int level) {
  return static_cast<std::uint32_t>(index) << 16 | (static_cast<std::uint32_t>(level) & 0xffff);
}
constexpr int coeff_index(std::uint32_t c) {
  return static_cast<int>(c >> 16);
}
constexpr int coeff_level(std::uint32_t c) {
  return static_cast<std::int16_t>(c & 0xffff);
}

struct PictureRecords {
  /// Raster addresses of the CTBs parsed to their end, in decoding order, and the first CU of
  /// each (its CUs end where the next parsed CTB's begin). A CTB missing here was lost or
  /// damaged: reconstruction leaves it to concealment.
  std::vector<std::uint32_t> ctb_rs, ctb_cu_begin;
  CuRecords cu;
  PuRecords pu;
  TuRecords tu;
  std::vector<std::uint32_t> coeffs;  ///< pack_coeff, each TU's in decoding order
  std::vector<std::uint16_t> pcm;     ///< PCM CUs' samples at the bit depth: Y, Cb, Cr blocks

  /// Records the CTB at raster address rs, whose CUs begin at cu_begin, as parsed to its end.
  void commit_ctb(int rs, std::size_t cu_begin) {
    ctb_rs.push_back(static_cast<std::uint32_t>(rs));
    ctb_cu_begin.push_back(static_cast<std::uint32_t>(cu_begin));
    parsed_ = {cu.size(), pu.size(), tu.size(), coeffs.size(), pcm.size()};
  }
  /// Empties every array (keeping their storage).
  void clear();
  /// Appends the first `ctbs` CTBs `other` committed (its later ones are dropped), their
  /// entries' indices into the other arrays moved past this one's: how the rows of a picture
  /// parsed side by side (wpp_rows.hpp) become one picture's records in decoding order.
  void append(const PictureRecords& other, std::size_t ctbs);
  /// Drops what a CTB whose parse failed left after the last one committed.
  void truncate_to_parsed();

 private:
  struct {
    std::size_t cu = 0, pu = 0, tu = 0, coeffs = 0, pcm = 0;
  } parsed_;
};

}  // namespace sigpu::hevc
