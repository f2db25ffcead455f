#include "hevc/slice_header.hpp"

#include <algorithm>
#include <string>

#include "hevc/syntax_reader.hpp"

namespace sigpu::hevc {
namespace {

int ceil_log2(int v) {
  int n = 0;
  while ((1 << n) < v) ++n;
  return n;
}

bool is_irap(int type) {
  return type >= kNalBlaWLp && type <= kNalRsvIrap23;
}

void parse_weights(SyntaxReader& r, SliceHeader& h, const Sps& sps) {
  PredWeights& w = h.weights;
  w.log2_denom[0] = static_cast<int>(r.ue("luma_log2_weight_denom", 7));
  const bool chroma = sps.chroma_format_idc != 0;
  w.log2_denom[1] = w.log2_denom[0];
  if (chroma) {
    w.log2_denom[1] += r.se("delta_chroma_log2_weight_denom", -7, 7);
    SyntaxReader::expect("ChromaLog2WeightDenom", w.log2_denom[1], 0, 7);
  }
  const int lists = h.slice_type == 0 ? 2 : 1;
  for (int l = 0; l < lists; ++l) {
    const int n = h.num_ref_idx[l];
    bool luma_flag[16] = {}, chroma_flag[16] = {};
    for (int i = 0; i < n; ++i) luma_flag[i] = r.flag("luma_weight_lX_flag");
    if (chroma)
      for (int i = 0; i < n; ++i) chroma_flag[i] = r.flag("chroma_weight_lX_flag");
    for (int i = 0; i < n; ++i) {
      w.weight[l][i][0] = static_cast<std::int16_t>(1 << w.log2_denom[0]);
      w.weight[l][i][1] = w.weight[l][i][2] = static_cast<std::int16_t>(1 << w.log2_denom[1]);
      w.offset[l][i][0] = w.offset[l][i][1] = w.offset[l][i][2] = 0;
      if (luma_flag[i]) {
        w.weight[l][i][0] =
            static_cast<std::int16_t>(w.weight[l][i][0] + r.se("delta_luma_weight_lX", -128, 127));
        w.offset[l][i][0] = static_cast<std::int16_t>(r.se("luma_offset_lX", -128, 127)
                                                      << (sps.bit_depth_luma - 8));
      }
      if (chroma_flag[i]) {
        for (int c = 1; c <= 2; ++c) {
          const int weight = (1 << w.log2_denom[1]) + r.se("delta_chroma_weight_lX", -128, 127);
          const int delta = r.se("delta_chroma_offset_lX", -4 * 128, 4 * 128 - 1);
          const int off =
              std::clamp((128 - ((128 * weight) >> w.log2_denom[1])) + delta, -128, 127);
          w.weight[l][i][c] = static_cast<std::int16_t>(weight);
          w.offset[l][i][c] = static_cast<std::int16_t>(off << (sps.bit_depth_chroma - 8));
        }
      }
    }
  }
}

// The P and B fields from num_ref_idx_active_override_flag to five_minus_max_num_merge_cand.
void parse_inter_fields(SyntaxReader& r, SliceHeader& h, const Sps& sps, const Pps& pps) {
  const bool b = h.slice_type == 0;
  h.num_ref_idx[0] = pps.num_ref_idx_default[0];
  h.num_ref_idx[1] = b ? pps.num_ref_idx_default[1] : 0;
  if (r.flag("num_ref_idx_active_override_flag")) {
    h.num_ref_idx[0] = static_cast<int>(r.ue("num_ref_idx_l0_active_minus1", 14)) + 1;
    if (b) h.num_ref_idx[1] = static_cast<int>(r.ue("num_ref_idx_l1_active_minus1", 14)) + 1;
  }
  const int total = num_pic_total_curr(h);
  if (total == 0) SyntaxReader::fail("slice_type", "P or B slice with no reference picture");
  if (pps.lists_modification_present && total > 1) {
    const unsigned bits = static_cast<unsigned>(ceil_log2(total));
    for (int l = 0; l < (b ? 2 : 1); ++l) {
      h.list_modification[l] = r.flag("ref_pic_list_modification_flag_lX");
      if (h.list_modification[l])
        for (int i = 0; i < h.num_ref_idx[l]; ++i) {
          const int e = static_cast<int>(r.u(bits, "list_entry_lX"));
          SyntaxReader::expect("list_entry_lX", e, 0, total - 1);
          h.list_entry[l][static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(e);
        }
    }
  }
  if (b) h.mvd_l1_zero = r.flag("mvd_l1_zero_flag");
  if (pps.cabac_init_present) h.cabac_init = r.flag("cabac_init_flag");
  if (h.temporal_mvp) {
    if (b) h.collocated_from_l0 = r.flag("collocated_from_l0_flag");
    const int n = h.num_ref_idx[h.collocated_from_l0 ? 0 : 1];
    if (n > 1)
      h.collocated_ref_idx =
          static_cast<int>(r.ue("collocated_ref_idx", static_cast<std::uint32_t>(n - 1)));
  }
  h.weighted = (pps.weighted_pred && !b) || (pps.weighted_bipred && b);
  if (h.weighted) parse_weights(r, h, sps);
  h.max_num_merge_cand = 5 - static_cast<int>(r.ue("five_minus_max_num_merge_cand", 4));
}

}  // namespace

int num_pic_total_curr(const SliceHeader& h) {
  int n = 0;
  for (int i = 0; i < h.st_rps.num_delta_pocs(); ++i)
    n += h.st_rps.used[static_cast<std::size_t>(i)];
  for (int i = 0; i < h.num_long_term; ++i) n += h.long_term[static_cast<std::size_t>(i)].used;
  return n;
}

int peek_slice_pps_id(const NalUnit& nal) {
  SyntaxReader r(nal.rbsp);
  r.flag("first_slice_segment_in_pic_flag");
  if (is_irap(nal.type)) r.flag("no_output_of_prior_pics_flag");
  return static_cast<int>(r.ue("slice_pic_parameter_set_id", 63));
}

SliceHeader parse_slice_header(const NalUnit& nal, const Pps* const pps_table[64],
                               const Sps* const sps_table[16], const SliceHeader* previous) {
  SyntaxReader r(nal.rbsp);
  SliceHeader h;
  h.first_slice_in_pic = r.flag("first_slice_segment_in_pic_flag");
  if (is_irap(nal.type)) r.flag("no_output_of_prior_pics_flag");
  h.pps_id = static_cast<int>(r.ue("slice_pic_parameter_set_id", 63));
  const Pps* pps = pps_table[h.pps_id];
  if (!pps)
    SyntaxReader::fail("slice_pic_parameter_set_id",
                       "PPS " + std::to_string(h.pps_id) + " was never received");
  const Sps* sps = sps_table[pps->sps_id];
  if (!sps)
    SyntaxReader::fail("pps_seq_parameter_set_id", "SPS " + std::to_string(pps->sps_id) +
                                                       " of PPS " + std::to_string(h.pps_id) +
                                                       " was never received");
  const int pic_ctbs = sps->width_ctbs() * sps->height_ctbs();
  if (!h.first_slice_in_pic) {
    if (pps->dependent_slice_segments) h.dependent = r.flag("dependent_slice_segment_flag");
    h.segment_address =
        static_cast<int>(r.u(static_cast<unsigned>(ceil_log2(pic_ctbs)), "slice_segment_address"));
    SyntaxReader::expect("slice_segment_address", h.segment_address, 1, pic_ctbs - 1);
  }
  if (h.dependent) {
    if (!previous)
      SyntaxReader::fail("dependent_slice_segment_flag",
                         "dependent slice segment without a preceding independent one");
    const int address = h.segment_address;
    h = *previous;
    h.first_slice_in_pic = false;
    h.dependent = true;
    h.segment_address = address;
    h.entry_points.clear();
  } else {
    h.slice_address = h.segment_address;
    r.skip_bits(static_cast<unsigned>(pps->num_extra_slice_header_bits), "slice_reserved_flag");
    h.slice_type = static_cast<int>(r.ue("slice_type", 2));
    if (h.slice_type != 2 && is_irap(nal.type))
      SyntaxReader::fail("slice_type", "P or B slice in an IRAP picture");
    if (pps->output_flag_present) h.pic_output = r.flag("pic_output_flag");
    if (sps->separate_colour_plane) r.u(2, "colour_plane_id");
    if (nal.type != kNalIdrWRadl && nal.type != kNalIdrNLp) {
      h.poc_lsb = static_cast<int>(
          r.u(static_cast<unsigned>(sps->log2_max_poc_lsb), "slice_pic_order_cnt_lsb"));
      if (!r.flag("short_term_ref_pic_set_sps_flag")) {
        h.st_rps = parse_st_rps(r, sps->num_short_term_ref_pic_sets,
                                sps->num_short_term_ref_pic_sets, sps->st_rps);
      } else {
        if (sps->num_short_term_ref_pic_sets == 0)
          SyntaxReader::fail("short_term_ref_pic_set_sps_flag", "the SPS has no short-term RPS");
        int idx = 0;
        if (sps->num_short_term_ref_pic_sets > 1)
          idx = static_cast<int>(
              r.u(static_cast<unsigned>(ceil_log2(sps->num_short_term_ref_pic_sets)),
                  "short_term_ref_pic_set_idx"));
        SyntaxReader::expect("short_term_ref_pic_set_idx", idx, 0,
                             sps->num_short_term_ref_pic_sets - 1);
        h.st_rps = sps->st_rps[static_cast<std::size_t>(idx)];
      }
      if (sps->long_term_ref_pics_present) {
        int lt_sps = 0;
        if (sps->num_long_term_ref_pics_sps > 0)
          lt_sps = static_cast<int>(r.ue(
              "num_long_term_sps", static_cast<std::uint32_t>(sps->num_long_term_ref_pics_sps)));
        const int lt_pics =
            static_cast<int>(r.ue("num_long_term_pics", static_cast<std::uint32_t>(32 - lt_sps)));
        h.num_long_term = lt_sps + lt_pics;
        if (h.num_long_term + h.st_rps.num_delta_pocs() > 32)
          SyntaxReader::fail("num_long_term_pics", "more than 32 pictures in the RPS");
        int msb_cycle = 0;
        const int max_lsb = 1 << sps->log2_max_poc_lsb;
        for (int i = 0; i < h.num_long_term; ++i) {
          LongTermRef& lt = h.long_term[static_cast<std::size_t>(i)];
          if (i < lt_sps) {
            int idx = 0;
            if (sps->num_long_term_ref_pics_sps > 1)
              idx = static_cast<int>(r.u(
                  static_cast<unsigned>(ceil_log2(sps->num_long_term_ref_pics_sps)), "lt_idx_sps"));
            SyntaxReader::expect("lt_idx_sps", idx, 0, sps->num_long_term_ref_pics_sps - 1);
            lt.poc = sps->lt_ref_pic_poc_lsb_sps[static_cast<std::size_t>(idx)];
            lt.used = sps->used_by_curr_pic_lt_sps[static_cast<std::size_t>(idx)];
          } else {
            lt.poc =
                static_cast<int>(r.u(static_cast<unsigned>(sps->log2_max_poc_lsb), "poc_lsb_lt"));
            lt.used = r.flag("used_by_curr_pic_lt_flag");
          }
          lt.msb_present = r.flag("delta_poc_msb_present_flag");
          if (lt.msb_present) {
            const int cycle = static_cast<int>(r.ue("delta_poc_msb_cycle_lt", 1u << 24));
            // DeltaPocMsbCycleLt (7-52) accumulates within each of the two groups.
            msb_cycle = (i == 0 || i == lt_sps) ? cycle : msb_cycle + cycle;
            // PicOrderCntVal - DeltaPocMsbCycleLt * MaxPicOrderCntLsb - (slice_poc_lsb - PocLsbLt):
            // stored relative to the current POC's MSB, completed once the POC is known.
            lt.poc = lt.poc - h.poc_lsb - msb_cycle * max_lsb;
          } else if (i == 0 || i == lt_sps) {
            msb_cycle = 0;
          }
        }
      }
      if (sps->temporal_mvp) h.temporal_mvp = r.flag("slice_temporal_mvp_enabled_flag");
    }
    if (sps->sao) {
      h.sao_luma = r.flag("slice_sao_luma_flag");
      if (sps->chroma_format_idc != 0) h.sao_chroma = r.flag("slice_sao_chroma_flag");
    }
    if (h.slice_type != 2) parse_inter_fields(r, h, *sps, *pps);
    const int qp_bd = sps->qp_bd_offset_y();
    h.slice_qp = pps->init_qp + r.se("slice_qp_delta", -(26 + 48), 25 + 26);
    SyntaxReader::expect("SliceQpY", h.slice_qp, -qp_bd, 51);
    if (pps->slice_chroma_qp_offsets_present) {
      h.cb_qp_offset = r.se("slice_cb_qp_offset", -12, 12);
      h.cr_qp_offset = r.se("slice_cr_qp_offset", -12, 12);
      SyntaxReader::expect("pps_cb_qp_offset + slice_cb_qp_offset",
                           pps->cb_qp_offset + h.cb_qp_offset, -12, 12);
      SyntaxReader::expect("pps_cr_qp_offset + slice_cr_qp_offset",
                           pps->cr_qp_offset + h.cr_qp_offset, -12, 12);
    }
    if (pps->chroma_qp_offset_list) r.flag("cu_chroma_qp_offset_enabled_flag");
    bool override_flag = false;
    if (pps->deblocking_override_enabled) override_flag = r.flag("deblocking_filter_override_flag");
    h.deblocking_disabled = pps->deblocking_disabled;
    h.beta_offset_div2 = pps->beta_offset_div2;
    h.tc_offset_div2 = pps->tc_offset_div2;
    if (override_flag) {
      h.deblocking_disabled = r.flag("slice_deblocking_filter_disabled_flag");
      if (!h.deblocking_disabled) {
        h.beta_offset_div2 = r.se("slice_beta_offset_div2", -6, 6);
        h.tc_offset_div2 = r.se("slice_tc_offset_div2", -6, 6);
      }
    }
    h.loop_filter_across_slices = pps->loop_filter_across_slices;
    if (pps->loop_filter_across_slices && (h.sao_luma || h.sao_chroma || !h.deblocking_disabled))
      h.loop_filter_across_slices = r.flag("slice_loop_filter_across_slices_enabled_flag");
  }
  std::vector<std::uint32_t> offsets;
  if (pps->tiles || pps->entropy_coding_sync) {
    const int n =
        static_cast<int>(r.ue("num_entry_point_offsets", static_cast<std::uint32_t>(pic_ctbs - 1)));
    if (n > 0) {
      const unsigned len = r.ue("offset_len_minus1", 31) + 1;
      for (int i = 0; i < n; ++i) offsets.push_back(r.u(len, "entry_point_offset_minus1") + 1);
    }
  }
  if (pps->slice_header_extension_present) {
    const int len = static_cast<int>(r.ue("slice_segment_header_extension_length", 256));
    r.skip_bits(static_cast<std::uint64_t>(len) * 8, "slice_segment_header_extension_data_byte");
  }
  if (!r.flag("alignment_bit_equal_to_one"))
    SyntaxReader::fail("alignment_bit_equal_to_one", "is 0");
  while (!r.byte_aligned())
    if (r.flag("alignment_bit_equal_to_zero"))
      SyntaxReader::fail("alignment_bit_equal_to_zero", "is 1");
  h.data_offset = r.byte_position();
  if (h.data_offset >= nal.rbsp.size())
    SyntaxReader::fail("slice_segment_data", "slice segment has no data");
  // Entry points count escaped bytes from the start of the slice segment data.
  std::size_t escaped = h.data_offset;
  for (std::size_t k = 0; k < nal.removed.size() && nal.removed[k] <= h.data_offset; ++k) ++escaped;
  for (std::uint32_t off : offsets) {
    escaped += off;
    const std::size_t pos = nal.rbsp_offset(escaped);
    if (pos >= nal.rbsp.size())
      SyntaxReader::fail("entry_point_offset_minus1",
                         "entry point beyond the end of the NAL unit (truncated?)");
    h.entry_points.push_back(pos);
  }
  return h;
}

}  // namespace sigpu::hevc
