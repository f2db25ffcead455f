// A picture's slice data parsed a CTB row per thread (wavefront parallel processing, 7.3.8 and
// 9.3.1): with entropy_coding_sync_enabled_flag each row is a substream of its own, starting
// from the CABAC contexts the row above had after its second CTB, and a CTB reads neighbours no
// further right in the row above than the next CTB. So rows run side by side, each a CTB behind
// the one above, as steps on a WorkQueue of their own that give their thread back while they
// wait, the oldest picture's first, so that a picture that later ones wait for (an IDR
// picture, a reference) is not held up by rows of younger pictures that started first. The
// records of each row go to a buffer of its own and are joined in decoding order afterwards. Damage
// is made to look as the serial parse leaves it: the CTBs from the first failure (or end of the
// segment) in decoding order on are dropped and that failure is thrown.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

#include "hevc/cabac.hpp"
#include "hevc/nal.hpp"
#include "hevc/picture.hpp"
#include "hevc/slice_header.hpp"
#include "hevc/work_queue.hpp"

namespace sigpu::hevc {

/// How far each row of a picture parsed row by row has come. Thread-safe.
class WppRows {
 public:
  /// `progress` is told of the leading rows parsed in full (complete()); `resume(row)` is called
  /// when a row that had to wait (ready() said no) may go on.
  WppRows(int rows, int width, ParseProgress& progress, std::function<void(int row)> resume);
  enum class Ready { yes, no, stopped };
  /// Whether `row` has parsed `ctbs` CTBs; stopped when it stopped short of them. After no, the
  /// row below is resumed once `row` is a few CTBs further (or stops), so that a row following
  /// closely does not stop and go at every CTB.
  Ready ready(int row, int ctbs);
  void done(int row, int ctbs);
  /// The row parses no more CTBs.
  void stop(int row);
  /// The row parsed every CTB and its substream ended as it must: final, unless a row above
  /// fails.
  void complete(int row);
  void save_contexts(int row, const ContextSet& contexts);
  /// The contexts the row had after its second CTB (when it has more than one).
  const ContextSet& contexts(int row) const { return contexts_[static_cast<std::size_t>(row)]; }

 private:
  /// Under the mutex: whether the row below `row` waits and may go on now (`row` is as far as
  /// it wanted, or stopped); if so, it no longer waits.
  bool below_may_go_on(int row);

  const int width_;
  ParseProgress& progress_;
  std::function<void(int row)> resume_;
  std::mutex mutex_;
  std::vector<int> done_;
  std::vector<int> wanted_;  ///< CTBs of the row above that a waiting row waits for; 0: none
  std::vector<bool> stopped_, complete_rows_;
  std::vector<ContextSet> contexts_;
  int complete_ = 0;  ///< leading rows parsed in full
};

/// Whether the slice segment `sh`, the only one of its picture, can be parsed row by row: WPP,
/// no tiles, the whole picture, an entry point per row.
bool wpp_rows_possible(const DecodedPicture& pic, const SliceHeader& sh);

/// Parses `nal`, the picture's one slice segment (wpp_rows_possible), row by row into
/// pic.records, its rows run by `scheduler`; with `reconstruct`, each CTU's samples instead, into
/// pic.planes (intra slices: a CTB predicts from no further right in the row above than WPP's lag
/// has made), and pic.records are left empty. Returns when every row has ended. Throws the
/// DecodeError the serial parse would throw, after dropping what it would not have parsed.
void parse_wpp_rows(DecodedPicture& pic, const SliceHeader& sh, const NalUnit& nal, int slice_index,
                    const RefPicLists* refs, bool reconstruct, WorkQueue& scheduler);

/// The priority (WorkQueue::push) of row `row` of the picture decoded `decode_index`-th: older
/// pictures first, then upper rows.
inline std::uint64_t row_priority(int decode_index, int row) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(decode_index)) << 20) |
         static_cast<std::uint32_t>(row);
}

}  // namespace sigpu::hevc
