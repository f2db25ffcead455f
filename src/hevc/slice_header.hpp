// Slice segment headers (7.3.6.1): intra and inter slices.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "hevc/nal.hpp"
#include "hevc/parameter_sets.hpp"

namespace sigpu::hevc {

/// pred_weight_table() (7.3.6.3) with the weights and offsets derived from it (7.4.7.3), offsets
/// already scaled to the bit depth.
struct PredWeights {
  int log2_denom[2] = {};  ///< luma, chroma
  /// [list][ref_idx][component]: weight, offset; flags say whether the entry was explicit.
  std::int16_t weight[2][16][3] = {}, offset[2][16][3] = {};
};

/// A long-term entry of the slice header (7.4.7.1): PocLsbLt or, with the MSB, the full POC.
struct LongTermRef {
  int poc = 0;
  bool msb_present = false;
  bool used = false;
};

struct SliceHeader {
  bool first_slice_in_pic = false;
  bool dependent = false;
  int pps_id = 0;
  int segment_address = 0;  ///< slice_segment_address (raster CTB address)
  int slice_address = 0;    ///< SliceAddrRs: address of the slice's independent segment
  int slice_type = 2;       ///< 0 B, 1 P, 2 I
  bool pic_output = true;
  int poc_lsb = 0;
  ShortTermRps st_rps;  ///< the slice's short-term RPS (empty for IDR)
  int num_long_term = 0;
  std::array<LongTermRef, 32> long_term;
  bool temporal_mvp = false;  ///< slice_temporal_mvp_enabled_flag
  int num_ref_idx[2] = {};    ///< num_ref_idx_lX_active (0 for lists the slice does not use)
  bool list_modification[2] = {};
  std::array<std::array<std::uint8_t, 16>, 2> list_entry{};
  bool mvd_l1_zero = false;
  bool cabac_init = false;
  bool collocated_from_l0 = true;
  int collocated_ref_idx = 0;
  bool weighted = false;  ///< explicit weighted prediction (pred_weight_table present)
  PredWeights weights;
  int max_num_merge_cand = 5;
  bool sao_luma = false, sao_chroma = false;
  int slice_qp = 26;  ///< SliceQpY
  int cb_qp_offset = 0, cr_qp_offset = 0;
  bool deblocking_disabled = false;
  int beta_offset_div2 = 0, tc_offset_div2 = 0;
  bool loop_filter_across_slices = false;
  std::vector<std::size_t> entry_points;  ///< substream starts as rbsp offsets (first excluded)
  std::size_t data_offset = 0;            ///< slice segment data start in the rbsp
};

/// Parses the header of a slice segment NAL unit. `previous` is the last independent slice
/// segment header of the picture (dependent segments copy it); throws DecodeError naming the
/// element.
SliceHeader parse_slice_header(const NalUnit& nal, const Pps* const pps_table[64],
                               const Sps* const sps_table[16], const SliceHeader* previous);

/// NumPicTotalCurr (7-55): the pictures the slice's RPS says the current picture uses.
int num_pic_total_curr(const SliceHeader& h);

/// Only the PPS id, to find the parameter sets before parsing the rest.
int peek_slice_pps_id(const NalUnit& nal);

}  // namespace sigpu::hevc
