// Decoding of one slice segment's data (7.3.8) in two stages per CTU. The parse (CTUs, SAO
// syntax, the coding quadtree, coding, prediction and transform units, residuals, motion vector
// prediction) writes the picture's reconstruction records (records.hpp) and the filters' side
// information; the reconstruction then reads only the CTU's records to make its samples (intra
// prediction or motion compensation, PCM, dequantisation, inverse transforms). Reconstructing
// right after each CTU's parse keeps every schedule that decodes slices as they come; a record
// pipeline instead reconstructs the whole picture from its records after the parse.
#pragma once

#include <cstdint>

#include "hevc/cabac.hpp"
#include "hevc/errors.hpp"
#include "hevc/nal.hpp"
#include "hevc/parameter_sets.hpp"
#include "hevc/picture.hpp"
#include "hevc/residual_stage.hpp"
#include "hevc/slice_header.hpp"

namespace sigpu::hevc {

/// What carries over from one slice segment to the next within a picture.
struct PictureParseState {
  ContextSet wpp{};  ///< TableStateIdxWpp: after the second CTB of a row
  ContextSet ds{};   ///< TableStateIdxDs: at the end of a slice segment
  bool ds_valid = false;
  int last_qp_y = 26;    ///< QpY of the last coding unit, for the next quantization group
  int last_ctb_ts = -1;  ///< tile-scan address of the last CTB decoded
  /// Make each CTU's samples right after its parse; off, the parse only records them for a
  /// record pipeline (record_pipeline.hpp).
  bool reconstruct = true;
};

class WppRows;

class SliceDecoder {
 public:
  /// `refs`: the slice's reference picture lists (P and B slices), their pictures decoded.
  /// `records`: where the records go (default: the picture's).
  SliceDecoder(DecodedPicture& pic, const SliceHeader& sh, int slice_index, PictureParseState& st,
               const RefPicLists* refs = nullptr, PictureRecords* records = nullptr);
  /// Decodes the segment's CTUs; throws DecodeError naming the CTB and element on bad data.
  void decode(const NalUnit& nal);
  /// How far a row of a segment parsed row by row has come.
  enum class RowState {
    waiting,     ///< for the row above, which `rows` will say has moved on
    complete,    ///< every CTB parsed, the substream ended as it must
    incomplete,  ///< the segment ended before the row's last CTB, or the row above stopped
  };
  /// Starts CTB row `row` of a segment that wpp_rows.hpp parses row by row (this decoder's
  /// only row).
  void begin_row(const NalUnit& nal, int row);
  /// Parses the row's CTBs from `x` on (advancing it) while the row above is as far ahead as
  /// WPP needs; when it is not, tells `rows` what to wait for and returns waiting. Throws as
  /// decode() does.
  RowState continue_row(int row, int& x, WppRows& rows);
  /// The collocated picture, whose parse TMVP reads (nullptr without TMVP).
  const DecodedPicture* collocated() const { return col_pic_; }

 private:
  // coding_tree.cpp
  void decode_ctus(const NalUnit& nal);
  /// Parses the CTB at raster address rs (tile scan ts) to its end, the first of the segment or
  /// not; returns end_of_slice_segment_flag.
  bool parse_ctb(int rs, int ts, bool first);
  /// end_of_subset_one_bit, then the next substream where entry point `substream` says.
  void end_substream(std::size_t substream);
  void start_substream(const NalUnit& nal, std::size_t pos);
  void init_contexts_for_ctb(int ctb_rs, int ctb_ts, bool first_in_segment);
  void parse_sao(int rx, int ry, int ctb_rs, int ctb_ts);
  void coding_quadtree(int x0, int y0, int log2, int depth);
  void coding_unit(int x0, int y0, int log2);
  /// Reads a PCM CU's samples into the records.
  void pcm_sample(int log2);
  void transform_tree(int x0, int y0, int xb, int yb, int log2, int depth, int blk, bool parent_cb,
                      bool parent_cr);
  void transform_unit(int x0, int y0, int xb, int yb, int log2, int blk, bool cbf_l, bool cbf_cb,
                      bool cbf_cr);
  void parse_cu_qp_delta();
  void start_quantization_group(int x, int y);
  void set_cu_qp();
  /// Records the CU about to be parsed (its modes are filled in as they are parsed).
  void push_cu(int x0, int y0, int log2, std::uint8_t flags);
  /// Records a transform block of component c at (x, y) in its samples, parsing its residual
  /// when coded.
  void push_tu(int c, int x, int y, int log2, int mode, bool coded);
  /// TuRecords::avail of an intra block of component c (Cb or luma) at (x, y); `corner` the
  /// availability of p[-1][-1].
  std::uint32_t intra_availability(int c, int x, int y, int log2, bool& corner) const;
  // reconstruct.cpp
  /// Makes the samples of the CUs from cu_begin to the last one recorded (one CTU's).
  void reconstruct_ctu(std::size_t cu_begin);
  void reconstruct_tu(std::size_t t);
  void predict_intra(std::size_t t, std::uint16_t* dst);
  void add_recorded_residual(std::size_t t, std::uint16_t* dst, int stride);
  void copy_pcm(std::size_t cu);
  // inter.cpp
  /// A coding unit of a P or B slice after cu_skip_flag and part_mode: its prediction units,
  /// then (unless skipped) rqt_root_cbf and the transform tree.
  void inter_coding_unit(int x0, int y0, int log2, bool skip, int part_mode);
  int parse_part_mode_inter(int log2);
  void prediction_unit(int x_cb, int y_cb, int n_cb, int x, int y, int w, int h, int part_idx,
                       bool skip);
  void parse_mvd(int mvd[2]);
  /// The merge candidate merge_idx (8.5.3.2.2 to 8.5.3.2.5).
  MvField merge_candidate(int x_cb, int y_cb, int n_cb, int x, int y, int w, int h, int part_idx,
                          int merge_idx);
  /// mvpLX (8.5.3.2.6) for ref_idx of list x.
  void amvp(int x_cb, int y_cb, int n_cb, int x, int y, int w, int h, int part_idx, int list,
            int ref_idx, int mvp_flag, int mvp[2]);
  /// 8.5.3.2.8: the temporal candidate of list x for ref_idx; false when unavailable.
  bool temporal_mv(int x, int y, int w, int h, int list, int ref_idx, std::int16_t mv[2]) const;
  bool collocated_mv(int x, int y, int list, int ref_idx, std::int16_t mv[2]) const;
  /// 6.4.2: whether the prediction block at (xn, yn) is available to the current one (and inter).
  bool pb_available(int x_cb, int y_cb, int n_cb, int x, int y, int w, int h, int part_idx, int xn,
                    int yn) const;
  void predict_inter(int x, int y, int w, int h, const MvField& m);  // reconstruct.cpp
  void store_motion(int x, int y, int w, int h, const MvField& m);
  /// 6.4.1: whether (xn, yn) is decoded and in the slice and tile of (x_cur, y_cur).
  bool available(int x_cur, int y_cur, int xn, int yn) const {
    return available(x_cur, y_cur, geo_.zscan_in_ctb(x_cur, y_cur, sps_.log2_ctb), xn, yn);
  }
  /// The same with z_cur = the z-scan order of (x_cur, y_cur) in its CTB (zscan_in_ctb), for
  /// callers asking many times.
  bool available(int x_cur, int y_cur, std::uint32_t z_cur, int xn, int yn) const {
    if (xn < 0 || yn < 0 || xn >= sps_.width || yn >= sps_.height) return false;
    // Most neighbours lie in the current CTB, whose slice and tile are the current ones; the
    // others in the CTBs around it, whose availability is known for the whole CTB.
    const int l = sps_.log2_ctb;
    const int dx = (xn >> l) - (x_cur >> l), dy = (yn >> l) - (y_cur >> l);
    if (dx == 0 && dy == 0) return geo_.zscan_in_ctb(xn, yn, l) <= z_cur;
    if (dy >= -1 && dy <= 0 && dx >= -1 && dx <= 1 && (x_cur >> l) == (ctb_x0_ >> l) &&
        (y_cur >> l) == (ctb_y0_ >> l))
      return near_ctbs_[dy + 1][dx + 1];
    return available_in_other_ctb(x_cur, y_cur, xn, yn);
  }
  bool available_in_other_ctb(int x_cur, int y_cur, int xn, int yn) const;
  /// Fills near_ctbs_ for the current CTB.
  void find_near_ctbs();
  /// Asks for the cache lines of the per-block state the CTB at luma (x0, y0) will write.
  void prefetch_ctb_state(int x0, int y0) const;
  void record_cu(int x0, int y0, int log2, bool no_filter);
  void record_tu(int x0, int y0, int log2, bool coded_luma);
  int chroma_qp(int c) const;
  // residual.cpp
  /// Writes to out the non-zero coefficients (pack_coeff) and returns their number; cols and
  /// rows bound them.
  int residual_coding(int log2, int c, int scan_idx, std::uint32_t* out, bool& tskip, int& cols,
                      int& rows);
  // Take the engine residual_coding works on: its local copy (see there).
  int last_sig_prefix(Cabac& cabac, int log2, int c, int ctx_base);
  std::uint32_t coeff_abs_level_remaining(Cabac& cabac, int rice);

  [[noreturn]] void fail(const char* element, const std::string& what) const;

  DecodedPicture& pic_;
  const Sps& sps_;
  const Pps& pps_;
  const Pps::Geometry& geo_;
  const SliceHeader& sh_;
  int slice_index_;
  PictureParseState& st_;
  PictureRecords& rec_;
  ScalingFactors scaling_;  ///< where params_.scaling points, when scaling lists are on
  ResidualParams params_;

  Cabac cabac_;
  ContextSet ctx_{};
  const NalUnit* nal_ = nullptr;
  int ctb_rs_ = 0, ctb_x0_ = 0, ctb_y0_ = 0;
  /// Whether the CTBs above (row 0) and beside (row 1) the current one, left to right, are
  /// available from it (6.4.1: decoded, same slice, same tile); none outside the picture.
  bool near_ctbs_[2][3] = {};
  int log2_min_qg_ = 0;
  bool qg_reset_ = true;  ///< next quantization group predicts from SliceQpY
  int qp_pred_ = 26;
  bool cu_qp_delta_coded_ = false;
  int cu_qp_delta_ = 0;
  int qp_y_ = 26;
  bool transquant_bypass_ = false;
  int cu_x0_ = 0, cu_y0_ = 0, cu_log2_ = 3;
  int intra_split_ = 0, max_trafo_depth_ = 0;
  const RefPicLists* refs_ = nullptr;
  int init_type_ = 0;              ///< initType of the CABAC contexts (9.3.2.2)
  bool cu_intra_ = true;           ///< CuPredMode of the current CU is MODE_INTRA
  bool inter_split_ = false;       ///< interSplitFlag's conditions but the depth (7.4.9.8)
  bool no_backward_pred_ = false;  ///< NoBackwardPredFlag (8.5.3.2.9)
  const DecodedPicture* col_pic_ = nullptr;  ///< ColPic for temporal MV prediction
  int part_mode_ = 0;                        ///< PartMode of the current inter CU
  bool merge_flag_ = false;                  ///< merge_flag of the last prediction unit
  std::int16_t pred_buf_[2][64 * 64];        ///< predSamplesL0/L1 of a prediction block
  int chroma_mode_ = 0;
  std::uint32_t levels_[32 * 32];  ///< a transform block's coefficients as parsed
  ResidualBlock residual_;
};

}  // namespace sigpu::hevc
