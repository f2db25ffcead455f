// A picture's slice data parsed a CTB row per thread (wavefront parallel processing, 7.3.8 and
// 9.3.1): with entropy_coding_sync_enabled_flag each row is a substream of its own, starting
// from the CABAC contexts the row above had after its second CTB, and a CTB reads neighbours no
// further right in the row above than the next CTB. So rows run side by side, each a CTB behind
// the one above: a 4K picture's 34 rows on as many threads. The records of each row go to a
// buffer of its own and are joined in decoding order afterwards. Damage is made to look as the
// serial parse leaves it: the CTBs from the first failure (or end of the segment) in decoding
// order on are dropped and that failure is thrown.
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <vector>

#include "hevc/cabac.hpp"
#include "hevc/nal.hpp"
#include "hevc/picture.hpp"
#include "hevc/slice_header.hpp"

namespace sigpu::hevc {

/// How far each row of a picture parsed row by row has come. Thread-safe.
class WppRows {
 public:
  /// `progress` is told of the leading rows parsed in full (complete()).
  WppRows(int rows, ParseProgress& progress);
  /// Waits until `row` has parsed `ctbs` CTBs; false when it stopped short of them.
  bool wait(int row, int ctbs);
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
  ParseProgress& progress_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<int> done_;
  std::vector<bool> stopped_, complete_rows_;
  std::vector<ContextSet> contexts_;
  int complete_ = 0;  ///< leading rows parsed in full
};

/// Whether the slice segment `sh`, the only one of its picture, can be parsed row by row: WPP,
/// no tiles, the whole picture, an entry point per row.
bool wpp_rows_possible(const DecodedPicture& pic, const SliceHeader& sh);

/// Parses `nal`, the picture's one slice segment (wpp_rows_possible), row by row into
/// pic.records; with `reconstruct`, each CTU's samples instead, into pic.planes (intra slices: a
/// CTB predicts from no further right in the row above than WPP's lag has made), and
/// pic.records are left empty. `run_beside` is
/// offered tasks for other threads, which may run them late or never: the calling thread parses
/// every row no other has taken. Throws the DecodeError the serial parse would throw, after
/// dropping what it would not have parsed.
void parse_wpp_rows(DecodedPicture& pic, const SliceHeader& sh, const NalUnit& nal, int slice_index,
                    const RefPicLists* refs, bool reconstruct,
                    const std::function<void(std::function<void()>)>& run_beside);

}  // namespace sigpu::hevc
