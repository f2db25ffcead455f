// A picture under reconstruction: sample planes, the per-4x4 state that parsing and prediction
// of later blocks read (intra modes, coding-tree depth, QP, motion), and the filters' side
// information. Decoded pictures stay in the decoded picture buffer as references: their samples
// for motion compensation, their motion for temporal MV prediction.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include <sigpu/hevc_filter.hpp>

#include "hevc/parameter_sets.hpp"
#include "hevc/plane_pool.hpp"
#include "hevc/records.hpp"

namespace sigpu::hevc {

/// The motion of one 4x4 block (8.5.3.2): ref_idx -1 where the list is unused; both -1 for intra
/// blocks.
struct MvField {
  std::int16_t mv[2][2] = {};
  std::int8_t ref_idx[2] = {-1, -1};
  bool inter() const { return ref_idx[0] >= 0 || ref_idx[1] >= 0; }
};

struct DecodedPicture;

/// RefPicList0/1 of a slice (8.3.4): the pictures, their POCs and whether each was a long-term
/// reference when the slice was decoded.
struct RefPicLists {
  std::shared_ptr<DecodedPicture> pic[2][16];
  int poc[2][16] = {};
  bool long_term[2][16] = {};
  int size[2] = {};
};

/// What temporal MV prediction of later pictures needs of a slice's lists.
struct SliceRefs {
  int poc[2][16] = {};
  bool long_term[2][16] = {};
};

/// How far the parse of a picture has come, for the parses of later pictures that run beside it
/// and read its motion (temporal MV prediction reads the collocated picture's motion in the CTB
/// row of the current block) or its geometry. Thread-safe.
class ParseProgress {
 public:
  /// A picture about to be parsed (nothing readable yet).
  void reset();
  /// Its storage and per-block state are laid out: sizes and formats may be read.
  void started();
  /// Every CTB of the first `rows` CTB rows is parsed.
  void rows(int rows);
  /// The parse is over (complete, or given up with lost CTBs concealed): everything may be read.
  void finish();
  void wait_started() const;
  /// Waits until `rows` CTB rows are parsed, or the parse is over.
  void wait_rows(int rows) const;
  /// True when `rows` CTB rows are parsed or the parse is over; otherwise false, and `then` is
  /// called by the thread that gets it there (for a waiter that gives its thread back).
  bool when_rows(int rows, std::function<void()> then) const;

 private:
  struct Waiter {
    int rows;
    std::function<void()> then;
  };
  /// Under the mutex: takes out the waiters whose rows are parsed (all once the parse is over),
  /// to be called after it is released.
  std::vector<std::function<void()>> take_due();

  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  mutable std::vector<Waiter> waiters_;
  std::atomic<int> rows_{0};
  std::atomic<bool> started_{true}, finished_{true};
};

struct DecodedPicture {
  std::shared_ptr<const Sps> sps;
  std::shared_ptr<const Pps> pps;  ///< the PPS of the first slice (geometry, QP offsets)
  PooledStore store;               ///< holds the planes
  std::span<std::uint16_t> planes[3];
  /// Where a RecordPipeline (record_pipeline.hpp) reconstructs and filters the picture (device
  /// memory on the GPU), laid out as `planes`, which then receive a copy for output; empty when
  /// the slice decoder reconstructs into `planes` itself.
  PooledStore work_store;
  std::uint16_t* work_planes[3] = {};
  int width[3] = {}, height[3] = {};     ///< plane sizes (full decoded picture, not cropped)
  int blocks_w = 0, blocks_h = 0;        ///< 4x4 luma blocks per row / column
  std::vector<std::uint8_t> intra_mode;  ///< IntraPredModeY per 4x4 block
  std::vector<std::uint8_t> ct_depth;    ///< CtDepth per 4x4 block
  std::vector<std::uint8_t> pcm;         ///< pcm_flag per 4x4 block (DC for mode prediction)
  std::vector<int> ctb_slice_addr;       ///< SliceAddrRs per CTB, -1 until decoded
  std::vector<MvField> motion;           ///< per 4x4 block
  std::vector<std::uint8_t> skip;        ///< cu_skip_flag per 4x4 block
  std::vector<SliceRefs> slice_refs;     ///< per slice (info.ctb_slice's index), inter slices
  bool inter = false;                    ///< some slice is P or B
  bool generated = false;                ///< made up for a missing reference (8.3.3), never output
  hevc_filter::PictureInfo info;
  int poc = 0;
  std::size_t decode_index = 0;
  bool output = true;
  int decoded_ctbs = 0;
  std::vector<std::uint8_t> ctb_done;  ///< per CTB (raster): decoded to its end
  bool damaged = false;                ///< some slice failed: CTBs may be missing
  /// What the parse of its slices hands to the reconstruction; a recycled picture reuses the
  /// storage.
  PictureRecords records;
  /// A parse row by row (wpp_rows.hpp): each CTB row's records before they are joined into
  /// `records`, kept with the picture for their storage.
  std::vector<PictureRecords> row_records;
  ParseProgress progress;
  std::vector<int> row_ctbs_parsed;  ///< per CTB row (the parsing thread's)
  int rows_parsed = 0;               ///< leading CTB rows parsed in full (the parsing thread's)

  /// Samples of all planes of a picture of `s` (the size of the PlaneStore allocate() takes).
  static std::size_t samples(const Sps& s);
  /// The motion at luma sample (x, y).
  const MvField& motion_at(int x, int y) const { return motion[block(x, y)]; }
  /// Starts a picture (a new object or one recycled from an earlier picture): sets the
  /// parameter sets, empties info.slices, which fills as slices are parsed (on the parsing
  /// thread).
  void start(std::shared_ptr<const Sps> s, std::shared_ptr<const Pps> p);
  /// Lays the planes out in `storage` (samples(*sps) samples) and sizes the per-block state (on
  /// the thread that reconstructs the picture).
  void allocate(PooledStore storage);
  /// Lays the work planes out in `storage` (samples(*sps) samples) after allocate().
  void allocate_work(PooledStore storage);
  /// Mid-grey samples and no motion in every CTB not decoded to its end: a damaged picture is
  /// not output, but later pictures may predict from it, and from the same samples on every
  /// schedule.
  void conceal_missing_ctbs();
  /// Counts the CTB at raster address rs as parsed, and tells `progress` when that completes
  /// the leading rows.
  void ctb_parsed(int rs);
  std::size_t block(int x, int y) const {  ///< 4x4 index of luma sample (x, y)
    return static_cast<std::size_t>(y >> 2) * blocks_w + (x >> 2);
  }
};

}  // namespace sigpu::hevc
