// Slice segment headers (7.3.6.1) of intra slices.
#pragma once

#include <cstdint>
#include <vector>

#include "hevc/nal.hpp"
#include "hevc/parameter_sets.hpp"

namespace sigpu::hevc {

struct SliceHeader {
  bool first_slice_in_pic = false;
  bool dependent = false;
  int pps_id = 0;
  int segment_address = 0;  ///< slice_segment_address (raster CTB address)
  int slice_address = 0;    ///< SliceAddrRs: address of the slice's independent segment
  int slice_type = 2;       ///< 0 B, 1 P, 2 I
  bool pic_output = true;
  int poc_lsb = 0;
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
/// element, Unsupported for P and B slices.
SliceHeader parse_slice_header(const NalUnit& nal, const Pps* const pps_table[64],
                               const Sps* const sps_table[16], const SliceHeader* previous);

/// Only the PPS id, to find the parameter sets before parsing the rest.
int peek_slice_pps_id(const NalUnit& nal);

}  // namespace sigpu::hevc
