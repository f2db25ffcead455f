// The fast CUDA frame decode (parse / restore / store kernels) against its plain twin
// (DecodeFramesKernel, one thread per frame): identical bytes and identical per-frame error
// codes on real libFLAC streams, variable block sizes, every stereo mode and damaged streams.
// The output is poisoned first (twin::kPoison), so a sample either path forgets to write shows
// up; kernels run alone write into support/twin.hpp's guarded buffers.
// Runs on the GPU machine (label `gpu`); skips cleanly without a device.
#include <gtest/gtest.h>

#include <sigpu/flac.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <string>

#include "support/libflac_oracle.hpp"
#include "support/rng.hpp"
#include "support/signals.hpp"
#include "support/twin.hpp"
#include "support/var_encoder.hpp"

#include "core/crc.hpp"
#include "flac/frame.hpp"
#include "flac/predict.hpp"

#ifdef SIGPU_HAVE_CUDA
#include "flac/backends.hpp"
#include "flac/cuda/decode_path.hpp"
#endif

namespace sigpu::flac {
namespace {

namespace twin = test::twin;

// The phase functions on the host, against decode_frame + store_frame: the logic of the fast
// kernels checked on every machine, the kernels themselves below on the GPU.
struct FrameSpanList {
  std::vector<FrameSpan> spans;
};

FrameSpanList walk_frames(std::span<const std::uint8_t> f, unsigned bps) {
  static constexpr CrcTables t = make_crc_tables();
  const Stream st = parse_stream(f);
  FrameSpanList out;
  std::size_t pos = st.audio_offset;
  std::vector<std::int64_t> x(8 * 65536);
  while (pos + 2 < f.size()) {
    FrameHeader h;
    const std::size_t avail = std::min<std::size_t>(f.size() - pos, kMaxHeaderBytes);
    if (parse_frame_header(f.data() + pos, avail, h, t.crc8) != FrameError::ok) break;
    std::size_t end = 0;
    if (decode_frame(f.data() + pos, f.size() - pos, {0, 0}, h, bps, x.data(), t.crc16, true,
                     &end) != FrameError::ok)
      break;
    out.spans.push_back({pos, pos + end});
    pos += end;
  }
  return out;
}

/// Flips a bit in the subframes of `count` random frames and writes the frame's CRC-16 anew:
/// the search still links them, so the decode kernels themselves meet the damage (bad subframe
/// types, Rice overflows, frames that end elsewhere).
std::vector<std::uint8_t> damage_keeping_crc(std::vector<std::uint8_t> f, const FrameSpanList& s,
                                             std::mt19937_64& rng, int count) {
  for (int j = 0; j < count; ++j) {
    const FrameSpan sp = s.spans[rng() % s.spans.size()];
    if (sp.end < sp.pos + kMaxHeaderBytes + 4) continue;
    const std::size_t body = sp.pos + kMaxHeaderBytes, len = sp.end - 2 - body;
    f[body + rng() % len] ^= std::uint8_t(1u << (rng() % 8));
    const std::uint16_t crc = test::flacbits::crc16(f.data() + sp.pos, sp.end - 2 - sp.pos);
    f[sp.end - 2] = std::uint8_t(crc >> 8);
    f[sp.end - 1] = std::uint8_t(crc);
  }
  return f;
}

/// Decodes every span of `spans` over `f` both ways; returns the number of failed frames.
std::size_t expect_host_twins(std::span<const std::uint8_t> f, const FrameSpanList& spans,
                              unsigned bps, const std::string& what) {
  static constexpr CrcTables t = make_crc_tables();
  std::vector<std::int64_t> wide(8 * 65536);
  std::vector<std::int32_t> narrow(8 * 65536), fast(8 * 65536, 0x5A5A5A5A);
  std::size_t bad = 0;
  for (std::size_t k = 0; k < spans.spans.size(); ++k) {
    const FrameSpan s = spans.spans[k];
    FrameHeader h;
    const std::size_t avail = std::min<std::size_t>(f.size() - s.pos, kMaxHeaderBytes);
    if (parse_frame_header(f.data() + s.pos, avail, h, nullptr) != FrameError::ok) {
      ++bad;
      continue;
    }
    if (needs_wide_scratch(h, bps)) continue;  // stays on the plain path
    std::size_t end_a = 0, end_b = 0;
    const FrameError a =
        decode_frame(f.data(), f.size(), s, h, bps, narrow.data(), t.crc16, false, &end_a);
    SubframeParams p[8];
    const FrameError b =
        decode_frame(f.data(), f.size(), s, h, bps, fast.data(), t.crc16, false, &end_b, p);
    if (a != b || end_a != end_b) {
      ADD_FAILURE() << what << " frame " << k << ": plain error " << int(a) << " end " << end_a
                    << ", fast error " << int(b) << " end " << end_b;
      return bad + 1;
    }
    if (a != FrameError::ok) {
      ++bad;
      continue;
    }
    for (unsigned c = 0; c < h.channels; ++c)
      restore_subframe(p[c], fast.data() + std::size_t(c) * h.block_size, h.block_size);
    std::size_t mismatches = 0;
    store_frame(h, narrow.data(), [&](unsigned i, unsigned c, std::int32_t v) {
      mismatches += decorrelated_sample(h.assignment, fast.data(), h.block_size, i, c) != v;
    });
    if (mismatches) {
      ADD_FAILURE() << what << " frame " << k << ": " << mismatches << " samples differ";
      return bad + 1;
    }
  }
  return bad;
}

TEST(FlacFastDecodeHost, PhasesMatchThePlainDecode) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  std::mt19937_64 rng(5);
  std::size_t bad = 0;
  for (unsigned bps : {8u, 16u, 24u, 32u})
    for (unsigned ch : {1u, 2u, 6u})
      for (unsigned level : {0u, 8u}) {
        const auto pcm = test::make_signal(test::Signal::music, ch, bps, 20000, bps + ch);
        test::LibflacEncoderOptions o;
        o.level = level;
        const auto f = test::encode_with_libflac(pcm, ch, bps, 48000, o);
        const auto spans = walk_frames(f, bps);
        ASSERT_GT(spans.spans.size(), 2u);
        const std::string what = std::to_string(bps) + " bit " + std::to_string(ch) + " ch";
        EXPECT_EQ(expect_host_twins(f, spans, bps, what), 0u) << what;
        auto d = f;
        for (int j = 0; j < 40; ++j)
          d[spans.spans[0].pos + rng() % (d.size() - spans.spans[0].pos)] ^=
              std::uint8_t(1u << (rng() % 8));
        bad += expect_host_twins(d, spans, bps, what + " damaged");
      }
  EXPECT_GT(bad, 0u);
}

TEST(FlacFastDecodeHost, DamageBehindAValidCrc) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  std::mt19937_64 rng(9);
  std::size_t bad = 0;
  for (unsigned bps : {16u, 24u})
    for (unsigned ch : {1u, 2u}) {
      const auto pcm = test::make_signal(test::Signal::music, ch, bps, 40000, bps + ch);
      test::LibflacEncoderOptions o;
      o.level = 8;
      o.blocksize = 1024;
      const auto f = test::encode_with_libflac(pcm, ch, bps, 48000, o);
      const auto spans = walk_frames(f, bps);
      bad += expect_host_twins(damage_keeping_crc(f, spans, rng, 20), spans, bps, "crc kept");
    }
  EXPECT_GT(bad, 0u);
}

TEST(FlacFastDecodeHost, VarEncoderStereoModes) {
  for (unsigned bps : {8u, 16u, 24u, 32u})
    for (auto stereo : {test::VarStereo::left_side, test::VarStereo::side_right,
                        test::VarStereo::mid_side, test::VarStereo::cycle}) {
      test::VarEncoderOptions o;
      o.bits_per_sample = bps;
      o.stereo = stereo;
      o.max_block = 6000;
      const auto pcm = test::make_signal(test::Signal::wasted_bits, 2, bps, 30000, bps);
      const auto f = test::var_encode(pcm, o);
      EXPECT_EQ(expect_host_twins(f, walk_frames(f, bps), bps, "var"), 0u)
          << bps << " bit mode " << int(stereo);
    }
}

#ifdef SIGPU_HAVE_CUDA
using cuda::DecodePath;

class FlacGpuFastDecode : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
    cuda::set_output_fill(twin::kPoison);
  }
  void TearDown() override {
    cuda::set_output_fill(0);
    cuda::set_decode_path(DecodePath::automatic);
  }
};

struct Run {
  Decoded out;
  std::vector<std::uint8_t> errors;
  bool threw = false;
  std::string message;
};

Run run(std::span<const std::uint8_t> file, DecodePath path, SampleFormat fmt, Layout layout) {
  cuda::set_decode_path(path);
  cuda::clear_frame_errors_log();
  Run r;
  try {
    r.out = decode(file, {.backend = Backend::cuda, .format = fmt, .layout = layout});
  } catch (const std::exception& e) {
    r.threw = true;
    r.message = e.what();
  }
  r.errors = cuda::frame_errors_log();
  return r;
}

/// Runs the plain path and every fast path (thread, warp and flat parse); returns the number of
/// non-ok frames the plain path saw.
std::size_t expect_twins(std::span<const std::uint8_t> file, const std::string& what,
                         SampleFormat fmt = SampleFormat::raw32,
                         Layout layout = Layout::interleaved) {
  const Run plain = run(file, DecodePath::plain, fmt, layout);
  std::size_t bad = 0;
  for (auto e : plain.errors) bad += e != 0;
  for (DecodePath path : {DecodePath::fast, DecodePath::fast_warp_parse, DecodePath::fast_flat}) {
    const std::string how = what + (path == DecodePath::fast              ? " (thread parse)"
                                    : path == DecodePath::fast_warp_parse ? " (warp parse)"
                                                                          : " (flat parse)");
    const Run fast = run(file, path, fmt, layout);
    EXPECT_EQ(plain.threw, fast.threw) << how << ": " << plain.message << " / " << fast.message;
    EXPECT_TRUE(twin::equal(plain.errors, fast.errors)) << how << ": frame errors";
    if (plain.threw || fast.threw) continue;
    EXPECT_EQ(plain.out.pcm.samples, fast.out.pcm.samples) << how;
    EXPECT_TRUE(twin::equal(plain.out.pcm.bytes, fast.out.pcm.bytes)) << how << ": PCM bytes";
    EXPECT_EQ(plain.out.report.damage.size(), fast.out.report.damage.size()) << how;
    EXPECT_EQ(plain.out.report.md5, fast.out.report.md5) << how;
  }
  return bad;
}

std::vector<std::uint8_t> libflac(test::Signal sig, unsigned ch, unsigned bps, std::size_t n,
                                  unsigned level, int mid_side = -1, unsigned blocksize = 0) {
  const auto pcm = test::make_signal(sig, ch, bps, n, 7 + ch + bps);
  test::LibflacEncoderOptions o;
  o.level = level;
  o.mid_side = mid_side;
  o.blocksize = blocksize;
  return test::encode_with_libflac(pcm, ch, bps, 48000, o);
}

// The warp restore (warp_restore.cuh) against restore_subframe, subframe by subframe, on random
// predictors of every kind and order, wasted bits, sums that need 64 bits, block sizes from 1
// sample, channel counts that do not divide a warp, and frames left pending = 0; then the same
// frames stored by the kernel itself (raw32, and stereo s16 in pairs), each stereo mode,
// against decorrelated_sample over the host's restore: exactly the frames held whole by a warp
// and free of 64-bit sums are stored.
TEST_F(FlacGpuFastDecode, WarpRestoreMatchesRestoreSubframe) {
  const std::uint64_t seed = twin::seeds({2026}).front();
  SCOPED_TRACE(twin::label("seed", seed));
  std::mt19937_64 rng(seed);
  auto pick = [&](std::uint64_t lo, std::uint64_t hi) {  // [lo, hi]
    return lo + rng() % (hi - lo + 1);
  };
  for (int round = 0; round < 40; ++round) {
    const unsigned channels = std::array{1u, 2u, 3u, 6u, 8u}[round % 5];
    const std::size_t frames = pick(1, 150);
    std::vector<std::uint32_t> sizes(frames);
    std::vector<std::uint8_t> pending(frames);
    std::vector<SubframeParams> params(frames * channels);
    std::size_t total = 0;
    for (std::size_t k = 0; k < frames; ++k) {
      const auto r = pick(0, 9);
      sizes[k] = r < 6   ? 4096
                 : r < 8 ? static_cast<std::uint32_t>(pick(1, 40))
                         : static_cast<std::uint32_t>(pick(1, 4608));
      pending[k] = pick(0, 9) != 0;
      total += std::size_t(sizes[k]) * channels;
      for (unsigned c = 0; c < channels; ++c) {
        SubframeParams& p = params[k * channels + c];
        p.kind = static_cast<std::uint8_t>(pick(0, 9) < 7 ? std::uint64_t{SubframeParams::lpc}
                                                          : pick(0, 2));
        p.bits = static_cast<std::uint8_t>(pick(0, 3) ? pick(8, 24) : pick(25, 33));
        p.wasted = static_cast<std::uint8_t>(pick(0, 5) ? 0 : pick(1, 3));
        const unsigned most = std::min<unsigned>(sizes[k], 32);
        if (p.kind == SubframeParams::fixed)
          p.order = static_cast<std::uint8_t>(pick(0, std::min(4u, most)));
        if (p.kind == SubframeParams::lpc) {
          p.order = static_cast<std::uint8_t>(pick(1, most));
          p.precision = static_cast<std::uint8_t>(pick(1, 15));
          p.shift = static_cast<std::int8_t>(pick(0, 15));
          for (unsigned j = 0; j < p.order; ++j)
            p.coef[j] = static_cast<std::int32_t>(pick(0, (1u << p.precision) - 1)) -
                        (1 << (p.precision - 1));
        }
        if (p.kind == SubframeParams::constant)
          p.constant_value = static_cast<std::int64_t>(rng()) >> 30;
      }
    }
    std::vector<std::int32_t> x(total);
    for (auto& v : x) v = static_cast<std::int32_t>(static_cast<std::int64_t>(rng()) >> 44);
    std::vector<std::int32_t> want = x;
    std::size_t at = 0;
    for (std::size_t k = 0; k < frames; ++k) {
      for (unsigned c = 0; pending[k] && c < channels; ++c)
        restore_subframe(params[k * channels + c], want.data() + at + std::size_t(c) * sizes[k],
                         sizes[k]);
      at += std::size_t(sizes[k]) * channels;
    }
    const std::string what = twin::label("round", round, "channels", channels, "frames", frames);
    {
      twin::Arena a(twin::Memory::device);
      std::int32_t* d_x = a.in_out("samples", x);
      cuda::restore_on_device(d_x, sizes, channels, params, pending);
      EXPECT_TRUE(a.intact()) << what;
      EXPECT_TRUE(twin::equal(want, a.read(d_x, x.size()))) << what << ": samples";
    }

    std::vector<std::uint8_t> assignments(frames, static_cast<std::uint8_t>(channels - 1));
    if (channels == 2)
      for (auto& a : assignments)
        a = std::array<std::uint8_t, 4>{1, kLeftSide, kSideRight, kMidSide}[pick(0, 3)];
    // raw32 through every channel count; s16 (from 24 bits) for stereo, stored as pairs.
    const SampleFormat format =
        channels == 2 && round % 2 ? SampleFormat::s16 : SampleFormat::raw32;
    const unsigned bits = format == SampleFormat::s16 ? 24 : 32;
    const std::size_t pcm_bytes = x.size() * (format == SampleFormat::s16 ? 2 : 4);
    twin::Arena a(twin::Memory::device);
    std::int32_t* d_x = a.in_out("samples", x);
    std::uint8_t* d_pcm = a.output<std::uint8_t>("pcm", pcm_bytes);
    const auto stored_by_kernel = cuda::restore_on_device(d_x, sizes, channels, params, pending,
                                                          assignments, d_pcm, format, bits);
    EXPECT_TRUE(a.intact()) << what;
    const auto samples = a.read(d_x, x.size());
    const auto pcm = a.read(d_pcm, pcm_bytes);
    // Where the kernel stores no frame, the output keeps its poison.
    const std::int32_t unwritten = format == SampleFormat::s16 ? twin::poisoned<std::int16_t>()
                                                               : twin::poisoned<std::int32_t>();
    auto pcm_at = [&](std::size_t index) -> std::int32_t {
      if (format == SampleFormat::s16) {
        std::int16_t v;
        std::memcpy(&v, pcm.data() + index * 2, 2);
        return v;
      }
      std::int32_t v;
      std::memcpy(&v, pcm.data() + index * 4, 4);
      return v;
    };
    const bool whole_frames = 32 % channels == 0;
    std::size_t at_frame = 0, out = 0;
    for (std::size_t k = 0; k < frames; ++k) {
      const unsigned n = sizes[k];
      bool wide = false;
      for (unsigned c = 0; c < channels; ++c) {
        const SubframeParams& p = params[k * channels + c];
        wide |= p.kind == SubframeParams::lpc && !lpc_fits_32(p.bits, p.precision, p.order);
      }
      const bool stored = pending[k] && whole_frames && !wide;
      ASSERT_EQ(stored_by_kernel[k], stored) << what << ", frame " << k;
      for (unsigned i = 0; i < n; ++i)
        for (unsigned c = 0; c < channels; ++c) {
          std::int32_t expect = unwritten;
          if (stored) {
            expect = decorrelated_sample(assignments[k], want.data() + at_frame, n, i, c);
            if (format == SampleFormat::s16) expect = s16_sample(expect, bits);
          }
          ASSERT_EQ(pcm_at((out + i) * channels + c), expect)
              << what << ", frame " << k << ", sample " << i << ", channel " << c;
          if (!stored) {
            ASSERT_EQ(samples[at_frame + std::size_t(c) * n + i],
                      want[at_frame + std::size_t(c) * n + i])
                << what << ", frame " << k << " (restored in place)";
          }
        }
      at_frame += std::size_t(n) * channels;
      out += n;
    }
  }
}

// The GPU frame search, its warp link (warp_link.cuh) above all, against the CPU search (prefix
// CRCs) and the plain rule (find_successor) candidate by candidate: libFLAC streams, a stream
// full of false syncs and fake frames, and the same moved by 1-3 bytes so that spans start and
// end at every byte of a word; each file also lies 4, 8 and 12 bytes into its device buffer, so
// that the header search's 16-byte loads meet the span's ends at every word of a block.
TEST_F(FlacGpuFastDecode, WarpLinksMatchTheCpuSearch) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  std::vector<std::pair<std::string, std::vector<std::uint8_t>>> files;
  files.emplace_back("libflac -8 stereo", libflac(test::Signal::music, 2, 16, 200000, 8));
  files.emplace_back("libflac -0 mono 24-bit",
                     libflac(test::Signal::music, 1, 24, 100000, 0, -1, 1152));
  {
    const auto pcm = test::make_adversarial(2, 16, 60000, {48000, 4096, false}, 9);
    test::LibflacEncoderOptions o;
    o.level = 0;
    o.blocksize = 4096;
    o.disable_constant_subframes = o.disable_fixed_subframes = true;
    files.emplace_back("false syncs", test::encode_with_libflac(pcm, 2, 16, 48000, o));
  }
  for (std::size_t pad = 1; pad <= 3; ++pad) {  // the frames move against 4-byte words
    auto f = files[2].second;
    const auto at = static_cast<std::ptrdiff_t>(parse_stream(f).audio_offset);
    f.insert(f.begin() + at, pad, std::uint8_t{0});
    files.emplace_back("false syncs, " + std::to_string(pad) + " bytes moved", std::move(f));
  }
  ThreadPool pool(2);
  for (std::size_t offset = 0; offset < 16; offset += 4)
    for (const auto& [name, f] : files) {
      const std::string what = name + ", " + std::to_string(offset) + " bytes into the buffer";
      const Stream st = parse_stream(f);
      const std::vector<Candidate> gpu = cuda::search_on_device(f, offset);
      const std::vector<Candidate> cpu = search_frames_cpu(f, st, pool);
      ASSERT_GT(gpu.size(), 3u) << what;
      using C = Candidate;
      ASSERT_TRUE(twin::equal(twin::field(cpu, &C::pos), twin::field(gpu, &C::pos))) << what;
      const auto next = twin::field(gpu, &C::next);
      EXPECT_TRUE(twin::equal(twin::field(cpu, &C::next), next)) << what << ": successors";
      const unsigned bps = st.has_streaminfo ? st.info.bits_per_sample : 32;
      const std::uint32_t max_frame = st.has_streaminfo ? st.info.max_frame_size : 0;
      std::vector<std::int32_t> plain(cpu.size());
      for (std::size_t i = 0; i < cpu.size(); ++i)
        plain[i] = find_successor(f.data(), cpu.data(), static_cast<std::uint32_t>(cpu.size()),
                                  static_cast<std::uint32_t>(i),
                                  search_span(cpu[i], bps, max_frame), kCrcTables.crc16);
      EXPECT_TRUE(twin::equal(plain, next)) << what << ": successors by find_successor";
      const auto linked =
          std::size_t(std::count_if(next.begin(), next.end(), [](auto n) { return n >= 0; }));
      const std::uint64_t frames =
          (st.info.total_samples + st.info.max_block_size - 1) / st.info.max_block_size;
      EXPECT_GE(linked + 1, frames) << what;  // every true frame but the last has its successor
    }
}

// The header search appends its candidates in no order and sorts them (FindHeadersKernel). A
// stream whose audio is a real frame header over and over (one every 7 bytes, two or three to a
// thread's 16 bytes): 3,000 of them fit the room the search makes at first (a candidate per 512
// bytes and 4,096 more), 150,000 do not, and it searches again. Every candidate as the CPU finds
// it, in order.
TEST_F(FlacGpuFastDecode, DenseHeadersAreFoundInOrder) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  const auto real = libflac(test::Signal::music, 2, 16, 20000, 5);
  const Stream st = parse_stream(real);
  FrameHeader h;
  ASSERT_EQ(parse_frame_header(real.data() + st.audio_offset, kMaxHeaderBytes, h, kCrcTables.crc8),
            FrameError::ok);
  const std::size_t header = h.header_bytes;
  ThreadPool pool(2);
  for (const std::size_t copies : {std::size_t{3}, std::size_t{3000}, std::size_t{150000}}) {
    std::vector<std::uint8_t> f(real.begin(),
                                real.begin() + static_cast<std::ptrdiff_t>(st.audio_offset));
    for (std::size_t i = 0; i < copies; ++i)
      f.insert(f.end(), real.begin() + static_cast<std::ptrdiff_t>(st.audio_offset),
               real.begin() + static_cast<std::ptrdiff_t>(st.audio_offset + header));
    const std::vector<Candidate> gpu = cuda::search_on_device(f);
    const std::vector<Candidate> cpu = search_frames_cpu(f, st, pool);
    ASSERT_EQ(cpu.size(), copies);
    using C = Candidate;
    ASSERT_TRUE(twin::equal(twin::field(cpu, &C::pos), twin::field(gpu, &C::pos))) << copies;
    ASSERT_TRUE(twin::equal(twin::field(cpu, &C::number), twin::field(gpu, &C::number))) << copies;
    ASSERT_TRUE(twin::equal(twin::field(cpu, &C::next), twin::field(gpu, &C::next))) << copies;
  }
}

TEST_F(FlacGpuFastDecode, ChainOnTheDeviceIsTheHostsChain) {
  // ChainFramesKernel against chained_frames over the CPU search's candidates: the same frames
  // for an unbroken stream of one block size, none where the chain breaks, none for variable
  // block sizes (the device leaves those to the ordinary order).
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  struct Case {
    std::string name;
    std::vector<std::uint8_t> file;
    bool unbroken;  ///< the host's chain holds
    bool fixed;     ///< one block size
  };
  std::vector<Case> cases;
  cases.push_back(
      {"libflac -8 stereo", libflac(test::Signal::music, 2, 16, 200000, 8), true, true});
  cases.push_back({"libflac -0 mono 24-bit, blocks of 1152",
                   libflac(test::Signal::music, 1, 24, 100000, 0, -1, 1152), true, true});
  cases.push_back(
      {"libflac -5, 6 channels", libflac(test::Signal::music, 6, 16, 50000, 5), true, true});
  {
    Case c = cases[0];
    c.name = "the fifth frame's sync lost";
    ThreadPool pool(2);
    const auto cands = search_frames_cpu(c.file, parse_stream(c.file), pool);
    ASSERT_GT(cands.size(), 6u);
    c.file[cands[4].pos] = 0;
    c.unbroken = false;
    cases.push_back(std::move(c));
  }
  {
    Case c = cases[0];
    c.name = "one sample more in STREAMINFO";
    ++c.file[4 + 4 + 17];  // "fLaC", the block header, then STREAMINFO's last byte of its count
    c.unbroken = false;
    cases.push_back(std::move(c));
  }
  {
    test::VarEncoderOptions o;
    o.max_block = 9000;
    const auto pcm = test::make_signal(test::Signal::music, 2, 16, 60000, 3);
    cases.push_back({"variable block sizes", test::var_encode(pcm, o), true, false});
  }
  ThreadPool pool(2);
  for (const Case& c : cases) {
    const Stream st = parse_stream(c.file);
    const std::vector<Candidate> cands = search_frames_cpu(c.file, st, pool);
    std::vector<FrameEntry> host(cands.size());
    host.resize(chained_frames(cands, st, false, host.data()));
    ASSERT_EQ(!host.empty(), c.unbroken) << c.name;
    const std::vector<FrameEntry> device = cuda::chain_on_device(c.file);
    ASSERT_EQ(device.size(), c.fixed ? host.size() : 0) << c.name;
    if (device.empty()) continue;
    using F = FrameEntry;
    EXPECT_TRUE(twin::equal(twin::field(host, &F::pos), twin::field(device, &F::pos))) << c.name;
    EXPECT_TRUE(twin::equal(twin::field(host, &F::end), twin::field(device, &F::end))) << c.name;
    EXPECT_TRUE(twin::equal(twin::field(host, &F::out_sample), twin::field(device, &F::out_sample)))
        << c.name;
    EXPECT_TRUE(twin::equal(twin::field(host, &F::block_size), twin::field(device, &F::block_size)))
        << c.name;
  }
}

TEST_F(FlacGpuFastDecode, LibflacStreamsEveryDepthAndChannelCount) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  for (unsigned bps : {8u, 12u, 16u, 20u, 24u, 32u})
    for (unsigned ch : {1u, 2u, 3u, 6u, 8u})
      for (unsigned level : {0u, 5u, 8u}) {
        const auto f = libflac(test::Signal::music, ch, bps, 30000, level);
        expect_twins(f, std::to_string(bps) + " bit " + std::to_string(ch) + " ch level " +
                            std::to_string(level));
      }
  if (twin::timing()) {  // the most work per sample: 8 channels of 32 bits, long predictors
    const auto worst = libflac(test::Signal::white_noise, 8, 32, 48000 * 10, 8);
    twin::time_worst_case("flac decode, 10 s of 8 ch 32 bit noise, level 8",
                          [&](void*) { decode(worst, {.backend = Backend::cuda}); });
  }
}

// The flat parse's 16-bit scratch (parse_narrow): a stream whose residuals and side channel
// pass 16 bits now and then lists those values beside the scratch, and one where nearly every
// side-channel value does fills the list and is decoded again with 32-bit scratch; both exactly
// as the plain kernel decodes them.
TEST_F(FlacGpuFastDecode, NarrowScratchListsTheValuesThatDoNotFit) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  test::LibflacEncoderOptions o;
  o.level = 8;
  // Music with a full-scale click every 3000 samples, the channels apart.
  auto pcm = test::make_signal(test::Signal::music, 2, 16, 60000, 11);
  for (std::size_t i = 1500; i < 60000; i += 3000) {
    pcm[2 * i] = 32767;
    pcm[2 * i + 1] = -32768;
  }
  const auto clicks = test::encode_with_libflac(pcm, 2, 16, 48000, o);
  // Full-scale noise with the channels in antiphase: a 17-bit side channel everywhere (a random
  // low bit, or the encoder takes the side's even values as a wasted bit and stores 16).
  const auto noise = test::make_signal(test::Signal::white_noise, 2, 16, 60000, 5);
  std::vector<std::int32_t> antiphase(noise.size());
  for (std::size_t i = 0; i < noise.size(); i += 2) {
    antiphase[i] = noise[i];
    antiphase[i + 1] = std::clamp(-noise[i] + (noise[i + 1] & 1), -32768, 32767);
  }
  const auto side = test::encode_with_libflac(antiphase, 2, 16, 48000, o);

  ASSERT_FALSE(run(clicks, DecodePath::fast_flat, SampleFormat::s16, Layout::interleaved).threw);
  cuda::NarrowLog log = cuda::narrow_log();
  EXPECT_EQ(log.decodes, 1u);
  EXPECT_GT(log.spilled, 0u) << "no value passed 16 bits";
  EXPECT_EQ(log.refused, 0u);
  expect_twins(clicks, "clicks", SampleFormat::s16);

  ASSERT_FALSE(run(side, DecodePath::fast_flat, SampleFormat::s16, Layout::interleaved).threw);
  log = cuda::narrow_log();
  EXPECT_EQ(log.decodes, 1u);
  EXPECT_EQ(log.refused, 1u) << "the list held " << log.spilled << " values";
  expect_twins(side, "antiphase noise", SampleFormat::s16);
}

TEST_F(FlacGpuFastDecode, FormatsLayoutsAndSignals) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  for (auto sig : {test::Signal::music, test::Signal::white_noise, test::Signal::silence,
                   test::Signal::square, test::Signal::wasted_bits})
    for (unsigned bps : {16u, 24u}) {
      const auto f = libflac(sig, 2, bps, 50000, 8, -1, 1152);
      for (auto fmt :
           {SampleFormat::raw32, SampleFormat::s16, SampleFormat::s32, SampleFormat::f32})
        for (auto layout : {Layout::interleaved, Layout::planar})
          expect_twins(f,
                       std::string(test::to_string(sig)) + " " + std::to_string(bps) + " bit fmt " +
                           std::to_string(int(fmt)) + " layout " + std::to_string(int(layout)),
                       fmt, layout);
    }
}

TEST_F(FlacGpuFastDecode, VariableBlockSizesAndEveryStereoMode) {
  for (unsigned bps : {8u, 16u, 24u, 32u})
    for (auto stereo :
         {test::VarStereo::independent, test::VarStereo::left_side, test::VarStereo::side_right,
          test::VarStereo::mid_side, test::VarStereo::cycle})
      for (auto sf :
           {test::VarSubframes::best, test::VarSubframes::fixed, test::VarSubframes::verbatim}) {
        test::VarEncoderOptions o;
        o.bits_per_sample = bps;
        o.channels = 2;
        o.stereo = stereo;
        o.subframes = sf;
        o.max_block = 9000;
        o.seed = bps * 31 + unsigned(stereo);
        const auto pcm = test::make_signal(test::Signal::wasted_bits, 2, bps, 60000, bps);
        const auto f = test::var_encode(pcm, o);
        expect_twins(f, "var " + std::to_string(bps) + " bit stereo " +
                            std::to_string(int(stereo)) + " subframes " + std::to_string(int(sf)));
        expect_twins(f, "var planar s16", SampleFormat::s16, Layout::planar);
      }
  for (unsigned ch : {1u, 5u, 8u}) {
    test::VarEncoderOptions o;
    o.channels = ch;
    o.bits_per_sample = 20;
    const auto pcm = test::make_signal(test::Signal::music, ch, 20, 40000, ch);
    expect_twins(test::var_encode(pcm, o), "var " + std::to_string(ch) + " ch");
  }
}

TEST_F(FlacGpuFastDecode, DamagedStreams) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  std::mt19937_64 rng(42);
  std::size_t bad = 0;
  for (unsigned bps : {16u, 24u, 32u})
    for (unsigned ch : {1u, 2u, 6u}) {
      const auto clean = libflac(test::Signal::music, ch, bps, 80000, 8);
      for (int trial = 0; trial < 6; ++trial) {
        auto f = clean;
        // Flip a few bits past the metadata, sometimes a burst, sometimes a truncation.
        const std::size_t start = parse_stream(clean).audio_offset;
        std::uniform_int_distribution<std::size_t> pos(start, f.size() - 1);
        for (int j = 0; j < 4; ++j) f[pos(rng)] ^= std::uint8_t(1u << (rng() % 8));
        if (trial % 3 == 1)
          for (std::size_t p = pos(rng), j = 0; j < 64 && p + j < f.size(); ++j)
            f[p + j] = std::uint8_t(rng());
        if (trial % 3 == 2) f.resize(pos(rng));
        expect_twins(f, "damaged " + std::to_string(bps) + " bit " + std::to_string(ch) +
                            " ch trial " + std::to_string(trial));
      }
      // Damage behind a valid CRC-16: the kernels themselves fail frames.
      const auto spans = walk_frames(clean, bps);
      for (int trial = 0; trial < 3; ++trial)
        bad += expect_twins(damage_keeping_crc(clean, spans, rng, 8),
                            "crc kept " + std::to_string(bps) + " bit " + std::to_string(ch) +
                                " ch trial " + std::to_string(trial));
    }
  EXPECT_GT(bad, 0u) << "the damage should have failed some frames in the kernels";
}

// The warp Rice decoder on what stresses it: every Rice parameter range (silence to full-scale
// noise at 8..32 bits), Rice2 codes, escaped partitions, the smallest partitions (order 8),
// tiny and huge blocks, and spikes that make long unary runs.
class FlacRiceGpu : public FlacGpuFastDecode {};

TEST_F(FlacRiceGpu, EveryParameterRangeAndPartitioning) {
  for (unsigned bps : {8u, 16u, 24u, 32u})
    for (auto sig : {test::Signal::white_noise, test::Signal::music, test::Signal::silence,
                     test::Signal::square})
      for (bool escape : {false, true}) {
        test::VarEncoderOptions o;
        o.bits_per_sample = bps;
        o.subframes = test::VarSubframes::fixed;
        o.use_escape_partitions = escape;
        o.max_partition_order = 8;
        o.min_block = 16;
        o.max_block = 20000;
        o.seed = bps + 3 * unsigned(sig);
        const auto pcm = test::make_signal(sig, 2, bps, 70000, bps + unsigned(sig));
        expect_twins(test::var_encode(pcm, o), "rice " + std::string(test::to_string(sig)) + " " +
                                                   std::to_string(bps) + " bit escape " +
                                                   std::to_string(escape));
      }
}

TEST_F(FlacRiceGpu, SpikesMakeLongUnaryRuns) {
  // Quiet partitions with rare full-scale spikes: small Rice parameters and quotients in the
  // hundreds or thousands, past what the segment walk follows (the frame falls back).
  for (unsigned bps : {16u, 24u}) {
    std::vector<std::int32_t> pcm(2 * 50000);
    test::Rng rng{bps};
    for (std::size_t i = 0; i < pcm.size(); ++i)
      pcm[i] =
          rng.below(997) == 0 ? std::int32_t(rng.signed_bits(bps)) : std::int32_t(rng.below(5)) - 2;
    test::VarEncoderOptions o;
    o.bits_per_sample = bps;
    o.subframes = test::VarSubframes::fixed;
    o.use_escape_partitions = false;
    o.max_partition_order = 0;
    o.variable_blocksize = false;
    o.fixed_block = 4096;
    expect_twins(test::var_encode(pcm, o), "spikes " + std::to_string(bps));
  }
}

TEST_F(FlacRiceGpu, LibflacRice2AndHighOrders) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  for (unsigned bps : {20u, 24u, 32u})
    for (unsigned blocksize : {192u, 4608u, 16384u}) {
      const auto f = libflac(test::Signal::white_noise, 2, bps, 60000, 8, -1, blocksize);
      expect_twins(
          f, "libflac noise " + std::to_string(bps) + " bit block " + std::to_string(blocksize));
    }
}

TEST_F(FlacGpuFastDecode, AdversarialVerbatimStream) {
  for (unsigned bps : {16u, 24u}) {
    const auto pcm = test::make_adversarial(2, bps, 30000, {}, bps);
    test::VarEncoderOptions o;
    o.bits_per_sample = bps;
    o.variable_blocksize = false;
    o.subframes = test::VarSubframes::verbatim;
    expect_twins(test::var_encode(pcm, o), "adversarial " + std::to_string(bps));
  }
}
#endif

}  // namespace
}  // namespace sigpu::flac
