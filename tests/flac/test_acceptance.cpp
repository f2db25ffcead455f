// What libFLAC accepts, sigpu accepts, sample for sample; what it refuses, sigpu refuses by
// name: streams of odd shapes built by hand (old numbering, 65536-sample blocks, malformed
// VORBIS_COMMENT, junk before the frames, parameters that change, forged sizes), decoded by every
// CPU backend and the StreamDecoder and compared with libFLAC 1.4's stream decoder.
#include <gtest/gtest.h>

#include <sigpu/flac.hpp>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "core/md5.hpp"
#include "flac/bit_writer.hpp"
#include "support/libflac_oracle.hpp"
#include "support/shell.hpp"
#include "support/var_encoder.hpp"

namespace sigpu::flac {
namespace {

using Bytes = std::vector<std::uint8_t>;
using test::flacbits::encode_constant_frame;
using test::flacbits::encode_frame;

constexpr std::uint32_t kRate = 44100;

/// "fLaC" and a STREAMINFO block (the last block unless more follow), MD5 unset.
Bytes header(std::uint32_t min_bs, std::uint32_t max_bs, std::uint32_t channels, std::uint32_t bps,
             std::uint64_t total, bool last = true, std::uint32_t rate = kRate) {
  test::BitWriter w;
  w.put(0x664C6143, 32);
  w.put(last, 1), w.put(0, 7), w.put(34, 24);
  w.put(min_bs, 16), w.put(max_bs, 16), w.put(0, 24), w.put(0, 24);
  w.put(rate, 20), w.put(channels - 1, 3), w.put(bps - 1, 5), w.put(total, 36);
  w.put(0, 64), w.put(0, 64);
  return w.bytes;
}

/// Two channels of a 16-bit signal, block `bs`, starting at sample `at`.
std::vector<std::vector<std::int64_t>> block(std::uint32_t bs, std::uint64_t at) {
  std::vector<std::vector<std::int64_t>> ch(2, std::vector<std::int64_t>(bs));
  for (std::uint32_t i = 0; i < bs; ++i) {
    const double t = double(at + i);
    ch[0][i] = std::lround(9000 * std::sin(t * 0.031) + 3000 * std::sin(t * 0.17));
    ch[1][i] = std::lround(7000 * std::sin(t * 0.023 + 1) + ((at + i) * 7919 % 301) - 150);
  }
  return ch;
}

void append(Bytes& to, const Bytes& b) {
  to.insert(to.end(), b.begin(), b.end());
}

/// Frames of the given block sizes, numbered `by_sample` (the coded number is the first sample)
/// or by frame, with the blocking-strategy bit `variable`.
Bytes frames(const std::vector<std::uint32_t>& sizes, bool variable, bool by_sample,
             std::uint32_t bps = 16, std::uint32_t rate = kRate) {
  Bytes out;
  std::uint64_t at = 0;
  for (std::size_t f = 0; f < sizes.size(); ++f) {
    append(out, encode_frame(block(sizes[f], at), bps, rate, variable, by_sample ? at : f));
    at += sizes[f];
  }
  return out;
}

struct Got {
  std::string backend;
  Decoded d;
  std::vector<std::int32_t> samples;
};

/// sigpu's decodes of `f` on the CPU backends and through a StreamDecoder cut into small windows.
std::vector<Got> decode_all(const Bytes& f) {
  std::vector<Got> out;
  auto samples = [](const Pcm& p) {
    const auto* s = p.samples_as<std::int32_t>();
    return std::vector<std::int32_t>(s, s + p.samples * p.channels);
  };
  for (Backend b : {Backend::cpu, Backend::cpu_parallel}) {
    Decoded d = decode(f, {.backend = b});
    out.push_back({b == Backend::cpu ? "cpu" : "cpu-parallel", d, samples(d.pcm)});
  }
  std::vector<std::int32_t> streamed;
  StreamDecoder dec(
      {.backend = Backend::cpu_parallel},
      [&](const Pcm& p) {
        const auto s = samples(p);
        streamed.insert(streamed.end(), s.begin(), s.end());
      },
      4096);
  for (std::size_t at = 0; at < f.size(); at += 1000)
    dec.push(
        std::span<const std::uint8_t>(f).subspan(at, std::min<std::size_t>(1000, f.size() - at)));
  out.push_back({"stream", dec.finish(), streamed});
  return out;
}

/// Every backend gives libFLAC's samples, but for `unchecked` (samples per channel); returns the
/// decodes for more checks.
std::vector<Got> expect_libflac(const Bytes& f, const std::string& what,
                                std::pair<std::size_t, std::size_t> unchecked = {0, 0}) {
  const test::OracleDecoded want = test::decode_with_libflac(f);
  EXPECT_GT(want.decoded_samples, 0u) << what;
  std::vector<Got> got = decode_all(f);
  for (const Got& g : got) {
    EXPECT_EQ(g.d.pcm.samples, want.decoded_samples) << what << ", " << g.backend;
    if (g.samples.size() != want.samples.size()) continue;
    std::vector<std::int32_t> have = g.samples;
    for (std::size_t k = unchecked.first * 2; k < unchecked.second * 2; ++k)
      have[k] = want.samples[k];
    const auto miss = std::mismatch(have.begin(), have.end(), want.samples.begin());
    EXPECT_TRUE(miss.first == have.end())
        << what << ", " << g.backend << ": samples differ from value "
        << (miss.first - have.begin());
  }
  return got;
}

bool has_warning(const Decoded& d, const std::string& words) {
  for (const auto& w : d.report.warnings)
    if (w.find(words) != std::string::npos) return true;
  return false;
}

class FlacAcceptance : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  }
};

// flake and libFLAC 1.1 coded variable block sizes with the strategy bit 0 and sample numbers;
// libFLAC reads them so because STREAMINFO's block sizes differ. Read as frame numbers they
// put frames gigabytes apart.
TEST_F(FlacAcceptance, FixedStrategyHeadersWithSampleNumbers) {
  const std::vector<std::uint32_t> sizes{1152, 4608, 576, 2000, 4608, 4608, 1152, 300};
  std::uint64_t total = 0;
  for (auto s : sizes) total += s;
  Bytes f = header(300, 4608, 2, 16, total);
  append(f, frames(sizes, false, true));
  for (const Got& g : expect_libflac(f, "sample numbers"))
    EXPECT_TRUE(g.d.report.ok()) << g.backend << ": " << g.d.report.damage.size() << " damaged";

  // The same STREAMINFO over true frame numbers (frames of one size) stays a fixed stream.
  const std::vector<std::uint32_t> fixed{4608, 4608, 4608, 4608, 300};
  Bytes g = header(300, 4608, 2, 16, 4 * 4608 + 300);
  append(g, frames(fixed, false, false));
  for (const Got& x : expect_libflac(g, "frame numbers, min != max"))
    EXPECT_TRUE(x.d.report.ok()) << x.backend;
}

// Block size code 7 with 0xFFFF codes 65536 samples: libFLAC 1.4.2 decodes it (1.4.3 and RFC 9639
// call it invalid).
// Zero bytes after the last frame keep a CRC-16 register at zero, so the CRC from the last frame
// to the end of the data checks although the frame ends before them: only a decode tells where
// it ends (a shortcut that took the end of the data for its end made the parallel decoder report
// damage the serial one did not; found by fuzz_flac_frames). libFLAC decodes every frame and
// loses sync after them, as after any bytes there (an ID3v1 tag too): every backend reports that
// span as damage costing no samples, and the audio, whole, still checks against its MD5.
TEST_F(FlacAcceptance, BytesAfterTheLastFrame) {
  const std::vector<std::uint32_t> sizes{4096, 4096, 300};
  Bytes f = header(300, 4096, 2, 16, 4096 + 4096 + 300);
  append(f, frames(sizes, false, false));
  {  // STREAMINFO's MD5 (bytes 26..41) of the samples, 16-bit little-endian, interleaved
    Md5 md5;
    for (const std::int32_t s : test::decode_with_libflac(f).samples) {
      const std::uint8_t le[2] = {std::uint8_t(s & 0xFF), std::uint8_t((s >> 8) & 0xFF)};
      md5.update(le, 2);
    }
    const auto digest = md5.finish();
    std::copy(digest.begin(), digest.end(), f.begin() + 26);
  }
  Bytes tag{'T', 'A', 'G'};
  tag.resize(128, 0);
  for (const Bytes& tail : {Bytes(2, 0), Bytes(7, 0), tag}) {
    Bytes padded = f;
    append(padded, tail);
    const std::string what = std::to_string(tail.size()) + " bytes after the last frame";
    EXPECT_FALSE(test::decode_with_libflac(padded).ok()) << what << ": libFLAC accepts them";
    for (const Got& g : expect_libflac(padded, what)) {
      ASSERT_EQ(g.d.report.damage.size(), 1u) << what << ", " << g.backend;
      const Damage& d = g.d.report.damage[0];
      EXPECT_EQ(d.byte_offset, f.size()) << what << ", " << g.backend;
      EXPECT_EQ(d.byte_length, tail.size()) << what << ", " << g.backend;
      EXPECT_EQ(d.samples, 0u) << what << ", " << g.backend;
      EXPECT_EQ(g.d.report.md5, Md5Check::match) << what << ", " << g.backend;
    }
  }
}

TEST_F(FlacAcceptance, BlocksOf65536Samples) {
  const std::vector<std::uint32_t> sizes{65536, 65536, 1000};
  Bytes f = header(65535, 65535, 2, 16, 2 * 65536 + 1000);
  append(f, frames(sizes, false, false));
  for (const Got& g : expect_libflac(f, "65536")) {
    EXPECT_TRUE(g.d.report.ok()) << g.backend;
    EXPECT_EQ(g.d.report.frames, 3u) << g.backend;
  }
}

// libFLAC skips metadata it is not asked for; a VORBIS_COMMENT whose lengths run past the
// block costs the comments, with a warning, not the audio.
TEST_F(FlacAcceptance, MalformedVorbisCommentIsSkipped) {
  const std::vector<std::uint32_t> sizes{4096, 4096, 1234};
  Bytes f = header(4096, 4096, 2, 16, 4096 * 2 + 1234, false);
  const Bytes body{5, 0, 0, 0, 'a', 'b', 'c', 'd', 'e', 1, 0, 0, 0, 0xFF, 0xFF, 0, 0, 'x'};
  append(f, {0x84, 0, 0, std::uint8_t(body.size())});
  append(f, body);
  append(f, frames(sizes, false, false));
  for (const Got& g : expect_libflac(f, "bad VORBIS_COMMENT")) {
    EXPECT_TRUE(g.d.report.ok()) << g.backend;
    EXPECT_TRUE(has_warning(g.d, "VORBIS_COMMENT")) << g.backend;
  }
  EXPECT_EQ(parse_stream(f).vendor, "abcde");
}

Bytes junk(std::size_t n) {
  Bytes j(n);
  for (std::size_t i = 0; i < n; ++i) j[i] = static_cast<std::uint8_t>((i * 37 + 11) % 251);
  return j;
}

// Junk before the first frame: libFLAC loses sync and finds the frames (flac -F decodes them).
// The skipped bytes are damage with their place, so the decode is not passed off as clean.
TEST_F(FlacAcceptance, JunkBeforeTheFirstFrameIsSkippedAndReported) {
  const std::vector<std::uint32_t> sizes{4096, 4096, 4096, 500};
  const Bytes audio = frames(sizes, false, false);
  Bytes meta = header(4096, 4096, 2, 16, 3 * 4096 + 500);

  Bytes after_meta = meta;
  append(after_meta, junk(1000));
  append(after_meta, audio);
  for (const Got& g : expect_libflac(after_meta, "junk after the metadata")) {
    ASSERT_EQ(g.d.report.damage.size(), 1u) << g.backend;
    EXPECT_EQ(g.d.report.damage[0].byte_offset, meta.size()) << g.backend;
    EXPECT_EQ(g.d.report.damage[0].byte_length, 1000u) << g.backend;
  }

  Bytes no_marker = junk(777);
  append(no_marker, audio);
  for (const Got& g : expect_libflac(no_marker, "junk, no marker")) {
    ASSERT_EQ(g.d.report.damage.size(), 1u) << g.backend;
    EXPECT_EQ(g.d.report.damage[0].byte_offset, 0u) << g.backend;
    EXPECT_EQ(g.d.report.damage[0].byte_length, 777u) << g.backend;
  }

  // Junk before the marker costs no audio: a warning names it.
  Bytes before_marker = junk(500);
  append(before_marker, meta);
  append(before_marker, audio);
  for (const Got& g : expect_libflac(before_marker, "junk before the marker")) {
    EXPECT_TRUE(g.d.report.ok()) << g.backend;
    EXPECT_TRUE(has_warning(g.d, "500 bytes of junk at byte 0")) << g.backend;
  }
}

// The CLI decodes a stream that starts with junk, exits 1 (damage) and names the bytes.
TEST_F(FlacAcceptance, CliReportsJunkBeforeTheFirstFrame) {
  if (!std::filesystem::exists(test::kSigpuBinary))
    GTEST_SKIP() << test::kSigpuBinary << " is not built";
  Bytes no_marker = junk(777);
  append(no_marker, frames({4096, 4096, 4096, 500}, false, false));
  const auto dir =
      std::filesystem::temp_directory_path() / ("sigpu_acceptance_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "junk.flac", std::ios::binary)
      .write(reinterpret_cast<const char*>(no_marker.data()), std::streamsize(no_marker.size()));
  const auto r = test::run_sigpu("flac decode -f " + test::quoted((dir / "junk.flac").string()));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("byte 0"), std::string::npos) << r.output;
  EXPECT_TRUE(std::filesystem::exists(dir / "junk.wav"));
  std::filesystem::remove_all(dir);
}

// libFLAC's stream decoder hands on frames whose sample rate or bit depth differs from the
// stream's (the flac tool then stops); sigpu refuses such a stream by name and byte.
TEST_F(FlacAcceptance, ParametersThatChangeMidStreamAreRefused) {
  Bytes rate = header(4096, 4096, 2, 16, 4 * 4096, true);
  const Bytes first = frames({4096, 4096}, false, false);
  append(rate, first);
  append(rate, encode_frame(block(4096, 8192), 16, 48000, false, 2));
  append(rate, encode_frame(block(4096, 12288), 16, 48000, false, 3));
  Bytes bps = header(4096, 4096, 2, 16, 4 * 4096, true);
  append(bps, first);
  append(bps, encode_frame(block(4096, 8192), 24, kRate, false, 2));
  append(bps, encode_frame(block(4096, 12288), 24, kRate, false, 3));
  const std::uint64_t change_at = header(4096, 4096, 2, 16, 0).size() + first.size();
  for (const auto& [what, f] : {std::pair{"sample rate", rate}, std::pair{"bit depth", bps}}) {
    const test::OracleDecoded lib = test::decode_with_libflac(f);
    EXPECT_EQ(lib.frames, 4u) << what;  // libFLAC decodes every frame
    for (Backend b : {Backend::cpu, Backend::cpu_parallel}) {
      try {
        decode(f, {.backend = b});
        ADD_FAILURE() << what << ": no error";
      } catch (const Error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find(what), std::string::npos) << m;
        EXPECT_NE(m.find("byte " + std::to_string(change_at)), std::string::npos) << m;
      }
    }
  }
}

struct Child {
  int code = -1;
  long max_rss_kb = 0;
  double seconds = 0;
};

/// Runs the CLI in a child process and measures its peak memory.
Child run_measured(const std::vector<std::string>& args) {
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    std::vector<char*> argv{const_cast<char*>(test::kSigpuBinary.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::freopen("/dev/null", "w", stdout);
    std::freopen("/dev/null", "w", stderr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  Child c;
  int status = 0;
  rusage ru{};
  wait4(pid, &status, 0, &ru);
  c.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  c.max_rss_kb = ru.ru_maxrss;
  c.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return c;
}

// No number read from the input sizes memory beyond what the input's length justifies: forged
// totals, block and metadata sizes and frame numbers that jump to the end of their range.
TEST_F(FlacAcceptance, ForgedSizesDoNotSizeMemory) {
  const std::vector<std::uint32_t> sizes{4096, 4096, 4096, 500};
  std::vector<std::pair<std::string, Bytes>> files;
  {
    Bytes f = header(65535, 65535, 8, 32, (std::uint64_t{1} << 36) - 1);
    append(f, frames(sizes, false, false));
    files.push_back({"total 2^36-1", f});
  }
  {
    Bytes f = header(4096, 4096, 2, 16, 0, false);
    append(f, {0x01, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0});  // PADDING of 16 MiB, 4 bytes present
    files.push_back({"metadata length", f});
  }
  {
    Bytes f = header(4096, 4096, 2, 16, 0);
    append(f, frames({4096, 4096}, false, false));
    append(f, encode_frame(block(4096, 8192), 16, kRate, false, 0x7FFFFFF0));
    append(f, encode_frame(block(4096, 12288), 16, kRate, false, 0x7FFFFFF1));
    files.push_back({"frame number 2^31-1", f});
  }
  {
    Bytes f = header(16, 4096, 2, 16, 0);
    append(f, frames({4096, 4096}, true, true));
    append(f, encode_frame(block(4096, 8192), 16, kRate, true, (std::uint64_t{1} << 36) - 4097));
    files.push_back({"sample number 2^36", f});
  }
  {
    Bytes f = header(300, 4608, 2, 16, 0);
    std::vector<std::uint32_t> many(200, 4608);
    append(f, frames(many, false, true));
    files.push_back({"sample numbers, fixed strategy", f});
  }
  // Jumps in the numbering decode as libFLAC decodes them: the silence it adds is bounded the
  // same way (50 blocks here). libFLAC 1.4.2 also silences the frame after the jump (its padding
  // overwrote the decoded frame; later versions fixed that): that frame is checked here.
  for (const std::size_t k : {2, 3}) {
    const auto& [what, f] = files[k];
    const std::size_t jump = 8192 + 50 * 4096;
    for (const Got& g : expect_libflac(f, what, {jump, jump + 4096})) {
      ASSERT_GE(g.samples.size(), 2 * (jump + 4096)) << what << ", " << g.backend;
      EXPECT_TRUE(std::all_of(g.samples.begin() + 2 * 8192, g.samples.begin() + 2 * jump,
                              [](std::int32_t v) { return v == 0; }))
          << what << ", " << g.backend;
      const auto want = block(4096, 8192);
      for (std::size_t i = 0; i < 4096; ++i)
        ASSERT_EQ(g.samples[2 * (jump + i)], want[0][i]) << what << ", " << g.backend << " " << i;
    }
  }
  expect_libflac(files[4].second, files[4].first);
  const auto dir =
      std::filesystem::temp_directory_path() / ("sigpu_forged_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const auto& [what, f] : files) {
    const auto path = (dir / "in.flac").string();
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(f.data()), std::streamsize(f.size()));
    const long bound_kb = 200 * 1024 + long(f.size()) * 100 / 1024;
    for (const char* backend : {"cpu", "cpu-parallel"})
      for (const char* verb : {"decode", "test"}) {
        std::vector<std::string> args{"flac", verb, "--backend", backend, path};
        if (std::string(verb) == "decode")
          args.insert(args.end(), {"-f", "-o", (dir / "out.wav").string()});
        const Child c = run_measured(args);
        EXPECT_GE(c.code, 0) << what << ", " << verb << " " << backend << ": crashed";
        EXPECT_LT(c.max_rss_kb, bound_kb) << what << ", " << verb << " " << backend;
        EXPECT_LT(c.seconds, 20) << what << ", " << verb << " " << backend;
      }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace sigpu::flac
