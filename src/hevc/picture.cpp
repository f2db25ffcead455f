#include "hevc/picture.hpp"

#include <algorithm>

namespace sigpu::hevc {

void ParseProgress::reset() {
  std::lock_guard lock(mutex_);
  rows_ = 0;
  started_ = finished_ = false;
}

void ParseProgress::started() {
  {
    std::lock_guard lock(mutex_);
    started_ = true;
  }
  changed_.notify_all();
}

void ParseProgress::rows(int rows) {
  std::vector<std::function<void()>> due;
  {
    std::lock_guard lock(mutex_);
    rows_ = rows;
    due = take_due();
  }
  changed_.notify_all();
  for (auto& then : due) then();
}

void ParseProgress::finish() {
  std::vector<std::function<void()>> due;
  {
    std::lock_guard lock(mutex_);
    started_ = finished_ = true;
    due = take_due();
  }
  changed_.notify_all();
  for (auto& then : due) then();
}

std::vector<std::function<void()>> ParseProgress::take_due() {
  std::vector<std::function<void()>> due;
  std::erase_if(waiters_, [&](Waiter& w) {
    if (!finished_ && w.rows > rows_) return false;
    due.push_back(std::move(w.then));
    return true;
  });
  return due;
}

void ParseProgress::wait_started() const {
  if (started_) return;
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [this] { return started_.load(); });
}

void ParseProgress::wait_rows(int rows) const {
  if (rows_ >= rows || finished_) return;
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return rows_ >= rows || finished_; });
}

bool ParseProgress::when_rows(int rows, std::function<void()> then) const {
  if (rows_ >= rows || finished_) return true;
  std::lock_guard lock(mutex_);
  if (rows_ >= rows || finished_) return true;
  waiters_.push_back(Waiter{rows, std::move(then)});
  return false;
}

std::size_t DecodedPicture::samples(const Sps& s) {
  const std::size_t luma = static_cast<std::size_t>(s.width) * s.height;
  return s.chroma_format_idc == 0 ? luma : luma + 2 * (luma / 4);
}

void DecodedPicture::start(std::shared_ptr<const Sps> s, std::shared_ptr<const Pps> p) {
  sps = std::move(s);
  pps = std::move(p);
  info.slices.clear();
  slice_refs.clear();
  inter = false;
  generated = false;
  progress.reset();
}

void DecodedPicture::allocate(PooledStore storage) {
  store = std::move(storage);
  const int planes_n = sps->chroma_format_idc == 0 ? 1 : 3;
  std::size_t at = 0;
  for (int c = 0; c < 3; ++c) {
    width[c] = c == 0 ? sps->width : (planes_n == 3 ? sps->width / 2 : 0);
    height[c] = c == 0 ? sps->height : (planes_n == 3 ? sps->height / 2 : 0);
    const std::size_t n = static_cast<std::size_t>(width[c]) * height[c];
    planes[c] = std::span<std::uint16_t>(store->data() + at, n);
    at += n;
  }
  // Every sample is written before it is read (a picture with CTBs missing is dropped), so the
  // recycled storage is not cleared.
  blocks_w = (sps->width + 3) / 4;
  blocks_h = (sps->height + 3) / 4;
  const std::size_t nb = static_cast<std::size_t>(blocks_w) * blocks_h;
  intra_mode.assign(nb, 1);
  ct_depth.assign(nb, 0);
  pcm.assign(nb, 0);
  // Every coding unit stores its motion (intra ones none) and its blocks' filter information,
  // and the CTBs a damaged picture lacks are concealed, so these are not cleared.
  motion.resize(nb);
  skip.assign(nb, 0);
  const int ctbs = sps->width_ctbs() * sps->height_ctbs();
  ctb_slice_addr.assign(static_cast<std::size_t>(ctbs), -1);
  decoded_ctbs = 0;
  ctb_done.assign(static_cast<std::size_t>(ctbs), 0);
  row_ctbs_parsed.assign(static_cast<std::size_t>(sps->height_ctbs()), 0);
  rows_parsed = 0;
  damaged = false;
  records.clear();

  // Fresh fields, but the vectors keep their storage: a recycled picture allocates nothing.
  hevc_filter::PictureInfo next;
  next.slices = std::move(info.slices);
  next.blocks = std::move(info.blocks);
  next.motion = std::move(info.motion);
  next.sao_params = std::move(info.sao_params);
  next.ctb_tile = std::move(info.ctb_tile);
  next.ctb_slice = std::move(info.ctb_slice);
  info = std::move(next);
  info.width = sps->width;
  info.height = sps->height;
  info.bit_depth_luma = sps->bit_depth_luma;
  info.bit_depth_chroma = sps->bit_depth_chroma;
  info.chroma_format_idc = sps->chroma_format_idc;
  info.log2_ctb_size = sps->log2_ctb;
  info.cb_qp_offset = pps->cb_qp_offset;
  info.cr_qp_offset = pps->cr_qp_offset;
  info.sao = sps->sao;
  info.deblocking = true;
  info.filter_across_tiles = pps->loop_filter_across_tiles;
  info.blocks.resize(nb);
  if (inter)
    info.motion.resize(nb);
  else
    info.motion.clear();
  info.sao_params.assign(sps->sao ? static_cast<std::size_t>(ctbs) : 0, {});
  info.ctb_tile.assign(static_cast<std::size_t>(ctbs), 0);
  info.ctb_slice.assign(static_cast<std::size_t>(ctbs), 0);
  const auto& g = *pps->geometry;
  for (int rs = 0; rs < ctbs; ++rs)
    info.ctb_tile[rs] = static_cast<std::uint16_t>(g.tile_id[g.rs_to_ts[rs]]);
}

void DecodedPicture::ctb_parsed(int rs) {
  const int w = sps->width_ctbs();
  ++row_ctbs_parsed[static_cast<std::size_t>(rs / w)];
  const int before = rows_parsed;
  while (rows_parsed < static_cast<int>(row_ctbs_parsed.size()) &&
         row_ctbs_parsed[static_cast<std::size_t>(rows_parsed)] == w)
    ++rows_parsed;
  if (rows_parsed != before) progress.rows(rows_parsed);
}

void DecodedPicture::allocate_work(PooledStore storage) {
  work_store = std::move(storage);
  std::size_t at = 0;
  for (int c = 0; c < 3; ++c) {
    work_planes[c] = planes[c].empty() ? nullptr : work_store->data() + at;
    at += planes[c].size();
  }
}

void DecodedPicture::conceal_missing_ctbs() {
  const int l = sps->log2_ctb, w = sps->width_ctbs();
  for (std::size_t rs = 0; rs < ctb_done.size(); ++rs) {
    if (ctb_done[rs]) continue;
    const int x0 = static_cast<int>(rs % static_cast<std::size_t>(w)) << l;
    const int y0 = static_cast<int>(rs / static_cast<std::size_t>(w)) << l;
    for (int c = 0; c < 3 && !planes[c].empty(); ++c) {
      const int sh = c ? 1 : 0;
      const auto grey =
          static_cast<std::uint16_t>(1 << ((c ? sps->bit_depth_chroma : sps->bit_depth_luma) - 1));
      const int xe = std::min((x0 + (1 << l)) >> sh, width[c]);
      const int ye = std::min((y0 + (1 << l)) >> sh, height[c]);
      for (int y = y0 >> sh; y < ye; ++y)
        std::fill(planes[c].begin() + static_cast<std::ptrdiff_t>(y) * width[c] + (x0 >> sh),
                  planes[c].begin() + static_cast<std::ptrdiff_t>(y) * width[c] + xe, grey);
    }
    for (int y = y0; y < std::min(y0 + (1 << l), sps->height); y += 4)
      for (int x = x0; x < std::min(x0 + (1 << l), sps->width); x += 4) {
        motion[block(x, y)] = {};
        if (!info.motion.empty()) info.motion[block(x, y)] = {};
      }
  }
}

}  // namespace sigpu::hevc
