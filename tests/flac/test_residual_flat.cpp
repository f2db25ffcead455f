// The GPU's flat parse, run on the host: the flat residual loop (flac/residual_flat.hpp) against
// its plain twin (residual.hpp), on streams libFLAC made from known samples (levels 0-8, block
// sizes, 8, 16 and 24 bits, mono to 6 channels, every subframe kind), on synthetic residuals
// with every Rice parameter, escaped partitions and long codes, and on damaged and truncated
// copies, which must give the same errors and ends. The CUDA kernel calls this same code
// (FlacGpuFastDecode runs it on a GPU against the plain kernel).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "support/libflac_oracle.hpp"
#include "support/rng.hpp"
#include "support/signals.hpp"

#include "bit_writer.hpp"

#include "core/crc.hpp"
#include "flac/frame.hpp"
#include "flac/residual_flat.hpp"

namespace sigpu::flac {
namespace {

/// The first frame of a stream: after "fLaC" and its metadata blocks.
std::size_t first_frame(const std::vector<std::uint8_t>& f) {
  std::size_t pos = 4;
  for (;;) {
    const bool last = f.at(pos) & 0x80;
    pos += 4 +
           ((std::size_t(f.at(pos + 1)) << 16) | (std::size_t(f.at(pos + 2)) << 8) | f.at(pos + 3));
    if (last) return pos;
  }
}

/// One frame parsed as the GPU's parse kernel parses it: residuals and warm-up in the scratch,
/// the predictors in params, nothing restored.
struct Parsed {
  FrameError error = FrameError::ok;
  std::size_t end = 0;
  FrameHeader header;
  std::vector<std::int32_t> scratch;
  SubframeParams params[8];
};

template <typename Bulk>
Parsed parse(const std::vector<std::uint8_t>& d, FrameSpan span, unsigned bps, const Bulk& bulk) {
  Parsed r;
  const std::size_t avail = std::min<std::size_t>(d.size() - span.pos, kMaxHeaderBytes);
  r.error = parse_frame_header(d.data() + span.pos, avail, r.header, kCrcTables.crc8);
  if (r.error != FrameError::ok) return r;
  const FrameHeader& h = r.header;
  EXPECT_FALSE(needs_wide_scratch(h, bps));
  r.scratch.assign(std::size_t(h.channels) * h.block_size, 0x5A5A5A5A);
  r.error = decode_frame(d.data(), d.size(), span, h, bps, r.scratch.data(), kCrcTables.crc16, true,
                         &r.end, r.params, bulk);
  return r;
}

Parsed parse_plain(const std::vector<std::uint8_t>& d, FrameSpan span, unsigned bps) {
  return parse(d, span, bps, SerialBulk{});
}
Parsed parse_flat(const std::vector<std::uint8_t>& d, FrameSpan span, unsigned bps) {
  return parse(d, span, bps, FlatBulk{d.data(), d.size()});
}

/// The flat parse into a 16-bit scratch (as the GPU's parse_narrow does), read back as the
/// restore reads it: every value from the scratch, or from the spill list where it did not fit.
/// `listed` gets the list's length, `ordered` whether it is in sample order.
Parsed parse_narrow(const std::vector<std::uint8_t>& d, FrameSpan span, unsigned bps,
                    std::size_t* listed, bool* ordered) {
  Parsed r;
  const std::size_t avail = std::min<std::size_t>(d.size() - span.pos, kMaxHeaderBytes);
  r.error = parse_frame_header(d.data() + span.pos, avail, r.header, kCrcTables.crc8);
  if (r.error != FrameError::ok) return r;
  const FrameHeader& h = r.header;
  std::vector<std::int16_t> narrow(std::size_t(h.channels) * h.block_size, 0x5A5A);
  std::vector<NarrowException> pool(narrow.size());
  std::uint32_t used = 0;
  NarrowSpill spill{pool.data(), &used, static_cast<std::uint32_t>(pool.size()), narrow.data()};
  r.error = decode_frame(d.data(), d.size(), span, h, bps, narrow.data(), kCrcTables.crc16, true,
                         &r.end, r.params, FlatBulk{d.data(), d.size(), nullptr, nullptr, &spill});
  r.scratch.assign(narrow.begin(), narrow.end());
  *listed = used;
  *ordered = true;
  std::uint32_t last = 0;
  for (std::uint32_t e = spill.head; e != kNoException; e = pool[e].next) {
    *ordered = *ordered && (e == spill.head || pool[e].at > last);
    last = pool[e].at;
    r.scratch.at(pool[e].at) = pool[e].value;
  }
  return r;
}

/// The predictor fields restore_subframe reads.
bool same_predictor(const SubframeParams& a, const SubframeParams& b) {
  return a.kind == b.kind && a.order == b.order && a.wasted == b.wasted && a.bits == b.bits &&
         (a.kind != SubframeParams::constant || a.constant_value == b.constant_value) &&
         (a.kind != SubframeParams::lpc || (a.precision == b.precision && a.shift == b.shift &&
                                            std::equal(a.coef, a.coef + a.order, b.coef)));
}

/// Checks the flat parse against the plain one; true when both decoded the frame alike.
bool same_parse(const Parsed& plain, const Parsed& flat, const std::string& what) {
  EXPECT_EQ(int(plain.error), int(flat.error)) << what;
  if (plain.error != FrameError::ok || flat.error != FrameError::ok) return false;
  EXPECT_EQ(plain.end, flat.end) << what;
  EXPECT_EQ(plain.scratch, flat.scratch) << what << ": residuals or warm-up differ";
  bool predictors = true;
  for (unsigned c = 0; c < plain.header.channels; ++c)
    predictors = predictors && same_predictor(plain.params[c], flat.params[c]);
  EXPECT_TRUE(predictors) << what << ": predictors differ";
  return plain.end == flat.end && plain.scratch == flat.scratch && predictors;
}

/// The samples of a parsed frame: every subframe restored, in place of the residuals.
std::vector<std::int32_t> restored(const Parsed& p) {
  const unsigned n = p.header.block_size;
  std::vector<std::int32_t> x = p.scratch;
  for (unsigned c = 0; c < p.header.channels; ++c)
    restore_subframe(p.params[c], x.data() + std::size_t(c) * n, n);
  return x;
}

struct StreamCase {
  unsigned channels, bps, level, blocksize;
  test::Signal signal = test::Signal::music;
};

std::string name(const StreamCase& s) {
  return std::string(test::to_string(s.signal)) + " " + std::to_string(s.channels) + " ch " +
         std::to_string(s.bps) + " bit level " + std::to_string(s.level) + " block " +
         std::to_string(s.blocksize);
}

std::vector<StreamCase> stream_cases() {
  std::vector<StreamCase> v;
  for (unsigned level = 0; level <= 8; ++level) v.push_back({2, 16, level, 0});
  for (unsigned blocksize : {192u, 576u, 1152u, 4608u, 16384u}) v.push_back({2, 16, 8, blocksize});
  for (unsigned bps : {8u, 12u, 24u})
    for (unsigned level : {0u, 5u, 8u}) v.push_back({2, bps, level, 0});
  for (unsigned ch : {1u, 3u, 6u}) v.push_back({ch, 16, 8, 0});
  for (unsigned level : {1u, 7u}) v.push_back({2, 16, level, 0, test::Signal::wasted_bits});
  v.push_back({2, 16, 5, 0, test::Signal::white_noise});  // VERBATIM subframes
  v.push_back({2, 16, 5, 0, test::Signal::silence});      // CONSTANT subframes
  v.push_back({2, 16, 8, 0, test::Signal::square});
  return v;
}

std::vector<std::uint8_t> encode(const StreamCase& s, const std::vector<std::int32_t>& pcm) {
  test::LibflacEncoderOptions o;
  o.level = s.level;
  o.blocksize = s.blocksize;
  return test::encode_with_libflac(pcm, s.channels, s.bps, 48000, o);
}

TEST(FlacResidualFlat, LibflacStreamsGiveThePlainResidualsAndTheEncodedSamples) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  std::map<int, unsigned> kinds;  // subframe kind -> count, to see that every kind was met
  for (const StreamCase& s : stream_cases()) {
    const std::size_t frames = 40000;
    const auto pcm = test::make_signal(s.signal, s.channels, s.bps, frames, 3 + s.level);
    const auto f = encode(s, pcm);
    std::size_t pos = first_frame(f), sample = 0;
    while (pos < f.size()) {
      const std::string what = name(s) + " frame at byte " + std::to_string(pos);
      const Parsed plain = parse_plain(f, {pos, 0}, s.bps);
      ASSERT_EQ(plain.error, FrameError::ok) << what;
      ASSERT_TRUE(same_parse(plain, parse_flat(f, {pos, 0}, s.bps), what));
      const std::vector<std::int32_t> x = restored(plain);
      const unsigned n = plain.header.block_size;
      for (unsigned c = 0; c < s.channels; ++c) ++kinds[plain.params[c].kind];
      std::vector<std::int32_t> samples(std::size_t(n) * s.channels);
      store_frame(plain.header, x.data(),
                  [&](unsigned i, unsigned c, std::int32_t v) { samples[i * s.channels + c] = v; });
      ASSERT_LE((sample + n) * s.channels, pcm.size()) << what;
      ASSERT_TRUE(std::equal(samples.begin(), samples.end(), pcm.begin() + sample * s.channels))
          << what << ": not the encoded samples";
      sample += n;
      pos = plain.end;
    }
    EXPECT_EQ(sample, frames) << name(s);
  }
  for (auto kind : {SubframeParams::verbatim, SubframeParams::constant, SubframeParams::fixed,
                    SubframeParams::lpc})
    EXPECT_GT(kinds[kind], 0u) << "no subframe of kind " << int(kind);
}

TEST(FlacResidualFlat, NarrowScratchListsEveryValuePast16Bits) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  std::size_t listed_total = 0;
  for (const StreamCase& s : stream_cases()) {
    if (s.bps > 16) continue;
    const auto pcm = test::make_signal(s.signal, s.channels, s.bps, 20000, 3 + s.level);
    const auto f = encode(s, pcm);
    for (std::size_t pos = first_frame(f); pos < f.size();) {
      const std::string what = name(s) + " frame at byte " + std::to_string(pos);
      const Parsed plain = parse_plain(f, {pos, 0}, s.bps);
      ASSERT_EQ(plain.error, FrameError::ok) << what;
      std::size_t listed = 0;
      bool ordered = false;
      Parsed narrow = parse_narrow(f, {pos, 0}, s.bps, &listed, &ordered);
      // A CONSTANT subframe leaves its scratch as it was (poisoned, at either width).
      const unsigned n = plain.header.block_size;
      for (unsigned c = 0; c < plain.header.channels; ++c)
        if (plain.params[c].kind == SubframeParams::constant)
          std::copy_n(plain.scratch.begin() + c * n, n, narrow.scratch.begin() + c * n);
      ASSERT_TRUE(same_parse(plain, narrow, what + " (16-bit scratch)"));
      std::size_t past = 0;
      for (unsigned c = 0; c < plain.header.channels; ++c)
        if (plain.params[c].kind != SubframeParams::constant)
          past += static_cast<std::size_t>(
              std::count_if(plain.scratch.begin() + c * n, plain.scratch.begin() + (c + 1) * n,
                            [](std::int32_t v) { return v < -32768 || v > 32767; }));
      EXPECT_EQ(listed, past) << what << ": the list holds exactly the values past 16 bits";
      EXPECT_TRUE(ordered) << what;
      listed_total += listed;
      pos = plain.end;
    }
  }
  EXPECT_GT(listed_total, 100u) << "the streams hardly reached the list";
}

using test::BitWriter;

/// A residual section: coding method, partition order, then partitions with random
/// parameters (escaped ones among them) and values that stray from the parameter, some far
/// (long unary runs, quotients that overflow 32 bits).
std::vector<std::uint8_t> make_residual(test::Rng& rng, unsigned n, unsigned order,
                                        std::uint64_t* start) {
  BitWriter bw;
  for (unsigned i = rng.below(40); i > 0; --i) bw.put(rng.next() & 1, 1);
  *start = bw.bits;
  const unsigned method = rng.below(60) ? rng.below(2) : 2 + rng.below(2);
  const unsigned param_bits = method ? 5 : 4, escape = method ? 31 : 15;
  unsigned partition_order = 0;
  while (partition_order < 8 && (n >> (partition_order + 1)) >= std::max(order, 1u) &&
         ((n >> (partition_order + 1)) << (partition_order + 1)) == n && rng.below(3))
    ++partition_order;
  const bool bad_order = rng.below(30) == 0;
  if (bad_order) partition_order = rng.below(16);
  bw.put(method, 2);
  bw.put(partition_order, 4);
  if (method > 1 || bad_order) return std::move(bw.bytes);  // the layout is all that is read
  const unsigned size = n >> partition_order;
  unsigned i = order;
  for (unsigned p = 0; p < (1u << partition_order); ++p) {
    const unsigned end = (p + 1) * size;
    if (rng.below(12) == 0) {
      const unsigned width = rng.below(32);
      bw.put(escape, param_bits);
      bw.put(width, 5);
      for (; i < end; ++i) bw.put(width ? rng.next() : 0, width);
      continue;
    }
    const unsigned k = rng.below(escape);
    bw.put(k, param_bits);
    for (; i < end; ++i) {
      std::uint64_t u = rng.next() & ((std::uint64_t(1) << k) - 1);
      const unsigned r = rng.below(1000);
      std::uint64_t q = r < 700 ? rng.below(3) : r < 990 ? rng.below(40) : rng.below(400);
      if (k >= 20 && rng.below(300) == 0) q = (std::uint64_t(1) << (32 - k)) + rng.below(3);
      bw.zeros(q);
      bw.put(1, 1);
      bw.put(u, k);
    }
  }
  for (unsigned t = rng.below(100); t > 0; --t) bw.put(rng.next() & 1, 1);
  return std::move(bw.bytes);
}

struct ResidualRun {
  FrameError error;
  std::uint64_t end;
  std::vector<std::int32_t> out;
};

/// The residual decoded into out[offset ..]: the flat loop groups its codes by the 16-byte
/// boundaries of its output, so the offset moves where its groups start and end.
template <typename Bulk>
ResidualRun run_residual(const std::vector<std::uint8_t>& d, std::uint64_t start, unsigned n,
                         unsigned order, const Bulk& bulk, unsigned offset = 0) {
  BitReader br(d.data(), d.size(), static_cast<std::size_t>(start >> 3));
  br.skip(start & 7);
  ResidualRun r{FrameError::ok, 0, std::vector<std::int32_t>(n + offset, 0x5A5A5A5A)};
  r.error = bulk.residual(br, r.out.data() + offset, n, order);
  r.end = br.bit_position();
  r.out.erase(r.out.begin(), r.out.begin() + offset);
  return r;
}

/// run_residual into a 16-bit scratch (offset as there), every value read back from it or from
/// the spill list, which must be in sample order and hold exactly the values past 16 bits.
ResidualRun run_residual_narrow(const std::vector<std::uint8_t>& d, std::uint64_t start, unsigned n,
                                unsigned order, unsigned offset) {
  BitReader br(d.data(), d.size(), static_cast<std::size_t>(start >> 3));
  br.skip(start & 7);
  std::vector<std::int16_t> out(n + offset, 0x5A5A);
  std::vector<NarrowException> pool(n);
  std::uint32_t used = 0;
  NarrowSpill spill{pool.data(), &used, n, out.data() + offset};
  ResidualRun r{FrameError::ok, 0, {}};
  r.error = FlatBulk{d.data(), d.size(), nullptr, nullptr, &spill}.residual(br, out.data() + offset,
                                                                            n, order);
  r.end = br.bit_position();
  r.out.assign(out.begin() + offset, out.end());
  for (unsigned i = 0; i < order; ++i) r.out[i] = 0x5A5A5A5A;  // the warm-up's, not written
  std::uint32_t listed = 0;
  for (std::uint32_t e = spill.head; e != kNoException; e = pool[e].next, ++listed) {
    EXPECT_TRUE(e == spill.head || pool[e].at > 0);
    EXPECT_FALSE(fits_narrow(pool[e].value));
    r.out.at(pool[e].at) = pool[e].value;
  }
  EXPECT_EQ(listed, used);
  return r;
}

TEST(FlacResidualFlat, SyntheticResidualsDamagedAndTruncated) {
  test::Rng rng{17};
  std::map<int, unsigned> errors;
  for (unsigned t = 0; t < 4000; ++t) {
    const unsigned n = std::vector<unsigned>{16, 192, 576, 1024, 4096}[rng.below(5)];
    const unsigned order = rng.below(4) ? rng.below(std::min(n, 33u)) : 0;
    std::uint64_t start = 0;
    std::vector<std::uint8_t> d = make_residual(rng, n, order, &start);
    const unsigned damage = rng.below(4);
    if (damage == 1) {
      for (unsigned f = 1 + rng.below(8); f > 0; --f)
        d[rng.below(static_cast<unsigned>(d.size()))] ^= std::uint8_t(1u << rng.below(8));
    } else if (damage == 2) {
      d.resize(rng.below(static_cast<unsigned>(d.size()) + 1));
      d.shrink_to_fit();  // an exact-size allocation: reads past it are caught by ASan
      if (start > d.size() * 8) start = 0;
    }
    const ResidualRun plain = run_residual(d, start, n, order, SerialBulk{});
    const ResidualRun flat =
        run_residual(d, start, n, order, FlatBulk{d.data(), d.size()}, rng.below(4));
    const std::string what = "case " + std::to_string(t) + " n " + std::to_string(n) + " order " +
                             std::to_string(order) + " damage " + std::to_string(damage);
    ASSERT_EQ(int(plain.error), int(flat.error)) << what;
    ++errors[int(plain.error)];
    if (plain.error != FrameError::ok) continue;
    ASSERT_EQ(plain.end, flat.end) << what;
    ASSERT_EQ(plain.out, flat.out) << what;
    const ResidualRun narrow = run_residual_narrow(d, start, n, order, rng.below(8));
    ASSERT_EQ(int(plain.error), int(narrow.error)) << what << " (16-bit scratch)";
    ASSERT_EQ(plain.end, narrow.end) << what << " (16-bit scratch)";
    ASSERT_EQ(plain.out, narrow.out) << what << " (16-bit scratch)";
  }
  // Every way a residual can end was met, each more than a few times.
  for (FrameError e : {FrameError::ok, FrameError::truncated, FrameError::rice_overflow,
                       FrameError::bad_residual_coding, FrameError::bad_partition_order})
    EXPECT_GT(errors[int(e)], 20u) << "error " << int(e);
}

TEST(FlacResidualFlat, DamagedStreamsGiveThePlainErrors) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  test::Rng rng{5};
  std::map<int, unsigned> errors;
  for (const StreamCase& s :
       {StreamCase{2, 16, 8, 0}, StreamCase{2, 24, 5, 1152}, StreamCase{1, 8, 0, 576}}) {
    const auto pcm = test::make_signal(test::Signal::music, s.channels, s.bps, 30000, 9);
    const auto good = encode(s, pcm);
    std::vector<FrameSpan> frames;
    for (std::size_t pos = first_frame(good); pos < good.size();) {
      const Parsed p = parse_plain(good, {pos, 0}, s.bps);
      ASSERT_EQ(p.error, FrameError::ok);
      frames.push_back({pos, p.end});
      pos = p.end;
    }
    for (unsigned t = 0; t < 400; ++t) {
      const FrameSpan f = frames[rng.below(static_cast<unsigned>(frames.size()))];
      std::vector<std::uint8_t> d = good;
      if (t % 4 == 3) {
        d.resize(f.pos + rng.below(static_cast<unsigned>(f.end - f.pos)));
        d.shrink_to_fit();
      } else {
        for (unsigned k = 1 + rng.below(4); k > 0; --k)
          d[f.pos + 6 + rng.below(static_cast<unsigned>(f.end - f.pos - 6))] ^=
              std::uint8_t(1u << rng.below(8));
      }
      // As the search links frames (the end known), and as a reader that checks the CRC-16.
      for (FrameSpan span : {f, FrameSpan{f.pos, 0}}) {
        const std::string what = name(s) + " trial " + std::to_string(t) + " frame at " +
                                 std::to_string(f.pos) + (span.end ? " linked" : " unlinked");
        const Parsed plain = parse_plain(d, span, s.bps);
        EXPECT_EQ(same_parse(plain, parse_flat(d, span, s.bps), what),
                  plain.error == FrameError::ok)
            << what;
        ++errors[int(plain.error)];
      }
    }
  }
  EXPECT_GT(errors[int(FrameError::truncated)], 20u);
  EXPECT_GT(errors[int(FrameError::frame_crc)], 20u);
  EXPECT_GT(errors.size(), 4u) << "the damage reached few kinds of error";
}

}  // namespace
}  // namespace sigpu::flac
