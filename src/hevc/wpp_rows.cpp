#include "hevc/wpp_rows.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "hevc/errors.hpp"
#include "hevc/slice_decoder.hpp"

namespace sigpu::hevc {

WppRows::WppRows(int rows, ParseProgress& progress)
    : progress_(progress),
      done_(static_cast<std::size_t>(rows), 0),
      stopped_(static_cast<std::size_t>(rows), false),
      complete_rows_(static_cast<std::size_t>(rows), false),
      contexts_(static_cast<std::size_t>(rows)) {}

bool WppRows::wait(int row, int ctbs) {
  const auto r = static_cast<std::size_t>(row);
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return done_[r] >= ctbs || stopped_[r]; });
  return done_[r] >= ctbs;
}

void WppRows::done(int row, int ctbs) {
  {
    std::lock_guard lock(mutex_);
    done_[static_cast<std::size_t>(row)] = ctbs;
  }
  changed_.notify_all();
}

void WppRows::complete(int row) {
  int leading = -1;
  {
    std::lock_guard lock(mutex_);
    complete_rows_[static_cast<std::size_t>(row)] = true;
    if (row == complete_) {
      while (complete_ < static_cast<int>(complete_rows_.size()) &&
             complete_rows_[static_cast<std::size_t>(complete_)])
        ++complete_;
      leading = complete_;
    }
  }
  if (leading >= 0) progress_.rows(leading);
}

void WppRows::stop(int row) {
  {
    std::lock_guard lock(mutex_);
    stopped_[static_cast<std::size_t>(row)] = true;
  }
  changed_.notify_all();
}

void WppRows::save_contexts(int row, const ContextSet& contexts) {
  // Read by the row below only after done() says this CTB is parsed (under the mutex).
  contexts_[static_cast<std::size_t>(row)] = contexts;
}

bool wpp_rows_possible(const DecodedPicture& pic, const SliceHeader& sh) {
  const Pps& pps = *pic.pps;
  const int rows = pic.sps->height_ctbs();
  return pps.entropy_coding_sync && !pps.tiles && !sh.dependent && sh.segment_address == 0 &&
         rows > 1 && sh.entry_points.size() == static_cast<std::size_t>(rows - 1);
}

namespace {

// One row's outcome.
struct Row {
  PictureRecords* records = nullptr;  ///< the picture's row_records[row]
  bool complete = false;              ///< parsed to its end as the segment's data says
  std::optional<std::string> error;   ///< what it stopped on
  std::unique_ptr<SliceDecoder> decoder;
  PictureParseState state;
};

struct Rows {
  WppRows progress;
  std::vector<Row> rows;
  std::atomic<int> next{0};
  std::mutex mutex;
  std::condition_variable all_done;
  int finished = 0;

  Rows(int n, ParseProgress& p) : progress(n, p), rows(static_cast<std::size_t>(n)) {}

  // Parses rows until none is left to take.
  void take_rows(const NalUnit& nal) {
    for (int r; (r = next.fetch_add(1)) < static_cast<int>(rows.size());) {
      Row& row = rows[static_cast<std::size_t>(r)];
      try {
        row.complete = row.decoder->decode_row(nal, r, progress);
        if (row.complete) progress.complete(r);
      } catch (const std::exception& e) {
        row.error = e.what();
        row.records->truncate_to_parsed();
      }
      progress.stop(r);
      std::lock_guard lock(mutex);
      if (++finished == static_cast<int>(rows.size())) all_done.notify_all();
    }
  }
};

}  // namespace

void parse_wpp_rows(DecodedPicture& pic, const SliceHeader& sh, const NalUnit& nal, int slice_index,
                    const RefPicLists* refs, bool reconstruct,
                    const std::function<void(std::function<void()>)>& run_beside) {
  const int w = pic.sps->width_ctbs(), n = pic.sps->height_ctbs();
  if (pic.ctb_slice_addr[0] != -1)
    throw DecodeError("CTB 0 (0,0): slice_segment_address: CTB already decoded in this picture");
  auto shared = std::make_shared<Rows>(n, pic.progress);
  pic.row_records.resize(static_cast<std::size_t>(n));
  // Made here, one by one: each also records the slice's reference POCs in the picture.
  for (int r = 0; r < n; ++r) {
    Row& row = shared->rows[static_cast<std::size_t>(r)];
    row.records = &pic.row_records[static_cast<std::size_t>(r)];
    row.records->clear();
    row.state.reconstruct = reconstruct;
    row.decoder =
        std::make_unique<SliceDecoder>(pic, sh, slice_index, row.state, refs, row.records);
  }
  const unsigned helpers =
      std::min<unsigned>(static_cast<unsigned>(n), std::thread::hardware_concurrency()) - 1;
  // A helper that starts after every row is taken returns at once; it holds `shared`, not the
  // picture, which it never touches then.
  for (unsigned k = 0; k < helpers; ++k) run_beside([shared, &nal] { shared->take_rows(nal); });
  shared->take_rows(nal);
  {
    std::unique_lock lock(shared->mutex);
    shared->all_done.wait(lock, [&] { return shared->finished == n; });
  }
  // Where the serial parse would have stopped: at the first CTB in decoding order a row did
  // not parse (it failed there or at its substream's end, the segment ended before it, or the
  // row above stopped first); the upper row first when two stop at the same CTB, as the serial
  // parse ends a row before the next row's first CTB.
  int cut = w * n + 1;  // none
  const std::string* error = nullptr;
  for (int r = 0; r < n; ++r) {
    const Row& row = shared->rows[static_cast<std::size_t>(r)];
    const int stop = r * w + static_cast<int>(row.records->ctb_rs.size());
    if (!row.complete && stop < cut) {
      cut = stop;
      error = row.error ? &*row.error : nullptr;
    }
  }
  cut = std::min(cut, w * n);
  pic.records.clear();
  // A picture reconstructed here is done with its records (the record pipeline takes its
  // samples): joining them, megabytes for an intra picture, would only hold up the pictures
  // that wait for it.
  if (!reconstruct)
    for (int r = 0; r < n; ++r)
      pic.records.append(*shared->rows[static_cast<std::size_t>(r)].records,
                         static_cast<std::size_t>(std::clamp(cut - r * w, 0, w)));
  for (int rs = cut; rs < w * n; ++rs) {
    pic.ctb_done[static_cast<std::size_t>(rs)] = 0;
    pic.ctb_slice_addr[static_cast<std::size_t>(rs)] = -1;
  }
  pic.decoded_ctbs = cut;
  if (error) throw DecodeError(*error);
}

}  // namespace sigpu::hevc
