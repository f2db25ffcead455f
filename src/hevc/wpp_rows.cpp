#include "hevc/wpp_rows.hpp"

#include <algorithm>
#include <condition_variable>
#include <memory>
#include <optional>
#include <string>

#include "hevc/errors.hpp"
#include "hevc/slice_decoder.hpp"

namespace sigpu::hevc {

namespace {
// CTBs a waiting row lets the row above get ahead of what it needs before it goes on: a row
// parsing as fast as the one above would otherwise give its thread back at every CTB.
constexpr int kResumeLead = 3;
}  // namespace

WppRows::WppRows(int rows, int width, ParseProgress& progress, std::function<void(int row)> resume)
    : width_(width),
      progress_(progress),
      resume_(std::move(resume)),
      done_(static_cast<std::size_t>(rows), 0),
      wanted_(static_cast<std::size_t>(rows), 0),
      stopped_(static_cast<std::size_t>(rows), false),
      complete_rows_(static_cast<std::size_t>(rows), false),
      contexts_(static_cast<std::size_t>(rows)) {}

WppRows::Ready WppRows::ready(int row, int ctbs) {
  const auto r = static_cast<std::size_t>(row);
  std::lock_guard lock(mutex_);
  if (done_[r] >= ctbs) return Ready::yes;
  if (stopped_[r]) return Ready::stopped;
  wanted_[r + 1] = std::min(ctbs + kResumeLead, width_);
  return Ready::no;
}

bool WppRows::below_may_go_on(int row) {
  const auto r = static_cast<std::size_t>(row);
  if (r + 1 >= wanted_.size() || wanted_[r + 1] == 0) return false;
  if (done_[r] < wanted_[r + 1] && !stopped_[r]) return false;
  wanted_[r + 1] = 0;
  return true;
}

void WppRows::done(int row, int ctbs) {
  bool resume = false;
  {
    std::lock_guard lock(mutex_);
    done_[static_cast<std::size_t>(row)] = ctbs;
    resume = below_may_go_on(row);
  }
  if (resume) resume_(row + 1);
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
  bool resume = false;
  {
    std::lock_guard lock(mutex_);
    stopped_[static_cast<std::size_t>(row)] = true;
    resume = below_may_go_on(row);
  }
  if (resume) resume_(row + 1);
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

// One row's parse and outcome.
struct Row {
  PictureRecords* records = nullptr;  ///< the picture's row_records[row]
  std::unique_ptr<SliceDecoder> decoder;
  PictureParseState state;
  bool begun = false;
  int next_ctb = 0;                  ///< in the row
  bool complete = false;             ///< parsed to its end as the segment's data says
  std::optional<std::string> error;  ///< what it stopped on
};

// A picture's rows, shared by the steps that parse them.
struct Rows : std::enable_shared_from_this<Rows> {
  const NalUnit& nal;
  WorkQueue& scheduler;
  const int decode_index;
  WppRows progress;
  std::vector<Row> rows;
  std::mutex mutex;
  std::condition_variable all_done;
  int finished = 0;

  Rows(const NalUnit& n, WorkQueue& s, DecodedPicture& pic)
      : nal(n),
        scheduler(s),
        decode_index(pic.decode_index),
        progress(pic.sps->height_ctbs(), pic.sps->width_ctbs(), pic.progress,
                 [this](int row) { queue(row); }),
        rows(static_cast<std::size_t>(pic.sps->height_ctbs())) {}

  void queue(int r) {
    scheduler.push(row_priority(decode_index, r),
                   [self = shared_from_this(), r] { self->step(r); });
  }

  // Parses row r as far as it can go now; queued again by whoever lets it go on.
  void step(int r) {
    Row& row = rows[static_cast<std::size_t>(r)];
    SliceDecoder::RowState state;
    try {
      if (!row.begun) {
        // TMVP reads the collocated picture's motion in this CTB row only.
        const DecodedPicture* col = row.decoder->collocated();
        if (col &&
            !col->progress.when_rows(r + 1, [self = shared_from_this(), r] { self->queue(r); }))
          return;
        row.decoder->begin_row(nal, r);
        row.begun = true;
      }
      state = row.decoder->continue_row(r, row.next_ctb, progress);
      if (state == SliceDecoder::RowState::waiting) return;
    } catch (const std::exception& e) {
      row.error = e.what();
      row.records->truncate_to_parsed();
      state = SliceDecoder::RowState::incomplete;
    }
    row.complete = state == SliceDecoder::RowState::complete;
    if (row.complete) progress.complete(r);
    progress.stop(r);
    std::lock_guard lock(mutex);
    if (++finished == static_cast<int>(rows.size())) all_done.notify_all();
  }
};

}  // namespace

void parse_wpp_rows(DecodedPicture& pic, const SliceHeader& sh, const NalUnit& nal, int slice_index,
                    const RefPicLists* refs, bool reconstruct, WorkQueue& scheduler) {
  const int w = pic.sps->width_ctbs(), n = pic.sps->height_ctbs();
  if (pic.ctb_slice_addr[0] != -1)
    throw DecodeError("CTB 0 (0,0): slice_segment_address: CTB already decoded in this picture");
  auto shared = std::make_shared<Rows>(nal, scheduler, pic);
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
  for (int r = 0; r < n; ++r) shared->queue(r);
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
