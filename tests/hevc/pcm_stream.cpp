#include "hevc/pcm_stream.hpp"

#include <algorithm>
#include <random>

#include "hevc/cabac.hpp"

namespace sigpu::hevc::testing {
namespace {

class BitWriter {
 public:
  void put(std::uint32_t v, int n) {
    for (int i = n - 1; i >= 0; --i) bit((v >> i) & 1);
  }
  void bit(int b) {
    cur_ = static_cast<std::uint8_t>((cur_ << 1) | b);
    if (++n_ == 8) {
      bytes_.push_back(cur_);
      cur_ = 0, n_ = 0;
    }
  }
  void ue(std::uint32_t v) {
    int len = 0;
    while ((v + 1) >> (len + 1)) ++len;
    put(0, len);
    put(v + 1, len + 1);
  }
  void se(int v) { ue(v > 0 ? 2 * v - 1 : -2 * v); }
  void align_zero() {
    while (n_) bit(0);
  }
  void trailing() {
    bit(1);
    align_zero();
  }
  bool aligned() const { return n_ == 0; }
  std::vector<std::uint8_t>& bytes() { return bytes_; }

 private:
  std::vector<std::uint8_t> bytes_;
  std::uint8_t cur_ = 0;
  int n_ = 0;
};

// The arithmetic encoder of 9.3.4 (ITU-T H.265's informative encoder description).
class CabacWriter {
 public:
  explicit CabacWriter(BitWriter& w) : w_(w) {}
  void start() { low_ = 0, range_ = 510, first_ = true, outstanding_ = 0; }
  void decision(std::uint8_t& ctx, int bin) {
    const int state = ctx >> 1, mps = ctx & 1;
    const std::uint32_t lps = static_cast<std::uint32_t>(cabac_lps_range(state, (range_ >> 6) & 3));
    range_ -= lps;
    if (bin != mps) {
      low_ += range_;
      range_ = lps;
      ctx = static_cast<std::uint8_t>((cabac_trans_idx_lps(state) << 1) |
                                      (state == 0 ? 1 - mps : mps));
    } else {
      ctx = static_cast<std::uint8_t>((std::min(state + 1, 62) << 1) | mps);
    }
    renorm();
  }
  void terminate(int bin) {
    range_ -= 2;
    if (bin) {
      low_ += range_;
      range_ = 2;
      renorm();
      put((low_ >> 9) & 1);
      w_.put(((low_ >> 7) & 3) | 1, 2);  // the last bit is the stop / alignment one bit
    } else {
      renorm();
    }
  }

 private:
  void renorm() {
    while (range_ < 256) {
      if (low_ < 256) {
        put(0);
      } else if (low_ >= 512) {
        low_ -= 512;
        put(1);
      } else {
        low_ -= 256;
        ++outstanding_;
      }
      range_ <<= 1;
      low_ <<= 1;
    }
  }
  void put(int b) {
    if (first_)
      first_ = false;
    else
      w_.bit(b);
    for (; outstanding_ > 0; --outstanding_) w_.bit(1 - b);
  }
  BitWriter& w_;
  std::uint32_t low_ = 0, range_ = 510;
  bool first_ = true;
  int outstanding_ = 0;
};

std::vector<std::uint8_t> nal(int type, std::vector<std::uint8_t> rbsp,
                              std::vector<std::size_t>* positions = nullptr) {
  // Emulation prevention; `positions` (rbsp offsets) are mapped to escaped payload offsets.
  std::vector<std::uint8_t> out = {0, 0, 0, 1, static_cast<std::uint8_t>(type << 1), 1};
  std::vector<std::size_t> map(rbsp.size() + 1);
  int zeros = 0;
  for (std::size_t i = 0; i < rbsp.size(); ++i) {
    if (zeros >= 2 && rbsp[i] <= 3) {
      out.push_back(3);
      zeros = 0;
    }
    map[i] = out.size() - 6;
    out.push_back(rbsp[i]);
    zeros = rbsp[i] == 0 ? zeros + 1 : 0;
  }
  if (positions)
    for (auto& p : *positions) p = map[p];
  return out;
}

}  // namespace

PcmStream make_pcm_stream(const PcmStreamConfig& c) {
  const int wc = c.width / 32, hc = c.height / 32, nctb = wc * hc;
  const bool tiles = c.tile_cols * c.tile_rows > 1;
  const bool dependent = c.dependent_from_ctb > 0;
  PcmStream out;
  auto ptl = [&](BitWriter& w) {  // profile_tier_level(1, 0): Main or Main 10, level 3.1
    const int profile = c.bit_depth > 8 ? 2 : 1;
    w.put(0, 2), w.put(0, 1), w.put(static_cast<std::uint32_t>(profile), 5);
    w.put(1u << (31 - profile), 32);
    w.put(0, 4), w.put(0, 32), w.put(0, 12);  // source flags, 43 constraint bits, inbld
    w.put(93, 8);
  };
  // VPS (FFmpeg wants one; sigpu only reads its id)
  {
    BitWriter w;
    w.put(0, 4), w.bit(1), w.bit(1), w.put(0, 6), w.put(0, 3), w.bit(1), w.put(0xffff, 16);
    ptl(w);
    w.bit(1), w.ue(0), w.ue(0), w.ue(0);
    w.put(0, 6), w.ue(0), w.bit(0), w.bit(0);
    w.trailing();
    const auto n = nal(32, w.bytes());
    out.bytes.insert(out.bytes.end(), n.begin(), n.end());
  }
  // SPS
  {
    BitWriter w;
    w.put(0, 4), w.put(0, 3), w.put(1, 1);
    ptl(w);
    w.ue(0), w.ue(1), w.ue(static_cast<std::uint32_t>(c.width)),
        w.ue(static_cast<std::uint32_t>(c.height));
    w.bit(0);
    w.ue(static_cast<std::uint32_t>(c.bit_depth - 8)),
        w.ue(static_cast<std::uint32_t>(c.bit_depth - 8));
    w.ue(4);
    w.bit(1), w.ue(0), w.ue(0), w.ue(0);
    w.ue(1), w.ue(1);  // min CB 16, CTB 32
    w.ue(0), w.ue(3);  // TB 4..32
    w.ue(0), w.ue(0);
    w.bit(0), w.bit(0), w.bit(0);  // scaling lists, AMP, SAO
    w.bit(1);                      // PCM
    w.put(static_cast<std::uint32_t>(c.pcm_bits_luma - 1), 4);
    w.put(static_cast<std::uint32_t>(c.pcm_bits_chroma - 1), 4);
    w.ue(1), w.ue(1);  // PCM CU sizes 16..32
    w.bit(1);          // pcm_loop_filter_disabled_flag
    w.ue(0), w.bit(0), w.bit(0), w.bit(0), w.bit(0), w.bit(0);
    w.trailing();
    const auto n = nal(33, w.bytes());
    out.bytes.insert(out.bytes.end(), n.begin(), n.end());
  }
  // PPS
  {
    BitWriter w;
    w.ue(0), w.ue(0);
    w.bit(dependent), w.bit(0), w.put(0, 3), w.bit(0), w.bit(0);
    w.ue(0), w.ue(0), w.se(0), w.bit(0), w.bit(0), w.bit(0);
    w.se(0), w.se(0), w.bit(0), w.bit(0), w.bit(0), w.bit(0);
    w.bit(tiles), w.bit(c.wpp);
    if (tiles) {
      w.ue(static_cast<std::uint32_t>(c.tile_cols - 1)),
          w.ue(static_cast<std::uint32_t>(c.tile_rows - 1));
      w.bit(1), w.bit(1);
    }
    w.bit(1);  // loop filter across slices
    w.bit(1), w.bit(0), w.bit(!c.deblocking);
    if (c.deblocking) w.se(0), w.se(0);
    w.bit(0), w.bit(0), w.ue(0), w.bit(0), w.bit(0);
    w.trailing();
    const auto n = nal(34, w.bytes());
    out.bytes.insert(out.bytes.end(), n.begin(), n.end());
  }
  // Tile geometry (uniform), tile-scan order.
  std::vector<int> col_bd(c.tile_cols + 1), row_bd(c.tile_rows + 1);
  for (int i = 0; i <= c.tile_cols; ++i) col_bd[i] = i * wc / c.tile_cols;
  for (int j = 0; j <= c.tile_rows; ++j) row_bd[j] = j * hc / c.tile_rows;
  std::vector<int> ts_to_rs, tile_of_rs(nctb);
  for (int tj = 0; tj < c.tile_rows; ++tj)
    for (int ti = 0; ti < c.tile_cols; ++ti)
      for (int y = row_bd[tj]; y < row_bd[tj + 1]; ++y)
        for (int x = col_bd[ti]; x < col_bd[ti + 1]; ++x) {
          ts_to_rs.push_back(y * wc + x);
          tile_of_rs[y * wc + x] = tj * c.tile_cols + ti;
        }
  // Samples.
  std::mt19937 rng(c.seed);
  for (int p = 0; p < 3; ++p)
    out.expected[p].assign(
        static_cast<std::size_t>(p ? c.width / 2 : c.width) * (p ? c.height / 2 : c.height), 0);
  // Slice segments: [0, dep) independent, [dep, n) dependent.
  const int dep_ts =
      dependent
          ? static_cast<int>(std::find(ts_to_rs.begin(), ts_to_rs.end(), c.dependent_from_ctb) -
                             ts_to_rs.begin())
          : nctb;
  std::uint8_t ctx = 0, wpp_ctx = 0, ds_ctx = 0;
  const std::uint8_t init_ctx = init_contexts(26)[kCtxSplitCu];
  std::vector<int> decoded_slice(nctb, -1);
  for (int seg = 0; seg < (dependent ? 2 : 1); ++seg) {
    const int begin = seg ? dep_ts : 0, end = seg ? nctb : dep_ts;
    BitWriter data;
    CabacWriter cab(data);
    cab.start();
    std::vector<std::size_t> starts;
    for (int ts = begin; ts < end; ++ts) {
      const int rs = ts_to_rs[ts], x = rs % wc, y = rs / wc;
      decoded_slice[rs] = 0;  // one slice: segments share SliceAddrRs
      const bool tile_start = ts == 0 || tile_of_rs[rs] != tile_of_rs[ts_to_rs[ts - 1]];
      const bool row_start = c.wpp && (x == col_bd[tile_of_rs[rs] % c.tile_cols]);
      if (ts > begin && (tile_start || row_start)) {
        starts.push_back(data.bytes().size());
        cab.start();
      }
      if ((ts == begin && seg == 0) || tile_start) {
        ctx = init_ctx;
      } else if (row_start) {
        const bool tr = y > 0 && x + 1 < wc && tile_of_rs[(y - 1) * wc + x + 1] == tile_of_rs[rs] &&
                        decoded_slice[(y - 1) * wc + x + 1] == 0;
        ctx = tr ? wpp_ctx : init_ctx;
      } else if (ts == begin) {
        ctx = ds_ctx;
      }
      cab.decision(ctx, 0);  // split_cu_flag = 0: one 32x32 CU
      cab.terminate(1);      // pcm_flag
      data.align_zero();
      for (int p = 0; p < 3; ++p) {
        const int n = p ? 16 : 32, bits = p ? c.pcm_bits_chroma : c.pcm_bits_luma;
        const int stride = p ? c.width / 2 : c.width;
        for (int j = 0; j < n; ++j)
          for (int i = 0; i < n; ++i) {
            const std::uint32_t v = 1 + rng() % ((1u << bits) - 1);  // no zero bytes at 8 bits
            data.put(v, bits);
            out.expected[p][static_cast<std::size_t>(y * n + j) * stride + x * n + i] =
                static_cast<std::uint16_t>(v << (c.bit_depth - bits));
          }
      }
      cab.start();
      if (c.wpp && (x - col_bd[tile_of_rs[rs] % c.tile_cols] == 1)) wpp_ctx = ctx;
      const bool last = ts + 1 == end;
      cab.terminate(last);  // end_of_slice_segment_flag
      if (last) {
        ds_ctx = ctx;
        data.align_zero();
        break;
      }
      const int next = ts_to_rs[ts + 1];
      const bool next_tile = tile_of_rs[next] != tile_of_rs[rs];
      const bool next_row = c.wpp && (next % wc == col_bd[tile_of_rs[next] % c.tile_cols]);
      if (next_tile || next_row) {
        cab.terminate(1);  // end_of_subset_one_bit, then byte_alignment()
        data.align_zero();
      }
    }
    // The header, now that the entry points are known (escaped offsets).
    std::vector<std::uint8_t> body = data.bytes();
    BitWriter h;
    h.bit(seg == 0);
    h.bit(0);  // no_output_of_prior_pics_flag
    h.ue(0);
    if (seg) {
      h.bit(1);  // dependent_slice_segment_flag
      int bits = 0;
      while ((1 << bits) < nctb) ++bits;
      h.put(static_cast<std::uint32_t>(ts_to_rs[begin]), bits);
    } else {
      h.ue(2);                     // I
      h.se(0);                     // slice_qp_delta
      if (c.deblocking) h.bit(1);  // slice_loop_filter_across_slices_enabled_flag
    }
    // Entry points count escaped bytes: escape the body alone with its substream starts.
    std::vector<std::size_t> pos = starts;
    pos.insert(pos.begin(), 0);
    const auto escaped = nal(0, body, &pos);
    if (tiles || c.wpp) {
      h.ue(static_cast<std::uint32_t>(starts.size()));
      if (!starts.empty()) {
        h.ue(31);
        for (std::size_t k = 1; k < pos.size(); ++k)
          h.put(static_cast<std::uint32_t>(pos[k] - pos[k - 1] - 1), 32);
      }
    }
    h.trailing();
    std::vector<std::uint8_t> rbsp = h.bytes();
    rbsp.insert(rbsp.end(), body.begin(), body.end());
    const auto n = nal(20, rbsp);
    out.bytes.insert(out.bytes.end(), n.begin(), n.end());
  }
  return out;
}

}  // namespace sigpu::hevc::testing
