#include "hevc/parameter_sets.hpp"

#include <algorithm>
#include <cstdio>

#include "hevc/scan.hpp"
#include "hevc/syntax_reader.hpp"

namespace sigpu::hevc {
namespace {

// Table 7-6, as 8x8 matrices in raster order (the table lists them in diagonal scan order).
constexpr std::uint8_t kDefaultIntra8x8[64] = {
    16, 16, 16, 16, 17, 18, 21, 24, 16, 16, 16, 16, 17, 19, 22, 25, 16, 16, 17, 18, 20, 22,
    25, 29, 16, 16, 18, 21, 24, 27, 31, 36, 17, 17, 20, 24, 30, 35, 41, 47, 18, 19, 22, 27,
    35, 44, 54, 65, 21, 22, 25, 31, 41, 54, 70, 88, 24, 25, 29, 36, 47, 65, 88, 115};
constexpr std::uint8_t kDefaultInter8x8[64] = {
    16, 16, 16, 16, 17, 18, 20, 24, 16, 16, 16, 17, 18, 20, 24, 25, 16, 16, 17, 18, 20, 24,
    25, 28, 16, 17, 18, 20, 24, 25, 28, 33, 17, 18, 20, 24, 25, 28, 33, 41, 18, 20, 24, 25,
    28, 33, 41, 54, 20, 24, 25, 28, 33, 41, 54, 71, 24, 25, 28, 33, 41, 54, 71, 91};

void parse_ptl(SyntaxReader& r, int max_sub_layers_minus1, ProfileTierLevel& p) {
  p.profile_space = static_cast<int>(r.u(2, "general_profile_space"));
  p.tier = r.flag("general_tier_flag");
  p.profile_idc = static_cast<int>(r.u(5, "general_profile_idc"));
  p.compat_flags = r.u(32, "general_profile_compatibility_flag");
  r.skip_bits(4, "general_progressive_source_flag..general_frame_only_constraint_flag");
  // The 43 bits that follow carry the range-extension constraint flags for profiles 4..11.
  p.max_12bit = r.flag("general_max_12bit_constraint_flag");
  p.max_10bit = r.flag("general_max_10bit_constraint_flag");
  p.max_8bit = r.flag("general_max_8bit_constraint_flag");
  p.max_422 = r.flag("general_max_422chroma_constraint_flag");
  p.max_420 = r.flag("general_max_420chroma_constraint_flag");
  p.max_mono = r.flag("general_max_monochrome_constraint_flag");
  p.intra_constraint = r.flag("general_intra_constraint_flag");
  p.one_picture_only = r.flag("general_one_picture_only_constraint_flag");
  p.lower_bit_rate = r.flag("general_lower_bit_rate_constraint_flag");
  r.skip_bits(34, "general_reserved_zero_34bits");
  r.skip_bits(1, "general_inbld_flag");
  p.level_idc = static_cast<int>(r.u(8, "general_level_idc"));
  bool profile_present[8] = {}, level_present[8] = {};
  for (int i = 0; i < max_sub_layers_minus1; ++i) {
    profile_present[i] = r.flag("sub_layer_profile_present_flag");
    level_present[i] = r.flag("sub_layer_level_present_flag");
  }
  if (max_sub_layers_minus1 > 0)
    for (int i = max_sub_layers_minus1; i < 8; ++i) r.skip_bits(2, "reserved_zero_2bits");
  for (int i = 0; i < max_sub_layers_minus1; ++i) {
    if (profile_present[i]) r.skip_bits(88, "sub_layer profile");
    if (level_present[i]) r.skip_bits(8, "sub_layer_level_idc");
  }
}

void parse_scaling_list_data(SyntaxReader& r, ScalingListData& d) {
  const ScalingListData def = ScalingListData::defaults();
  for (int size = 0; size < 4; ++size) {
    for (int m = 0; m < 6; m += size == 3 ? 3 : 1) {
      const int coefs = size == 0 ? 16 : 64;
      if (!r.flag("scaling_list_pred_mode_flag")) {
        const int delta =
            static_cast<int>(r.ue("scaling_list_pred_matrix_id_delta", size == 3 ? m / 3 : m));
        if (delta == 0) {
          d.list[size][m] = def.list[size][m];
          d.dc[size][m] = 16;
        } else {
          const int ref = m - delta * (size == 3 ? 3 : 1);
          d.list[size][m] = d.list[size][ref];
          d.dc[size][m] = d.dc[size][ref];
        }
      } else {
        int next = 8;
        if (size > 1) {
          next = r.se("scaling_list_dc_coef_minus8", -7, 247) + 8;
          d.dc[size][m] = static_cast<std::uint8_t>(next);
        }
        for (int i = 0; i < coefs; ++i) {
          const int delta = r.se("scaling_list_delta_coef", -128, 127);
          next = (next + delta + 256) % 256;
          if (next == 0) SyntaxReader::fail("scaling_list_delta_coef", "ScalingList value 0");
          d.list[size][m][i] = static_cast<std::uint8_t>(next);
        }
        if (size <= 1) d.dc[size][m] = d.list[size][m][0];
      }
    }
  }
  // 32x32 chroma lists (only used for 4:4:4) follow their 16x16 counterparts (7.3.4).
  for (int m : {1, 2, 4, 5}) {
    d.list[3][m] = d.list[2][m];
    d.dc[3][m] = d.dc[2][m];
  }
}

void parse_hrd_sub_layer(SyntaxReader& r, int cpb_cnt, bool sub_pic) {
  for (int j = 0; j <= cpb_cnt; ++j) {
    r.ue("bit_rate_value_minus1");
    r.ue("cpb_size_value_minus1");
    if (sub_pic) {
      r.ue("cpb_size_du_value_minus1");
      r.ue("bit_rate_du_value_minus1");
    }
    r.flag("cbr_flag");
  }
}

void parse_hrd(SyntaxReader& r, int max_sub_layers_minus1) {
  bool nal = false, vcl = false, sub_pic = false;
  nal = r.flag("nal_hrd_parameters_present_flag");
  vcl = r.flag("vcl_hrd_parameters_present_flag");
  if (nal || vcl) {
    sub_pic = r.flag("sub_pic_hrd_params_present_flag");
    if (sub_pic) r.skip_bits(8 + 5 + 1 + 5, "sub_pic_hrd_params");
    r.skip_bits(8, "bit_rate_scale, cpb_size_scale");
    if (sub_pic) r.skip_bits(4, "cpb_size_du_scale");
    r.skip_bits(15, "hrd delay lengths");
  }
  for (int i = 0; i <= max_sub_layers_minus1; ++i) {
    const bool fixed_general = r.flag("fixed_pic_rate_general_flag");
    bool fixed_cvs = true;
    if (!fixed_general) fixed_cvs = r.flag("fixed_pic_rate_within_cvs_flag");
    bool low_delay = false;
    if (fixed_cvs)
      r.ue("elemental_duration_in_tc_minus1", 2047);
    else
      low_delay = r.flag("low_delay_hrd_flag");
    int cpb_cnt = 0;
    if (!low_delay) cpb_cnt = static_cast<int>(r.ue("cpb_cnt_minus1", 31));
    if (nal) parse_hrd_sub_layer(r, cpb_cnt, sub_pic);
    if (vcl) parse_hrd_sub_layer(r, cpb_cnt, sub_pic);
  }
}

void parse_vui(SyntaxReader& r, int max_sub_layers_minus1) {
  if (r.flag("aspect_ratio_info_present_flag")) {
    if (r.u(8, "aspect_ratio_idc") == 255) r.skip_bits(32, "sar_width, sar_height");
  }
  if (r.flag("overscan_info_present_flag")) r.flag("overscan_appropriate_flag");
  if (r.flag("video_signal_type_present_flag")) {
    r.skip_bits(4, "video_format, video_full_range_flag");
    if (r.flag("colour_description_present_flag")) r.skip_bits(24, "colour_description");
  }
  if (r.flag("chroma_loc_info_present_flag")) {
    r.ue("chroma_sample_loc_type_top_field", 5);
    r.ue("chroma_sample_loc_type_bottom_field", 5);
  }
  r.skip_bits(3, "neutral_chroma_indication_flag, field_seq_flag, frame_field_info_present_flag");
  if (r.flag("default_display_window_flag"))
    for (int i = 0; i < 4; ++i) r.ue("def_disp_win_offset");
  if (r.flag("vui_timing_info_present_flag")) {
    r.skip_bits(64, "vui_num_units_in_tick, vui_time_scale");
    if (r.flag("vui_poc_proportional_to_timing_flag")) r.ue("vui_num_ticks_poc_diff_one_minus1");
    if (r.flag("vui_hrd_parameters_present_flag")) parse_hrd(r, max_sub_layers_minus1);
  }
  if (r.flag("bitstream_restriction_flag")) {
    r.skip_bits(3, "tiles_fixed_structure_flag..restricted_ref_pic_lists_flag");
    r.ue("min_spatial_segmentation_idc", 4095);
    r.ue("max_bytes_per_pic_denom", 16);
    r.ue("max_bits_per_min_cu_denom", 16);
    r.ue("log2_max_mv_length_horizontal", 15);
    r.ue("log2_max_mv_length_vertical", 15);
  }
}

}  // namespace

ShortTermRps parse_st_rps(SyntaxReader& r, int idx, int num_sets,
                          const std::vector<ShortTermRps>& previous) {
  ShortTermRps out;
  bool inter_pred = false;
  if (idx != 0) inter_pred = r.flag("inter_ref_pic_set_prediction_flag");
  if (inter_pred) {
    int delta_idx = 1;
    if (idx == num_sets) delta_idx = static_cast<int>(r.ue("delta_idx_minus1", idx - 1)) + 1;
    const ShortTermRps& ref = previous[idx - delta_idx];
    const bool sign = r.flag("delta_rps_sign");
    const int abs_delta = static_cast<int>(r.ue("abs_delta_rps_minus1", 32767)) + 1;
    const int delta_rps = sign ? -abs_delta : abs_delta;
    const int n_ref = ref.num_delta_pocs();
    bool used[33], use_delta[33];
    for (int j = 0; j <= n_ref; ++j) {
      used[j] = r.flag("used_by_curr_pic_flag");
      use_delta[j] = used[j] || r.flag("use_delta_flag");
    }
    // 7.4.8 (7-61, 7-62): the reference set's pictures shifted by deltaRps, re-sorted.
    int d[33], u[33], n = 0;
    auto add = [&](int dpoc, int j) {
      if (n >= 32) SyntaxReader::fail("use_delta_flag", "more than 32 pictures in the RPS");
      d[n] = dpoc;
      u[n++] = used[j];
    };
    const int neg_ref = ref.num_negative, pos_ref = ref.num_positive;
    for (int j = pos_ref - 1; j >= 0; --j) {
      const int dpoc = ref.delta_poc[neg_ref + j] + delta_rps;
      if (dpoc < 0 && use_delta[neg_ref + j]) add(dpoc, neg_ref + j);
    }
    if (delta_rps < 0 && use_delta[n_ref]) add(delta_rps, n_ref);
    for (int j = 0; j < neg_ref; ++j) {
      const int dpoc = ref.delta_poc[j] + delta_rps;
      if (dpoc < 0 && use_delta[j]) add(dpoc, j);
    }
    out.num_negative = n;
    for (int j = neg_ref - 1; j >= 0; --j) {
      const int dpoc = ref.delta_poc[j] + delta_rps;
      if (dpoc > 0 && use_delta[j]) add(dpoc, j);
    }
    if (delta_rps > 0 && use_delta[n_ref]) add(delta_rps, n_ref);
    for (int j = 0; j < pos_ref; ++j) {
      const int dpoc = ref.delta_poc[neg_ref + j] + delta_rps;
      if (dpoc > 0 && use_delta[neg_ref + j]) add(dpoc, neg_ref + j);
    }
    out.num_positive = n - out.num_negative;
    SyntaxReader::expect("NumDeltaPocs", n, 0, 16);
    for (int i = 0; i < n; ++i) {
      out.delta_poc[i] = d[i];
      out.used[i] = u[i] != 0;
    }
    return out;
  }
  out.num_negative = static_cast<int>(r.ue("num_negative_pics", 16));
  out.num_positive = static_cast<int>(r.ue("num_positive_pics", 16 - out.num_negative));
  int poc = 0;
  for (int i = 0; i < out.num_negative; ++i) {
    poc -= static_cast<int>(r.ue("delta_poc_s0_minus1", 32767)) + 1;
    out.delta_poc[i] = poc;
    out.used[i] = r.flag("used_by_curr_pic_s0_flag");
  }
  poc = 0;
  for (int i = 0; i < out.num_positive; ++i) {
    poc += static_cast<int>(r.ue("delta_poc_s1_minus1", 32767)) + 1;
    out.delta_poc[out.num_negative + i] = poc;
    out.used[out.num_negative + i] = r.flag("used_by_curr_pic_s1_flag");
  }
  return out;
}

ScalingListData ScalingListData::defaults() {
  ScalingListData d;
  for (int m = 0; m < 6; ++m) {
    d.list[0][m].fill(16);
    d.dc[0][m] = 16;
    for (int s = 1; s < 4; ++s) {
      for (int i = 0; i < 64; ++i) {
        const ScanPos p = scan_tables().order[3][0][i];
        d.list[s][m][i] = (m < 3 ? kDefaultIntra8x8 : kDefaultInter8x8)[p.y * 8 + p.x];
      }
      d.dc[s][m] = 16;
    }
  }
  return d;
}

ScalingFactors ScalingListData::factors() const {
  ScalingFactors f;
  const auto& scans = scan_tables();
  for (int s = 0; s < 4; ++s) {
    const int n = 4 << s;
    for (int m = 0; m < 6; ++m) {
      std::uint8_t* out = f.table.data() + scaling_offset(s + 2, m);
      const int coefs = s == 0 ? 16 : 64;
      const int log2 = s == 0 ? 2 : 3;
      const int up = s <= 1 ? 1 : (1 << (s - 1));  // replication of the 8x8 list
      for (int i = 0; i < coefs; ++i) {
        const ScanPos p = scans.order[log2][0][i];
        for (int dy = 0; dy < up; ++dy)
          for (int dx = 0; dx < up; ++dx)
            out[static_cast<std::size_t>(p.y * up + dy) * n + p.x * up + dx] = list[s][m][i];
      }
      if (s >= 2) out[0] = dc[s][m];
    }
  }
  return f;
}

void parse_vps(std::span<const std::uint8_t> rbsp, Vps& out) {
  SyntaxReader r(rbsp);
  out.id = static_cast<int>(r.u(4, "vps_video_parameter_set_id"));
}

void parse_sps(std::span<const std::uint8_t> rbsp, Sps& s) {
  SyntaxReader r(rbsp);
  s.vps_id = static_cast<int>(r.u(4, "sps_video_parameter_set_id"));
  const int max_sub_layers_minus1 = static_cast<int>(r.u(3, "sps_max_sub_layers_minus1"));
  SyntaxReader::expect("sps_max_sub_layers_minus1", max_sub_layers_minus1, 0, 6);
  s.max_sub_layers = max_sub_layers_minus1 + 1;
  r.flag("sps_temporal_id_nesting_flag");
  parse_ptl(r, max_sub_layers_minus1, s.ptl);
  s.id = static_cast<int>(r.ue("sps_seq_parameter_set_id", 15));
  s.chroma_format_idc = static_cast<int>(r.ue("chroma_format_idc", 3));
  if (s.chroma_format_idc == 3) s.separate_colour_plane = r.flag("separate_colour_plane_flag");
  s.width = static_cast<int>(r.ue("pic_width_in_luma_samples", 16888));
  s.height = static_cast<int>(r.ue("pic_height_in_luma_samples", 16888));
  if (s.width == 0 || s.height == 0)
    SyntaxReader::fail("pic_width_in_luma_samples", "picture size 0");
  const int sub_w = (s.chroma_format_idc == 1 || s.chroma_format_idc == 2) ? 2 : 1;
  const int sub_h = s.chroma_format_idc == 1 ? 2 : 1;
  if (r.flag("conformance_window_flag")) {
    s.conf_left = static_cast<int>(r.ue("conf_win_left_offset", 8192)) * sub_w;
    s.conf_right = static_cast<int>(r.ue("conf_win_right_offset", 8192)) * sub_w;
    s.conf_top = static_cast<int>(r.ue("conf_win_top_offset", 8192)) * sub_h;
    s.conf_bottom = static_cast<int>(r.ue("conf_win_bottom_offset", 8192)) * sub_h;
    if (s.conf_left + s.conf_right >= s.width || s.conf_top + s.conf_bottom >= s.height)
      SyntaxReader::fail("conf_win_offset", "conformance window leaves no picture");
  }
  s.bit_depth_luma = static_cast<int>(r.ue("bit_depth_luma_minus8", 8)) + 8;
  s.bit_depth_chroma = static_cast<int>(r.ue("bit_depth_chroma_minus8", 8)) + 8;
  s.log2_max_poc_lsb = static_cast<int>(r.ue("log2_max_pic_order_cnt_lsb_minus4", 12)) + 4;
  const bool ordering_all = r.flag("sps_sub_layer_ordering_info_present_flag");
  for (int i = ordering_all ? 0 : max_sub_layers_minus1; i <= max_sub_layers_minus1; ++i) {
    s.max_dec_pic_buffering = static_cast<int>(r.ue("sps_max_dec_pic_buffering_minus1", 15)) + 1;
    s.max_num_reorder =
        static_cast<int>(r.ue("sps_max_num_reorder_pics", s.max_dec_pic_buffering - 1));
    // Beyond any picture count a decoder meets: no limit in practice.
    s.max_latency_increase_plus1 = static_cast<int>(
        std::min<std::uint32_t>(r.ue("sps_max_latency_increase_plus1", 0xfffffffe), 1u << 16));
  }
  s.log2_min_cb = static_cast<int>(r.ue("log2_min_luma_coding_block_size_minus3", 3)) + 3;
  s.log2_ctb =
      s.log2_min_cb + static_cast<int>(r.ue("log2_diff_max_min_luma_coding_block_size", 3));
  SyntaxReader::expect("CtbLog2SizeY", s.log2_ctb, 4, 6);
  s.log2_min_tb = static_cast<int>(r.ue("log2_min_luma_transform_block_size_minus2", 3)) + 2;
  s.log2_max_tb =
      s.log2_min_tb + static_cast<int>(r.ue("log2_diff_max_min_luma_transform_block_size", 3));
  if (s.log2_min_tb >= s.log2_min_cb || s.log2_max_tb > 5 || s.log2_max_tb > s.log2_ctb)
    SyntaxReader::fail("log2_min_luma_transform_block_size_minus2",
                       "transform block sizes do not fit the coding block sizes");
  s.max_transform_hierarchy_depth_inter =
      static_cast<int>(r.ue("max_transform_hierarchy_depth_inter", s.log2_ctb - s.log2_min_tb));
  s.max_transform_hierarchy_depth_intra =
      static_cast<int>(r.ue("max_transform_hierarchy_depth_intra", s.log2_ctb - s.log2_min_tb));
  s.scaling_list_enabled = r.flag("scaling_list_enabled_flag");
  s.scaling_list = ScalingListData::defaults();
  if (s.scaling_list_enabled && r.flag("sps_scaling_list_data_present_flag"))
    parse_scaling_list_data(r, s.scaling_list);
  s.amp = r.flag("amp_enabled_flag");
  s.sao = r.flag("sample_adaptive_offset_enabled_flag");
  s.pcm = r.flag("pcm_enabled_flag");
  if (s.pcm) {
    s.pcm_bit_depth_luma = static_cast<int>(r.u(4, "pcm_sample_bit_depth_luma_minus1")) + 1;
    s.pcm_bit_depth_chroma = static_cast<int>(r.u(4, "pcm_sample_bit_depth_chroma_minus1")) + 1;
    if (s.pcm_bit_depth_luma > s.bit_depth_luma || s.pcm_bit_depth_chroma > s.bit_depth_chroma)
      SyntaxReader::fail("pcm_sample_bit_depth_luma_minus1", "PCM bit depth above the bit depth");
    s.log2_min_pcm_cb = static_cast<int>(r.ue("log2_min_pcm_luma_coding_block_size_minus3", 2)) + 3;
    s.log2_max_pcm_cb = s.log2_min_pcm_cb +
                        static_cast<int>(r.ue("log2_diff_max_min_pcm_luma_coding_block_size", 2));
    if (s.log2_min_pcm_cb < s.log2_min_cb || s.log2_max_pcm_cb > std::min(s.log2_ctb, 5))
      SyntaxReader::fail("log2_min_pcm_luma_coding_block_size_minus3", "PCM sizes out of range");
    s.pcm_loop_filter_disabled = r.flag("pcm_loop_filter_disabled_flag");
  }
  s.num_short_term_ref_pic_sets = static_cast<int>(r.ue("num_short_term_ref_pic_sets", 64));
  s.st_rps.clear();
  for (int i = 0; i < s.num_short_term_ref_pic_sets; ++i)
    s.st_rps.push_back(parse_st_rps(r, i, s.num_short_term_ref_pic_sets, s.st_rps));
  s.long_term_ref_pics_present = r.flag("long_term_ref_pics_present_flag");
  if (s.long_term_ref_pics_present) {
    s.num_long_term_ref_pics_sps = static_cast<int>(r.ue("num_long_term_ref_pics_sps", 32));
    for (int i = 0; i < s.num_long_term_ref_pics_sps; ++i) {
      s.lt_ref_pic_poc_lsb_sps[i] = static_cast<int>(
          r.u(static_cast<unsigned>(s.log2_max_poc_lsb), "lt_ref_pic_poc_lsb_sps"));
      s.used_by_curr_pic_lt_sps[i] = r.flag("used_by_curr_pic_lt_sps_flag");
    }
  }
  s.temporal_mvp = r.flag("sps_temporal_mvp_enabled_flag");
  s.strong_intra_smoothing = r.flag("strong_intra_smoothing_enabled_flag");
  if (r.flag("vui_parameters_present_flag")) parse_vui(r, max_sub_layers_minus1);
  if (r.flag("sps_extension_present_flag")) {
    const bool range = r.flag("sps_range_extension_flag");
    r.skip_bits(7, "sps_multilayer/3d/scc_extension_flag, sps_extension_4bits");
    if (range) {
      s.transform_skip_rotation = r.flag("transform_skip_rotation_enabled_flag");
      s.transform_skip_context = r.flag("transform_skip_context_enabled_flag");
      s.implicit_rdpcm = r.flag("implicit_rdpcm_enabled_flag");
      s.explicit_rdpcm = r.flag("explicit_rdpcm_enabled_flag");
      s.extended_precision = r.flag("extended_precision_processing_flag");
      s.intra_smoothing_disabled = r.flag("intra_smoothing_disabled_flag");
      s.high_precision_offsets = r.flag("high_precision_offsets_enabled_flag");
      s.persistent_rice_adaptation = r.flag("persistent_rice_adaptation_enabled_flag");
      s.cabac_bypass_alignment = r.flag("cabac_bypass_alignment_enabled_flag");
    }
  }
}

void parse_pps(std::span<const std::uint8_t> rbsp, Pps& p) {
  SyntaxReader r(rbsp);
  p.id = static_cast<int>(r.ue("pps_pic_parameter_set_id", 63));
  p.sps_id = static_cast<int>(r.ue("pps_seq_parameter_set_id", 15));
  p.dependent_slice_segments = r.flag("dependent_slice_segments_enabled_flag");
  p.output_flag_present = r.flag("output_flag_present_flag");
  p.num_extra_slice_header_bits = static_cast<int>(r.u(3, "num_extra_slice_header_bits"));
  p.sign_data_hiding = r.flag("sign_data_hiding_enabled_flag");
  p.cabac_init_present = r.flag("cabac_init_present_flag");
  p.num_ref_idx_default[0] = static_cast<int>(r.ue("num_ref_idx_l0_default_active_minus1", 14)) + 1;
  p.num_ref_idx_default[1] = static_cast<int>(r.ue("num_ref_idx_l1_default_active_minus1", 14)) + 1;
  p.init_qp = 26 + r.se("init_qp_minus26", -(26 + 48), 25);
  p.constrained_intra_pred = r.flag("constrained_intra_pred_flag");
  p.transform_skip = r.flag("transform_skip_enabled_flag");
  p.cu_qp_delta_enabled = r.flag("cu_qp_delta_enabled_flag");
  if (p.cu_qp_delta_enabled)
    p.diff_cu_qp_delta_depth = static_cast<int>(r.ue("diff_cu_qp_delta_depth", 3));
  p.cb_qp_offset = r.se("pps_cb_qp_offset", -12, 12);
  p.cr_qp_offset = r.se("pps_cr_qp_offset", -12, 12);
  p.slice_chroma_qp_offsets_present = r.flag("pps_slice_chroma_qp_offsets_present_flag");
  p.weighted_pred = r.flag("weighted_pred_flag");
  p.weighted_bipred = r.flag("weighted_bipred_flag");
  p.transquant_bypass = r.flag("transquant_bypass_enabled_flag");
  p.tiles = r.flag("tiles_enabled_flag");
  p.entropy_coding_sync = r.flag("entropy_coding_sync_enabled_flag");
  p.column_widths.clear();
  p.row_heights.clear();
  p.uniform_spacing = true;
  if (p.tiles) {
    const int cols = static_cast<int>(r.ue("num_tile_columns_minus1", 19)) + 1;
    const int rows = static_cast<int>(r.ue("num_tile_rows_minus1", 21)) + 1;
    if (cols * rows == 1)
      SyntaxReader::fail("num_tile_columns_minus1", "tiles enabled with one tile");
    p.uniform_spacing = r.flag("uniform_spacing_flag");
    p.column_widths.assign(static_cast<std::size_t>(cols), 0);
    p.row_heights.assign(static_cast<std::size_t>(rows), 0);
    if (!p.uniform_spacing) {
      for (int i = 0; i + 1 < cols; ++i)
        p.column_widths[i] = static_cast<int>(r.ue("column_width_minus1", 1023)) + 1;
      for (int i = 0; i + 1 < rows; ++i)
        p.row_heights[i] = static_cast<int>(r.ue("row_height_minus1", 1023)) + 1;
    }
    p.loop_filter_across_tiles = r.flag("loop_filter_across_tiles_enabled_flag");
  }
  p.loop_filter_across_slices = r.flag("pps_loop_filter_across_slices_enabled_flag");
  if (r.flag("deblocking_filter_control_present_flag")) {
    p.deblocking_override_enabled = r.flag("deblocking_filter_override_enabled_flag");
    p.deblocking_disabled = r.flag("pps_deblocking_filter_disabled_flag");
    if (!p.deblocking_disabled) {
      p.beta_offset_div2 = r.se("pps_beta_offset_div2", -6, 6);
      p.tc_offset_div2 = r.se("pps_tc_offset_div2", -6, 6);
    }
  }
  p.scaling_list_present = r.flag("pps_scaling_list_data_present_flag");
  if (p.scaling_list_present) {
    p.scaling_list = ScalingListData::defaults();
    parse_scaling_list_data(r, p.scaling_list);
  }
  p.lists_modification_present = r.flag("lists_modification_present_flag");
  p.log2_parallel_merge_level = static_cast<int>(r.ue("log2_parallel_merge_level_minus2", 4)) + 2;
  p.slice_header_extension_present = r.flag("slice_segment_header_extension_present_flag");
  if (r.flag("pps_extension_present_flag")) {
    const bool range = r.flag("pps_range_extension_flag");
    r.skip_bits(7, "pps_multilayer/3d/scc_extension_flag, pps_extension_4bits");
    if (range) {
      if (p.transform_skip)
        p.log2_max_transform_skip_size =
            static_cast<int>(r.ue("log2_max_transform_skip_block_size_minus2", 3)) + 2;
      p.cross_component_prediction = r.flag("cross_component_prediction_enabled_flag");
      p.chroma_qp_offset_list = r.flag("chroma_qp_offset_list_enabled_flag");
      if (p.chroma_qp_offset_list) {
        r.ue("diff_cu_chroma_qp_offset_depth", 3);
        const int n = static_cast<int>(r.ue("chroma_qp_offset_list_len_minus1", 5)) + 1;
        for (int i = 0; i < n; ++i) {
          r.se("cb_qp_offset_list", -12, 12);
          r.se("cr_qp_offset_list", -12, 12);
        }
      }
      p.log2_sao_offset_scale_luma = static_cast<int>(r.ue("log2_sao_offset_scale_luma", 6));
      p.log2_sao_offset_scale_chroma = static_cast<int>(r.ue("log2_sao_offset_scale_chroma", 6));
    }
  }
}

std::shared_ptr<const Pps::Geometry> derive_geometry(const Pps& p, const Sps& s) {
  auto g = std::make_shared<Pps::Geometry>();
  const int w = s.width_ctbs(), h = s.height_ctbs();
  g->width_ctbs = w;
  g->height_ctbs = h;
  g->log2_ctb = s.log2_ctb;
  std::vector<int> cw = p.tiles ? p.column_widths : std::vector<int>{w};
  std::vector<int> rh = p.tiles ? p.row_heights : std::vector<int>{h};
  const int cols = static_cast<int>(cw.size()), rows = static_cast<int>(rh.size());
  if (cols > w || rows > h) SyntaxReader::fail("num_tile_columns_minus1", "more tiles than CTBs");
  if (p.tiles && p.uniform_spacing) {
    for (int i = 0; i < cols; ++i) cw[i] = ((i + 1) * w) / cols - (i * w) / cols;
    for (int j = 0; j < rows; ++j) rh[j] = ((j + 1) * h) / rows - (j * h) / rows;
  } else if (p.tiles) {
    int sum = 0;
    for (int i = 0; i + 1 < cols; ++i) sum += cw[i];
    if (sum >= w) SyntaxReader::fail("column_width_minus1", "tile columns wider than the picture");
    cw[cols - 1] = w - sum;
    sum = 0;
    for (int j = 0; j + 1 < rows; ++j) sum += rh[j];
    if (sum >= h) SyntaxReader::fail("row_height_minus1", "tile rows taller than the picture");
    rh[rows - 1] = h - sum;
  }
  g->col_bd.assign(static_cast<std::size_t>(cols) + 1, 0);
  g->row_bd.assign(static_cast<std::size_t>(rows) + 1, 0);
  for (int i = 0; i < cols; ++i) g->col_bd[i + 1] = g->col_bd[i] + cw[i];
  for (int j = 0; j < rows; ++j) g->row_bd[j + 1] = g->row_bd[j] + rh[j];
  const std::size_t n = static_cast<std::size_t>(w) * h;
  g->rs_to_ts.assign(n, 0);
  g->ts_to_rs.assign(n, 0);
  g->tile_id.assign(n, 0);
  for (int rs = 0; rs < static_cast<int>(n); ++rs) {
    const int tx = rs % w, ty = rs / w;
    int tile_x = 0, tile_y = 0;
    for (int i = 0; i < cols; ++i)
      if (tx >= g->col_bd[i]) tile_x = i;
    for (int j = 0; j < rows; ++j)
      if (ty >= g->row_bd[j]) tile_y = j;
    int ts = 0;
    for (int i = 0; i < tile_x; ++i) ts += rh[tile_y] * cw[i];
    for (int j = 0; j < tile_y; ++j) ts += w * rh[j];
    ts += (ty - g->row_bd[tile_y]) * cw[tile_x] + tx - g->col_bd[tile_x];
    g->rs_to_ts[rs] = ts;
    g->ts_to_rs[ts] = rs;
    g->tile_id[ts] = tile_y * cols + tile_x;
  }
  // z-scan order of every 4x4 block (6.5.2, at 4x4 rather than minimum TB granularity).
  const int per_ctb = 1 << (s.log2_ctb - 2);
  const int bw = w * per_ctb, bh = h * per_ctb;
  // The order inside a CTB (bits of x and y interleaved) is the same in every CTB.
  std::vector<std::uint32_t> in_ctb(static_cast<std::size_t>(per_ctb) * per_ctb, 0);
  for (int ly = 0; ly < per_ctb; ++ly)
    for (int lx = 0; lx < per_ctb; ++lx)
      for (int i = 0; i < s.log2_ctb - 2; ++i)
        in_ctb[static_cast<std::size_t>(ly) * per_ctb + lx] += static_cast<std::uint32_t>(
            (((lx >> i) & 1) << (2 * i)) | (((ly >> i) & 1) << (2 * i + 1)));
  g->min_tb_zs.assign(static_cast<std::size_t>(bw) * bh, 0);
  for (int by = 0; by < bh; ++by) {
    const std::uint32_t* local = in_ctb.data() + static_cast<std::size_t>(by % per_ctb) * per_ctb;
    std::uint32_t* row = g->min_tb_zs.data() + static_cast<std::size_t>(by) * bw;
    for (int cx = 0; cx < w; ++cx) {
      const std::uint32_t base = static_cast<std::uint32_t>(g->rs_to_ts[(by / per_ctb) * w + cx])
                                 << (2 * (s.log2_ctb - 2));
      for (int lx = 0; lx < per_ctb; ++lx) row[cx * per_ctb + lx] = base + local[lx];
    }
  }
  return g;
}

void check_supported(const Sps& s) {
  auto refuse = [](const std::string& what) {
    throw Unsupported("SPS: " + what + " is not supported");
  };
  const int prof = s.ptl.profile_idc;
  const bool rext = prof == 4 || (s.ptl.compat_flags & (1u << (31 - 4)));
  if (!(prof == 1 || prof == 2 || prof == 3 || rext))
    refuse("general_profile_idc " + std::to_string(prof) +
           " (only Main, Main 10, Main Still "
           "Picture and the range-extension Main Intra / Main 10 Intra profiles)");
  if (s.chroma_format_idc != 1 && s.chroma_format_idc != 0)
    refuse("chroma_format_idc " + std::to_string(s.chroma_format_idc) + " (4:2:0 and 4:0:0 only)");
  if (s.bit_depth_luma > 12 || s.bit_depth_chroma > 12) refuse("a bit depth above 12");
  if (s.transform_skip_rotation) refuse("transform_skip_rotation_enabled_flag");
  if (s.transform_skip_context) refuse("transform_skip_context_enabled_flag");
  if (s.implicit_rdpcm) refuse("implicit_rdpcm_enabled_flag");
  if (s.explicit_rdpcm) refuse("explicit_rdpcm_enabled_flag");
  if (s.extended_precision) refuse("extended_precision_processing_flag");
  if (s.high_precision_offsets) refuse("high_precision_offsets_enabled_flag");
  if (s.persistent_rice_adaptation) refuse("persistent_rice_adaptation_enabled_flag");
  if (s.cabac_bypass_alignment) refuse("cabac_bypass_alignment_enabled_flag");
}

void check_supported(const Pps& p) {
  if (p.cross_component_prediction)
    throw Unsupported("PPS: cross_component_prediction_enabled_flag is not supported");
  if (p.chroma_qp_offset_list)
    throw Unsupported(
        "PPS: chroma_qp_offset_list_enabled_flag (cu_chroma_qp_offset) is not supported");
}

std::string Sps::describe() const {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "SPS %d: profile %d level %.1f, %dx%d (cropped %dx%d), 4:%s, %d/%d bit, CTB %d, "
                "CB %d, TB %d..%d, intra depth %d%s%s%s%s%s",
                id, ptl.profile_idc, ptl.level_idc / 30.0, width, height,
                width - conf_left - conf_right, height - conf_top - conf_bottom,
                chroma_format_idc == 1 ? "2:0" : (chroma_format_idc == 0 ? "0:0" : "x:x"),
                bit_depth_luma, bit_depth_chroma, ctb_size(), 1 << log2_min_cb, 1 << log2_min_tb,
                1 << log2_max_tb, max_transform_hierarchy_depth_intra,
                scaling_list_enabled ? ", scaling lists" : "", sao ? ", SAO" : "",
                pcm ? ", PCM" : "", strong_intra_smoothing ? ", strong intra smoothing" : "",
                intra_smoothing_disabled ? ", intra smoothing disabled" : "");
  return buf;
}

std::string Pps::describe() const {
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "PPS %d: SPS %d, init QP %d, cb/cr QP offset %d/%d%s%s%s%s%s%s, tiles %zux%zu%s, "
                "deblocking %s (beta %d, tc %d)%s",
                id, sps_id, init_qp, cb_qp_offset, cr_qp_offset,
                cu_qp_delta_enabled ? ", cu_qp_delta" : "", sign_data_hiding ? ", SDH" : "",
                transform_skip ? ", transform skip" : "",
                transquant_bypass ? ", transquant bypass" : "", entropy_coding_sync ? ", WPP" : "",
                dependent_slice_segments ? ", dependent slices" : "",
                tiles ? column_widths.size() : 1, tiles ? row_heights.size() : 1,
                tiles && uniform_spacing ? " uniform" : "", deblocking_disabled ? "off" : "on",
                beta_offset_div2, tc_offset_div2, scaling_list_present ? ", scaling lists" : "");
  return buf;
}

}  // namespace sigpu::hevc
