#include "support/var_encoder.hpp"

#include "support/rng.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "core/md5.hpp"  // OpenSSL EVP MD5, linked through the sigpu target

namespace sigpu::test {
namespace flacbits {

std::uint8_t crc8(const std::uint8_t* p, std::size_t n) {
  unsigned crc = 0;
  for (std::size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int b = 0; b < 8; ++b) crc = (crc & 0x80) ? ((crc << 1) ^ 0x07) & 0xFF : (crc << 1) & 0xFF;
  }
  return static_cast<std::uint8_t>(crc);
}

std::uint16_t crc16(const std::uint8_t* p, std::size_t n) {
  unsigned crc = 0;
  for (std::size_t i = 0; i < n; ++i) {
    crc ^= unsigned(p[i]) << 8;
    for (int b = 0; b < 8; ++b)
      crc = (crc & 0x8000) ? ((crc << 1) ^ 0x8005) & 0xFFFF : (crc << 1) & 0xFFFF;
  }
  return static_cast<std::uint16_t>(crc);
}

namespace {

/// MSB-first bit writer.
class BitWriter {
 public:
  void put(std::uint64_t value, unsigned bits) {  // bits <= 64
    for (unsigned i = bits; i-- > 0;) bit((value >> i) & 1);
  }
  void put_signed(std::int64_t value, unsigned bits) {
    put(static_cast<std::uint64_t>(value), bits);
  }
  void unary(std::uint64_t zeros) {  // `zeros` zero bits, then a one
    for (std::uint64_t i = 0; i < zeros; ++i) bit(0);
    bit(1);
  }
  void append(const BitWriter& o) {
    for (std::uint8_t b : o.out_) put(b, 8);
    put(o.cur_, o.nbits_);
  }
  std::uint64_t bit_count() const { return out_.size() * 8ull + nbits_; }
  void align() {
    while (nbits_ != 0) bit(0);
  }
  std::vector<std::uint8_t>& bytes() { return out_; }

 private:
  void bit(unsigned b) {
    cur_ = static_cast<std::uint8_t>((cur_ << 1) | b);
    if (++nbits_ == 8) out_.push_back(cur_), nbits_ = 0, cur_ = 0;
  }
  std::vector<std::uint8_t> out_;
  std::uint8_t cur_ = 0;
  unsigned nbits_ = 0;
};

/// The UTF-8-like coded number of frame headers (up to 36 bits, 7 bytes).
void put_coded_number(BitWriter& w, std::uint64_t v) {
  if (v < 0x80) return w.put(v, 8);
  int extra = v < (1u << 11)     ? 1
              : v < (1u << 16)   ? 2
              : v < (1u << 21)   ? 3
              : v < (1u << 26)   ? 4
              : v < (1ull << 31) ? 5
                                 : 6;
  if (v >= (1ull << 36)) throw std::invalid_argument("var_encoder: coded number above 36 bits");
  std::uint8_t prefix = static_cast<std::uint8_t>(0xFF00 >> (extra + 1));
  w.put(prefix | (v >> (6 * extra)), 8);
  for (int i = extra - 1; i >= 0; --i) w.put(0x80 | ((v >> (6 * i)) & 0x3F), 8);
}

unsigned block_size_code(std::uint32_t bs) {
  if (bs == 192) return 1;
  for (unsigned c = 2; c <= 5; ++c)
    if (bs == 576u << (c - 2)) return c;
  for (unsigned c = 8; c <= 15; ++c)
    if (bs == 256u << (c - 8)) return c;
  return bs <= 256 ? 6 : 7;
}

unsigned sample_rate_code(std::uint32_t rate) {
  static const std::array<std::uint32_t, 12> table = {0,     88200, 176400, 192000, 8000,  16000,
                                                      22050, 24000, 32000,  44100,  48000, 96000};
  for (unsigned c = 1; c < table.size(); ++c)
    if (table[c] == rate) return c;
  if (rate % 1000 == 0 && rate / 1000 <= 255) return 12;
  if (rate <= 65535) return 13;
  if (rate % 10 == 0 && rate / 10 <= 65535) return 14;
  return 0;
}

unsigned bps_code(std::uint32_t bps) {
  switch (bps) {
    case 8:
      return 1;
    case 12:
      return 2;
    case 16:
      return 4;
    case 20:
      return 5;
    case 24:
      return 6;
    case 32:
      return 7;
    default:
      return 0;
  }
}

std::uint64_t fold(std::int64_t r) {
  return r >= 0 ? std::uint64_t(r) << 1 : (std::uint64_t(-(r + 1)) << 1) | 1;
}

unsigned bits_for_signed(std::int64_t v) {  // two's complement width holding v
  unsigned n = 1;
  while (v < -(std::int64_t(1) << (n - 1)) || v > (std::int64_t(1) << (n - 1)) - 1) ++n;
  return n;
}

struct Partition {
  bool escape;
  unsigned param;
  std::uint64_t bits;
};

Partition best_partition(const std::int64_t* r, std::size_t n, unsigned max_param,
                         bool allow_escape) {
  std::uint64_t sum = 0;
  std::int64_t lo = 0, hi = 0;
  for (std::size_t i = 0; i < n; ++i)
    sum += fold(r[i]), lo = std::min(lo, r[i]), hi = std::max(hi, r[i]);
  Partition best{false, 0, std::numeric_limits<std::uint64_t>::max()};
  unsigned guess = 0;
  while (guess < max_param && n && (std::uint64_t(n) << (guess + 1)) < sum) ++guess;
  for (unsigned k = guess > 2 ? guess - 2 : 0; k <= std::min(max_param, guess + 2); ++k) {
    std::uint64_t bits = n * (k + 1);
    for (std::size_t i = 0; i < n; ++i) bits += fold(r[i]) >> k;
    if (bits < best.bits) best = {false, k, bits};
  }
  if (allow_escape) {
    unsigned raw = (lo == 0 && hi == 0) ? 0 : std::max(bits_for_signed(lo), bits_for_signed(hi));
    if (raw <= 31 && 5 + std::uint64_t(raw) * n < best.bits)
      best = {true, raw, 5 + std::uint64_t(raw) * n};
  }
  return best;
}

/// Residual coding section; returns false when a residual does not fit 32 bits.
bool put_residual(BitWriter& w, const std::vector<std::int64_t>& res, std::uint32_t bs,
                  unsigned order, unsigned max_porder, bool allow_escape) {
  for (std::int64_t r : res)
    if (r < std::numeric_limits<std::int32_t>::min() ||
        r > std::numeric_limits<std::int32_t>::max())
      return false;
  std::vector<std::int64_t> full(order, 0);  // pad so partition 0 indexing is uniform
  full.insert(full.end(), res.begin(), res.end());
  unsigned best_p = 0;
  std::uint64_t best_bits = std::numeric_limits<std::uint64_t>::max();
  bool best_rice2 = false;
  for (unsigned p = 0; p <= max_porder; ++p) {
    if (bs % (1u << p) != 0 || (bs >> p) <= order) break;
    std::uint32_t psize = bs >> p;
    std::uint64_t bits = 0;
    bool rice2 = false;
    for (unsigned i = 0; i < (1u << p); ++i) {
      std::size_t start = i == 0 ? order : std::size_t(i) * psize;
      Partition part =
          best_partition(full.data() + start, std::size_t(i + 1) * psize - start, 30, allow_escape);
      rice2 |= !part.escape && part.param > 14;
      bits += part.bits;
    }
    bits += (std::uint64_t(rice2 ? 5 : 4)) << p;
    if (bits < best_bits) best_bits = bits, best_p = p, best_rice2 = rice2;
  }
  w.put(best_rice2 ? 1 : 0, 2);
  w.put(best_p, 4);
  std::uint32_t psize = bs >> best_p;
  const unsigned pbits = best_rice2 ? 5 : 4;
  for (unsigned i = 0; i < (1u << best_p); ++i) {
    std::size_t start = i == 0 ? order : std::size_t(i) * psize, end = std::size_t(i + 1) * psize;
    Partition part =
        best_partition(full.data() + start, end - start, best_rice2 ? 30 : 14, allow_escape);
    if (part.escape) {
      w.put((1u << pbits) - 1, pbits);
      w.put(part.param, 5);
      for (std::size_t j = start; j < end; ++j) w.put_signed(full[j], part.param);
    } else {
      w.put(part.param, pbits);
      for (std::size_t j = start; j < end; ++j) {
        std::uint64_t u = fold(full[j]);
        w.unary(u >> part.param);
        w.put(u & ((std::uint64_t(1) << part.param) - 1), part.param);
      }
    }
  }
  return true;
}

std::vector<std::int64_t> fixed_residual(const std::vector<std::int64_t>& x, unsigned order) {
  std::vector<std::int64_t> r;
  for (std::size_t i = order; i < x.size(); ++i) {
    switch (order) {
      case 0:
        r.push_back(x[i]);
        break;
      case 1:
        r.push_back(x[i] - x[i - 1]);
        break;
      case 2:
        r.push_back(x[i] - 2 * x[i - 1] + x[i - 2]);
        break;
      case 3:
        r.push_back(x[i] - 3 * x[i - 1] + 3 * x[i - 2] - x[i - 3]);
        break;
      default:
        r.push_back(x[i] - 4 * x[i - 1] + 6 * x[i - 2] - 4 * x[i - 3] + x[i - 4]);
        break;
    }
  }
  return r;
}

/// Writes one subframe of `bps` bits (33 for a side channel of 32-bit audio).
void put_subframe(BitWriter& w, const std::vector<std::int64_t>& x, unsigned bps, VarSubframes mode,
                  unsigned max_porder, bool allow_escape, bool detect_wasted) {
  const std::uint32_t bs = static_cast<std::uint32_t>(x.size());
  unsigned wasted = 0;
  if (detect_wasted) {
    std::uint64_t all = 0;
    for (std::int64_t v : x) all |= static_cast<std::uint64_t>(v);
    if (all != 0)
      while (wasted + 1 < bps && !((all >> wasted) & 1)) ++wasted;
  }
  std::vector<std::int64_t> s(x);
  for (auto& v : s) v >>= wasted;
  const unsigned sbps = bps - wasted;
  auto header = [&](BitWriter& h, unsigned type) {
    h.put(0, 1), h.put(type, 6);
    if (wasted)
      h.put(1, 1), h.unary(wasted - 1);
    else
      h.put(0, 1);
  };
  bool constant = std::all_of(s.begin(), s.end(), [&](std::int64_t v) { return v == s[0]; });
  if (constant && mode == VarSubframes::best) {
    header(w, 0), w.put_signed(s[0], sbps);
    return;
  }
  BitWriter best;
  header(best, 1);  // VERBATIM unless a FIXED order does better (or FIXED is asked for)
  for (std::int64_t v : s) best.put_signed(v, sbps);
  bool best_is_fixed = false;
  if (mode != VarSubframes::verbatim) {
    for (unsigned order = 0; order <= 4 && order < bs; ++order) {
      BitWriter t;
      header(t, 8 + order);
      for (unsigned i = 0; i < order; ++i) t.put_signed(s[i], sbps);
      if (!put_residual(t, fixed_residual(s, order), bs, order, max_porder, allow_escape)) continue;
      if ((mode == VarSubframes::fixed && !best_is_fixed) || t.bit_count() < best.bit_count())
        best = std::move(t), best_is_fixed = true;
    }
  }
  w.append(best);
}

using test::Rng;

void put_header(BitWriter& w, std::uint32_t bs, unsigned assignment, std::uint32_t bps,
                std::uint32_t rate, bool variable, std::uint64_t number,
                const VarEncoderOptions& o) {
  w.put(0x3FFE, 14), w.put(0, 1), w.put(variable ? 1 : 0, 1);
  unsigned bsc = block_size_code(bs), src = o.header_sample_rate ? sample_rate_code(rate) : 0;
  w.put(bsc, 4), w.put(src, 4), w.put(assignment, 4);
  w.put(o.header_bits_per_sample ? bps_code(bps) : 0, 3), w.put(0, 1);
  put_coded_number(w, number);
  if (bsc == 6) w.put(bs - 1, 8);
  if (bsc == 7) w.put(bs - 1, 16);
  if (src == 12) w.put(rate / 1000, 8);
  if (src == 13) w.put(rate, 16);
  if (src == 14) w.put(rate / 10, 16);
  w.put(crc8(w.bytes().data(), w.bytes().size()), 8);
}

void finish_frame(BitWriter& w) {
  w.align();
  std::uint16_t crc = crc16(w.bytes().data(), w.bytes().size());
  w.put(crc, 16);
}

std::vector<std::uint8_t> frame(const std::vector<std::vector<std::int64_t>>& ch,
                                unsigned assignment, std::uint32_t bps, std::uint32_t rate,
                                bool variable, std::uint64_t number, const VarEncoderOptions& o) {
  const std::uint32_t bs = static_cast<std::uint32_t>(ch[0].size());
  BitWriter w;
  put_header(w, bs, assignment, bps, rate, variable, number, o);
  for (std::size_t c = 0; c < ch.size(); ++c) {
    bool side =
        (assignment == 8 && c == 1) || (assignment == 9 && c == 0) || (assignment == 10 && c == 1);
    put_subframe(w, ch[c], bps + (side ? 1 : 0), o.subframes, o.max_partition_order,
                 o.use_escape_partitions, o.detect_wasted_bits);
  }
  finish_frame(w);
  return std::move(w.bytes());
}

}  // namespace

std::vector<std::uint8_t> encode_frame(const std::vector<std::vector<std::int64_t>>& channels,
                                       std::uint32_t bits_per_sample, std::uint32_t sample_rate,
                                       bool variable_blocksize, std::uint64_t number,
                                       VarSubframes subframes) {
  VarEncoderOptions o;
  o.subframes = subframes;
  return frame(channels, static_cast<unsigned>(channels.size() - 1), bits_per_sample, sample_rate,
               variable_blocksize, number, o);
}

std::vector<std::uint8_t> encode_constant_frame(const std::vector<std::int64_t>& values,
                                                std::uint32_t block_size,
                                                std::uint32_t bits_per_sample,
                                                std::uint32_t sample_rate, bool variable_blocksize,
                                                std::uint64_t number) {
  BitWriter w;
  put_header(w, block_size, static_cast<unsigned>(values.size() - 1), bits_per_sample, sample_rate,
             variable_blocksize, number, VarEncoderOptions{});
  for (std::int64_t v : values)
    w.put(0, 8), w.put_signed(v, bits_per_sample);  // CONSTANT, no wasted bits
  finish_frame(w);
  return std::move(w.bytes());
}

}  // namespace flacbits

std::vector<std::uint8_t> var_encode(std::span<const std::int32_t> pcm,
                                     const VarEncoderOptions& o) {
  using namespace flacbits;
  const std::uint32_t nch = o.channels, bps = o.bits_per_sample;
  if (nch < 1 || nch > 8 || bps < 4 || bps > 32 || o.sample_rate < 1 || o.sample_rate > 1048575 ||
      pcm.size() % nch != 0 || o.min_block < 16 || o.max_block > 65535 || o.min_block > o.max_block)
    throw std::invalid_argument("var_encoder: unsupported parameters");
  if (o.stereo != VarStereo::independent && nch != 2)
    throw std::invalid_argument("var_encoder: stereo decorrelation needs 2 channels");
  const std::uint64_t total = pcm.size() / nch;

  // Block sizes first: STREAMINFO needs the minimum and maximum.
  std::vector<std::uint32_t> sizes;
  flacbits::Rng rng{o.seed};
  for (std::uint64_t pos = 0; pos < total;) {
    std::uint32_t bs;
    if (!o.block_sizes.empty())
      bs = o.block_sizes[sizes.size() % o.block_sizes.size()];
    else if (!o.variable_blocksize)
      bs = o.fixed_block;
    else
      bs = static_cast<std::uint32_t>(
          std::exp(std::log(double(o.min_block)) +
                   rng.uniform() * std::log(double(o.max_block) / o.min_block)));
    bs = std::clamp<std::uint32_t>(bs, 1, 65535);
    bs = static_cast<std::uint32_t>(std::min<std::uint64_t>(bs, total - pos));
    sizes.push_back(bs);
    pos += bs;
  }

  std::vector<std::uint8_t> frames;
  std::uint32_t min_frame = 0, max_frame = 0;
  std::uint64_t pos = 0;
  for (std::size_t f = 0; f < sizes.size(); ++f) {
    const std::uint32_t bs = sizes[f];
    std::vector<std::vector<std::int64_t>> ch(nch, std::vector<std::int64_t>(bs));
    for (std::uint32_t i = 0; i < bs; ++i)
      for (std::uint32_t c = 0; c < nch; ++c) ch[c][i] = pcm[(pos + i) * nch + c];
    unsigned assignment = nch - 1;
    VarStereo mode = o.stereo;
    if (mode == VarStereo::cycle) mode = static_cast<VarStereo>(f % 4);
    if (nch == 2 && mode != VarStereo::independent) {
      std::vector<std::int64_t> l = ch[0], r = ch[1];
      for (std::uint32_t i = 0; i < bs; ++i) {
        std::int64_t side = l[i] - r[i];
        if (mode == VarStereo::left_side) ch[1][i] = side;
        if (mode == VarStereo::side_right) ch[0][i] = side;
        if (mode == VarStereo::mid_side) ch[0][i] = (l[i] + r[i]) >> 1, ch[1][i] = side;
      }
      assignment = mode == VarStereo::left_side ? 8 : mode == VarStereo::side_right ? 9 : 10;
    }
    auto bytes = frame(ch, assignment, bps, o.sample_rate, o.variable_blocksize,
                       o.variable_blocksize ? pos : f, o);
    std::uint32_t n = static_cast<std::uint32_t>(bytes.size());
    min_frame = f == 0 ? n : std::min(min_frame, n);
    max_frame = std::max(max_frame, n);
    frames.insert(frames.end(), bytes.begin(), bytes.end());
    pos += bs;
  }

  // MD5 of the samples as little-endian signed integers of ceil(bps/8) bytes, as libFLAC does.
  std::array<std::uint8_t, 16> md5{};
  if (o.md5) {
    Md5 h;
    const unsigned width = (bps + 7) / 8;
    std::vector<std::uint8_t> buf;
    buf.reserve(pcm.size() * width);
    for (std::int32_t v : pcm)
      for (unsigned b = 0; b < width; ++b)
        buf.push_back(static_cast<std::uint8_t>(std::uint32_t(v) >> (8 * b)));
    h.update(buf.data(), buf.size());
    md5 = h.finish();
  }

  std::uint32_t min_bs = 65535, max_bs = 16;
  for (std::size_t f = 0; f < sizes.size(); ++f) {
    max_bs = std::max(max_bs, sizes[f]);
    if (f + 1 < sizes.size() || sizes.size() == 1) min_bs = std::min(min_bs, sizes[f]);
  }
  if (!o.variable_blocksize && o.block_sizes.empty())
    min_bs = max_bs = std::max<std::uint32_t>(o.fixed_block, 16);
  min_bs = std::max<std::uint32_t>(min_bs, 16);
  if (min_bs > max_bs) min_bs = max_bs;

  flacbits::BitWriter w;
  w.put(0x664C6143, 32);                    // "fLaC"
  w.put(1, 1), w.put(0, 7), w.put(34, 24);  // last block, STREAMINFO, length 34
  w.put(min_bs, 16), w.put(max_bs, 16), w.put(min_frame, 24), w.put(max_frame, 24);
  w.put(o.sample_rate, 20), w.put(nch - 1, 3), w.put(bps - 1, 5), w.put(total, 36);
  for (std::uint8_t b : md5) w.put(b, 8);
  std::vector<std::uint8_t> out = std::move(w.bytes());
  out.insert(out.end(), frames.begin(), frames.end());
  return out;
}

}  // namespace sigpu::test
