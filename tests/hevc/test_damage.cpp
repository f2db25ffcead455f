// Bad input: truncated and corrupted NAL units, missing parameter sets and references, and
// unsupported formats give Problems that name the NAL unit and the element; decoding goes on
// with the next decodable picture; no picture is output silently damaged.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>

#include <sigpu/hevc.hpp>

#include "hevc/nal.hpp"
#include "hevc/schedule.hpp"
#include "hevc/streams.hpp"

namespace sigpu::hevc {
namespace {

namespace fs = std::filesystem;

struct Result {
  std::vector<Frame> frames;
  std::vector<Problem> problems;
  std::string input_error, unsupported;  ///< finish()'s verdict when nothing was decodable
};

Result run(const std::vector<std::uint8_t>& data, Backend backend = Backend::cpu) {
  Result r;
  Decoder dec({.backend = backend, .unfiltered = !Decoder::filters_available()});
  try {
    dec.decode(data, [&](const Frame& f) { r.frames.push_back(f); });
  } catch (const InputError& e) {
    r.input_error = e.what();
  } catch (const UnsupportedError& e) {
    r.unsupported = e.what();
  }
  r.problems = dec.problems();
  return r;
}

bool any_problem_has(const Result& r, const std::string& text) {
  for (const auto& p : r.problems)
    if (p.message.find(text) != std::string::npos) return true;
  return false;
}

std::vector<std::uint8_t> make(const std::string& name, const std::string& args, int frames = 3) {
  if (!testing::have_tools()) return {};
  const fs::path dir = fs::temp_directory_path() / "sigpu-hevc-damage";
  fs::create_directories(dir);
  const fs::path out = dir / (name + ".hevc");
  if (!fs::exists(out)) {
    // ctest runs test processes side by side: each encodes under a name of its own, then
    // renames, so no process reads a stream another is still writing.
    const fs::path own = dir / (name + ".tmp" + std::to_string(::getpid()) + ".hevc");
    if (!testing::encode("testsrc2=size=64x64:rate=25", frames, 8, args, own)) return {};
    fs::rename(own, out);
  }
  return testing::read_file(out);
}

std::vector<std::uint8_t> without_nal(const std::vector<std::uint8_t>& s, int type) {
  std::vector<std::uint8_t> out;
  for (const NalSpan& n : split_annexb(s)) {
    if (((s[n.begin] >> 1) & 0x3f) == type) continue;
    const std::uint8_t sc[4] = {0, 0, 0, 1};
    out.insert(out.end(), sc, sc + 4);
    out.insert(out.end(), s.begin() + static_cast<std::ptrdiff_t>(n.begin),
               s.begin() + static_cast<std::ptrdiff_t>(n.end));
  }
  return out;
}

TEST(HevcDamage, TruncatedSliceIsReportedAndOthersDecode) {
  auto s = make("plain", "--no-deblock --no-sao --ctu 16");
  if (s.empty()) GTEST_SKIP() << "x265 or ffmpeg not installed";
  const auto nals = split_annexb(s);
  // Cut the second picture's slice in half.
  int seen = 0;
  std::size_t cut_at = 0, cut_end = 0;
  for (const auto& n : nals)
    if (((s[n.begin] >> 1) & 0x3f) < 32 && ++seen == 2)
      cut_at = n.begin + (n.end - n.begin) / 2, cut_end = n.end;
  ASSERT_GT(cut_at, 0u);
  s.erase(s.begin() + static_cast<std::ptrdiff_t>(cut_at),
          s.begin() + static_cast<std::ptrdiff_t>(cut_end));
  const Result r = run(s);
  EXPECT_EQ(r.frames.size(), 2u);
  EXPECT_TRUE(any_problem_has(r, "IDR_N_LP")) << r.problems.front().message;
  EXPECT_TRUE(any_problem_has(r, "truncated") || any_problem_has(r, "CTB"))
      << r.problems.front().message;
  for (const auto& f : r.frames) EXPECT_EQ(f.hash, HashStatus::matched);
}

TEST(HevcDamage, MissingSpsNamesTheParameterSet) {
  const auto s = make("plain", "--no-deblock --no-sao --ctu 16");
  if (s.empty()) GTEST_SKIP() << "x265 or ffmpeg not installed";
  const Result r = run(without_nal(s, kNalSps));
  EXPECT_TRUE(r.frames.empty());
  ASSERT_FALSE(r.problems.empty());
  EXPECT_TRUE(any_problem_has(r, "SPS 0")) << r.problems.front().message;
  EXPECT_TRUE(any_problem_has(r, "byte ")) << r.problems.front().message;
  // Nothing decodable and nothing refused as unsupported: the input is not usable.
  EXPECT_NE(r.input_error.find("no decodable HEVC picture"), std::string::npos) << r.input_error;
  EXPECT_NE(r.input_error.find("SPS 0"), std::string::npos) << r.input_error;
}

/// `data` through the GPU's record pipeline schedule with the stages' CPU twins.
Result run_records(const std::vector<std::uint8_t>& data) {
  Result r;
  const Schedule records{.parallel = true, .records = Backend::cpu};
  try {
    r.problems = decode_with(records, {}, data, [&](const Frame& f) { r.frames.push_back(f); });
  } catch (const Error& e) {
    r.input_error = e.what();
  }
  return r;
}

/// Flips 3 random bytes past the first 100 of `s` in each of `trials` copies: every frame a
/// copy outputs has a matching hash or the decode reports a problem, and the thread pool and
/// the record pipeline give the serial decoder's frames and problems. Returns how many copies
/// reported problems.
int corrupt_and_check(const std::vector<std::uint8_t>& s, unsigned seed, int trials) {
  std::mt19937 rng(seed);
  int reported = 0;
  for (int trial = 0; trial < trials; ++trial) {
    auto bad = s;
    for (int k = 0; k < 3; ++k)
      bad[100 + rng() % (bad.size() - 100)] ^= static_cast<std::uint8_t>(1 + rng() % 255);
    const Result r = run(bad);
    for (const auto& f : r.frames)
      EXPECT_TRUE(f.hash == HashStatus::matched || !r.problems.empty()) << "trial " << trial;
    reported += !r.problems.empty();
    for (const Result& p : {run(bad, Backend::cpu_parallel), run_records(bad)}) {
      EXPECT_EQ(p.frames.size(), r.frames.size()) << "trial " << trial;
      for (std::size_t i = 0; i < std::min(p.frames.size(), r.frames.size()); ++i)
        EXPECT_TRUE(p.frames[i].planes[0] == r.frames[i].planes[0]) << "trial " << trial;
      EXPECT_EQ(p.problems.size(), r.problems.size()) << "trial " << trial;
      for (std::size_t i = 0; i < std::min(p.problems.size(), r.problems.size()); ++i)
        EXPECT_EQ(p.problems[i].message, r.problems[i].message) << "trial " << trial;
    }
  }
  return reported;
}

// Corrupted bytes in P and B pictures (motion syntax, references, weighted prediction) never
// crash or give silent damage, and every schedule gives the same frames and problems.
TEST(HevcDamage, CorruptedInterBytesNeverGiveSilentDamage) {
  const auto s = make("inter_b", "--ctu 16 --keyint 8 --bframes 2 --weightp --amp --rect", 8);
  if (s.empty()) GTEST_SKIP() << "x265 or ffmpeg not installed";
  if (!Decoder::filters_available()) GTEST_SKIP() << "inter pictures need the hevc_filter module";
  ASSERT_EQ(run(s).frames.size(), 8u);
  EXPECT_GT(corrupt_and_check(s, 11, 40), 20);
}

// A lost reference picture: the pictures that use it get a grey stand-in (8.3.3), the loss is
// reported by POC, and their hashes are reported as mismatches, never passed off as good.
TEST(HevcDamage, LostReferenceIsReportedAndReplaced) {
  const auto s = make("inter_p", "--ctu 16 --keyint 30 --bframes 0", 5);
  if (s.empty()) GTEST_SKIP() << "x265 or ffmpeg not installed";
  if (!Decoder::filters_available()) GTEST_SKIP() << "inter pictures need the hevc_filter module";
  std::vector<std::uint8_t> lost;  // without the first P picture and its hash
  bool dropped = false, skip_hash = false;
  for (const NalSpan& n : split_annexb(s)) {
    const int type = (s[n.begin] >> 1) & 0x3f;
    if ((type == kNalTrailR && !dropped) || (type == kNalSuffixSei && skip_hash)) {
      skip_hash = !dropped;
      dropped = true;
      continue;
    }
    lost.insert(lost.end(), {0, 0, 0, 1});
    lost.insert(lost.end(), s.begin() + static_cast<std::ptrdiff_t>(n.begin),
                s.begin() + static_cast<std::ptrdiff_t>(n.end));
  }
  ASSERT_TRUE(dropped);
  const Result r = run(lost);
  EXPECT_TRUE(any_problem_has(r, "is missing"))
      << (r.problems.empty() ? "" : r.problems[0].message);
  ASSERT_FALSE(r.frames.empty());
  EXPECT_EQ(r.frames[0].hash, HashStatus::matched);  // the IDR picture
  for (std::size_t i = 1; i < r.frames.size(); ++i)
    EXPECT_EQ(r.frames[i].hash, HashStatus::mismatched) << "frame " << i;
  // The record pipeline predicts from the same grey stand-in.
  const Result q = run_records(lost);
  ASSERT_EQ(q.frames.size(), r.frames.size());
  for (std::size_t i = 0; i < r.frames.size(); ++i)
    for (int c = 0; c < 3; ++c)
      EXPECT_TRUE(q.frames[i].planes[c] == r.frames[i].planes[c]) << "frame " << i;
}

TEST(HevcDamage, Chroma444IsRefused) {
  if (!testing::have_tools()) GTEST_SKIP() << "x265 or ffmpeg not installed";
  const fs::path dir = fs::temp_directory_path() / "sigpu-hevc-damage";
  fs::create_directories(dir);
  const fs::path y4m = dir / "444.y4m", out = dir / "444.hevc";
  ASSERT_EQ(std::system(("ffmpeg -v error -nostdin -y -f lavfi -i testsrc2=size=64x64 -frames:v 1 "
                         "-pix_fmt yuv444p " +
                         y4m.string() + " && x265 --log-level error --input " + y4m.string() +
                         " --keyint 1 -o " + out.string() + " >/dev/null 2>&1")
                            .c_str()),
            0);
  const Result r = run(testing::read_file(out));
  EXPECT_TRUE(r.frames.empty());
  EXPECT_TRUE(any_problem_has(r, "chroma_format_idc 3"));
  EXPECT_NE(r.unsupported.find("chroma_format_idc 3"), std::string::npos) << r.unsupported;
}

// Corrupted slice data never crashes or hangs, and a picture is output only when its hash
// matched: damage is reported, never passed off as good.
TEST(HevcDamage, CorruptedBytesNeverGiveSilentDamage) {
  const auto s = make("plain", "--no-deblock --no-sao --ctu 16");
  if (s.empty()) GTEST_SKIP() << "x265 or ffmpeg not installed";
  EXPECT_GT(corrupt_and_check(s, 7, 60), 30);
}

// An SPS replaced between the slices of one picture (the fuzzer found one turning SAO on there,
// which the picture was not set up for): the later slice is refused by name, the picture is
// dropped, nothing crashes.
TEST(HevcDamage, ParameterSetChangedWithinAPicture) {
  const auto plain = make("slices_nosao", "--no-sao --ctu 16 --slices 2", 1);
  const auto sao = make("slices_sao", "--ctu 16 --slices 2", 1);
  if (plain.empty() || sao.empty()) GTEST_SKIP() << "x265 or ffmpeg not installed";
  // `plain` with the SPS of `from` inserted before its second slice.
  auto with_sps_of = [&](const std::vector<std::uint8_t>& from) {
    std::vector<std::uint8_t> sps_nal, out;
    for (const NalSpan& n : split_annexb(from))
      if (((from[n.begin] >> 1) & 0x3f) == 33)
        sps_nal.assign(from.begin() + n.start_code, from.begin() + n.end);
    int slices = 0;
    for (const NalSpan& n : split_annexb(plain)) {
      if (((plain[n.begin] >> 1) & 0x3f) < 32 && ++slices == 2)
        out.insert(out.end(), sps_nal.begin(), sps_nal.end());
      out.insert(out.end(), plain.begin() + n.start_code, plain.begin() + n.end);
    }
    EXPECT_FALSE(sps_nal.empty());
    EXPECT_EQ(slices, 2);
    return out;
  };
  const Result r = run(with_sps_of(sao));
  EXPECT_TRUE(r.frames.empty());
  EXPECT_TRUE(any_problem_has(r, "PPS or SPS changed within the picture"));
  // The same SPS repeated unchanged is no change.
  const Result same = run(with_sps_of(plain));
  EXPECT_TRUE(same.problems.empty());
  ASSERT_EQ(same.frames.size(), 1u);
  EXPECT_EQ(same.frames[0].hash, HashStatus::matched);
}

// x265 3.5 restarts its chroma CRC at every CTU row (its FrameFilter resets m_crc[1..2] per
// row), so only the luma CRC of its streams follows D.3.19; ours does, for every plane.
TEST(HevcDamage, CrcHashOfX265LumaMatches) {
  const auto s = make("crc", "--no-deblock --no-sao --ctu 16 --hash 2", 1);
  if (s.empty()) GTEST_SKIP() << "x265 or ffmpeg not installed";
  const Result r = run(s);
  ASSERT_EQ(r.frames.size(), 1u);
  EXPECT_EQ(r.frames[0].hash_kind, "CRC");
  ASSERT_EQ(r.problems.size(), 1u);
  EXPECT_NE(r.problems[0].message.find("CRC) mismatch in U, V"), std::string::npos)
      << r.problems[0].message;
}

// DecodeOptions::check_hash off: the same samples, the hash reported present but unchecked, and
// no mismatch problem (the stream's chroma CRCs above do not match), on every backend.
TEST(HevcDamage, HashCheckOffReportsUnchecked) {
  const auto s = make("crc", "--no-deblock --no-sao --ctu 16 --hash 2", 1);
  if (s.empty()) GTEST_SKIP() << "x265 or ffmpeg not installed";
  const Result checked = run(s);
  ASSERT_EQ(checked.frames.size(), 1u);
  for (Backend b : {Backend::cpu, Backend::cpu_parallel}) {
    Decoder dec({.backend = b, .check_hash = false});
    std::vector<Frame> frames;
    dec.decode(s, [&](const Frame& f) { frames.push_back(f); });
    EXPECT_TRUE(dec.problems().empty()) << dec.problems().front().message;
    ASSERT_EQ(frames.size(), 1u);
    EXPECT_EQ(frames[0].hash, HashStatus::unchecked);
    EXPECT_EQ(frames[0].hash_kind, "CRC");
    for (int c = 0; c < 3; ++c) EXPECT_TRUE(frames[0].planes[c] == checked.frames[0].planes[c]);
  }
}

// What the caller's on_frame throws is the caller's: it leaves push() or finish() as it was thrown
// (a sigpu::Error too, e.g. a full disk), is not recorded as a problem of the stream, and no
// later picture is delivered; on every backend. A callback that throws only on the last picture
// (delivered by finish()) shows the same through finish().
TEST(HevcDamage, ExceptionsFromTheCallbackAreTheCallers) {
  const auto s = make("callback", "--no-deblock --no-sao --ctu 16", 6);
  if (s.empty()) GTEST_SKIP() << "x265 or ffmpeg not installed";
  for (Backend b : {Backend::cpu, Backend::cpu_parallel}) {
    for (const bool sigpu_error : {false, true}) {
      SCOPED_TRACE(std::string(b == Backend::cpu ? "cpu" : "cpu-parallel") +
                   (sigpu_error ? ", OutputError" : ", runtime_error"));
      Decoder dec({.backend = b, .unfiltered = !Decoder::filters_available()});
      int delivered = 0;
      const auto on_frame = [&](const Frame&) {
        if (++delivered == 2) {
          if (sigpu_error) throw OutputError("cannot write 'out.yuv': No space left on device");
          throw std::runtime_error("the consumer failed");
        }
      };
      std::string caught;
      try {
        for (std::size_t at = 0; at < s.size(); at += 500)
          dec.push(std::span(s).subspan(at, std::min<std::size_t>(500, s.size() - at)), on_frame);
        dec.finish(on_frame);
      } catch (const OutputError& e) {
        caught = std::string("OutputError: ") + e.what();
      } catch (const Error& e) {
        caught = std::string("another sigpu::Error: ") + e.what();
      } catch (const std::runtime_error& e) {
        caught = std::string("runtime_error: ") + e.what();
      }
      EXPECT_EQ(caught, sigpu_error ? "OutputError: cannot write 'out.yuv': No space left on device"
                                    : "runtime_error: the consumer failed");
      EXPECT_EQ(delivered, 2);
      EXPECT_TRUE(dec.problems().empty()) << dec.problems().front().message;
    }
    // Thrown on the last picture, which finish() outputs.
    Decoder dec({.backend = b, .unfiltered = !Decoder::filters_available()});
    std::size_t total = 0;
    dec.decode(s, [&](const Frame&) { ++total; });
    ASSERT_EQ(total, 6u);
    Decoder last({.backend = b, .unfiltered = !Decoder::filters_available()});
    std::size_t seen = 0;
    const auto on_frame = [&](const Frame&) {
      if (++seen == total) throw std::runtime_error("the last one");
    };
    last.push(s, on_frame);
    EXPECT_THROW(last.finish(on_frame), std::runtime_error);
    EXPECT_TRUE(last.problems().empty());
  }
}

}  // namespace
}  // namespace sigpu::hevc
