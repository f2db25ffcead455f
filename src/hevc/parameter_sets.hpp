// Video, sequence and picture parameter sets (7.3.2, 7.4.3) with the values derived from them
// that decoding needs (CTB geometry, tile scan conversion, scaling factors).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hevc/tu_residual.hpp"

namespace sigpu::hevc {

/// ScalingFactor (7.4.5) for sizeId 0..3 (4x4 .. 32x32) and matrixId 0..5 (intra Y, Cb, Cr,
/// inter Y, Cb, Cr), each stored row-major [y][x] at its full size, in the flat layout the
/// residual stage reads on both sides (tu_residual.hpp).
struct ScalingFactors {
  std::array<std::uint8_t, kScalingFactorBytes> table{};
  const std::uint8_t* matrix(int log2, int id) const {
    return table.data() + scaling_offset(log2, id);
  }
};

struct ScalingListData {
  std::array<std::array<std::array<std::uint8_t, 64>, 6>, 4> list{};  ///< ScalingList[s][m][i]
  std::array<std::array<std::uint8_t, 6>, 4> dc{};  ///< scaling_list_dc_coef_minus8 + 8
  static ScalingListData defaults();
  ScalingFactors factors() const;
};

struct ProfileTierLevel {
  int profile_space = 0, profile_idc = 0, level_idc = 0;
  bool tier = false;
  std::uint32_t compat_flags = 0;
  bool intra_constraint = false, one_picture_only = false;
  bool max_12bit = false, max_10bit = false, max_8bit = false, max_422 = false, max_420 = false,
       max_mono = false, lower_bit_rate = false;
};

/// A short-term reference picture set (7.4.8): POC deltas of the pictures before the current one
/// (S0, nearest first, negative) and after it (S1, nearest first, positive).
struct ShortTermRps {
  int num_negative = 0, num_positive = 0;
  std::array<int, 32> delta_poc{};  ///< S0 then S1
  std::array<bool, 32> used{};      ///< UsedByCurrPicS0 then S1
  int num_delta_pocs() const { return num_negative + num_positive; }
};

struct Vps {
  int id = 0;
};

struct Sps {
  int id = 0, vps_id = 0;
  int max_sub_layers = 1;
  ProfileTierLevel ptl;
  int chroma_format_idc = 1;
  bool separate_colour_plane = false;
  int width = 0, height = 0;  ///< pic_width/height_in_luma_samples
  int conf_left = 0, conf_right = 0, conf_top = 0, conf_bottom = 0;  ///< in luma samples
  int bit_depth_luma = 8, bit_depth_chroma = 8;
  int log2_max_poc_lsb = 4;
  int max_num_reorder = 0;             ///< for the highest sub-layer
  int max_dec_pic_buffering = 1;       ///< sps_max_dec_pic_buffering_minus1 + 1, highest sub-layer
  int max_latency_increase_plus1 = 0;  ///< 0: no latency limit
  int log2_min_cb = 3, log2_ctb = 4, log2_min_tb = 2, log2_max_tb = 5;
  int max_transform_hierarchy_depth_inter = 0, max_transform_hierarchy_depth_intra = 0;
  bool scaling_list_enabled = false;
  ScalingListData scaling_list;  ///< the SPS's lists (or the defaults)
  bool amp = false, sao = false;
  bool pcm = false;
  int pcm_bit_depth_luma = 8, pcm_bit_depth_chroma = 8;
  int log2_min_pcm_cb = 3, log2_max_pcm_cb = 3;
  bool pcm_loop_filter_disabled = false;
  int num_short_term_ref_pic_sets = 0;
  bool long_term_ref_pics_present = false;
  int num_long_term_ref_pics_sps = 0;
  std::array<int, 32> lt_ref_pic_poc_lsb_sps{};
  std::array<bool, 32> used_by_curr_pic_lt_sps{};
  bool temporal_mvp = false;
  bool strong_intra_smoothing = false;
  // Range extension flags (7.4.3.2.2); the decoder refuses the ones it does not implement.
  bool transform_skip_rotation = false, transform_skip_context = false, implicit_rdpcm = false,
       explicit_rdpcm = false, extended_precision = false, intra_smoothing_disabled = false,
       high_precision_offsets = false, persistent_rice_adaptation = false,
       cabac_bypass_alignment = false;
  std::vector<ShortTermRps> st_rps;  ///< the SPS's short-term RPSs

  // Derived.
  int ctb_size() const { return 1 << log2_ctb; }
  int width_ctbs() const { return (width + ctb_size() - 1) >> log2_ctb; }
  int height_ctbs() const { return (height + ctb_size() - 1) >> log2_ctb; }
  int qp_bd_offset_y() const { return 6 * (bit_depth_luma - 8); }
  int qp_bd_offset_c() const { return 6 * (bit_depth_chroma - 8); }
  std::string describe() const;
};

struct Pps {
  int id = 0, sps_id = 0;
  bool dependent_slice_segments = false, output_flag_present = false;
  int num_extra_slice_header_bits = 0;
  bool sign_data_hiding = false, cabac_init_present = false;
  int num_ref_idx_default[2] = {1, 1};  ///< num_ref_idx_lX_default_active_minus1 + 1
  int init_qp = 26;
  bool constrained_intra_pred = false, transform_skip = false;
  bool cu_qp_delta_enabled = false;
  int diff_cu_qp_delta_depth = 0;
  int cb_qp_offset = 0, cr_qp_offset = 0;
  bool slice_chroma_qp_offsets_present = false;
  bool weighted_pred = false, weighted_bipred = false;
  bool transquant_bypass = false;
  bool tiles = false, entropy_coding_sync = false;
  bool uniform_spacing = true;
  std::vector<int> column_widths, row_heights;  ///< in CTBs (given or uniform)
  bool loop_filter_across_tiles = true;
  bool loop_filter_across_slices = false;
  bool deblocking_override_enabled = false, deblocking_disabled = false;
  int beta_offset_div2 = 0, tc_offset_div2 = 0;
  bool scaling_list_present = false;
  ScalingListData scaling_list;
  bool lists_modification_present = false;
  int log2_parallel_merge_level = 2;
  bool slice_header_extension_present = false;
  // Range extension.
  int log2_max_transform_skip_size = 2;
  bool cross_component_prediction = false, chroma_qp_offset_list = false;
  int log2_sao_offset_scale_luma = 0, log2_sao_offset_scale_chroma = 0;

  /// Derived once the SPS is known (6.5.1): tile boundaries and scan conversion.
  struct Geometry {
    int width_ctbs = 0, height_ctbs = 0;
    std::vector<int> col_bd, row_bd;               ///< tile boundaries in CTBs
    std::vector<int> rs_to_ts, ts_to_rs, tile_id;  ///< tile_id indexed by ts address
    std::vector<std::uint32_t> min_tb_zs;          ///< z-scan order of each 4x4 block
    int log2_ctb = 4;
    std::uint32_t zscan(int x, int y) const {  ///< luma sample position inside the picture
      return min_tb_zs[static_cast<std::size_t>(y >> 2) * (width_ctbs << (log2_ctb - 2)) +
                       (x >> 2)];
    }
    /// The part of zscan() inside the CTB: the bits of the 4x4 block's coordinates in its CTB
    /// interleaved, the same in every CTB. Within one CTB it orders blocks as zscan() does
    /// without reading the picture-sized table (whose lines miss the cache at 4K).
    static std::uint32_t zscan_in_ctb(int x, int y, int log2_ctb) {
      // spread[v]: the 4 bits of v (a CTB has at most 16 blocks a side) at even positions.
      static constexpr std::uint8_t spread[16] = {0,  1,  4,  5,  16, 17, 20, 21,
                                                  64, 65, 68, 69, 80, 81, 84, 85};
      const int mask = (1 << log2_ctb) - 1;
      return static_cast<std::uint32_t>(spread[(x & mask) >> 2] | spread[(y & mask) >> 2] << 1);
    }
  };
  std::shared_ptr<const Geometry> geometry;  ///< for the SPS it was derived with
  int geometry_sps_id = -1;
  const Sps* geometry_sps = nullptr;
  std::string describe() const;
};

class SyntaxReader;
/// st_ref_pic_set(idx) (7.3.7) with its derivation (7.4.8); `previous` holds sets 0..idx-1.
ShortTermRps parse_st_rps(SyntaxReader& r, int idx, int num_sets,
                          const std::vector<ShortTermRps>& previous);

void parse_vps(std::span<const std::uint8_t> rbsp, Vps& out);
void parse_sps(std::span<const std::uint8_t> rbsp, Sps& out);
void parse_pps(std::span<const std::uint8_t> rbsp, Pps& out);

/// Derives tile boundaries and scan orders for pps with sps; throws DecodeError when the tile
/// layout does not fit the picture.
std::shared_ptr<const Pps::Geometry> derive_geometry(const Pps& pps, const Sps& sps);

/// Refuses (throws Unsupported) what this decoder does not implement, naming the element.
void check_supported(const Sps& sps);
void check_supported(const Pps& pps);

}  // namespace sigpu::hevc
