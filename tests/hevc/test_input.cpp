// Streaming input and containers: Decoder::push in any split, bounded memory on junk, the
// verdicts of finish() on inputs with nothing decodable, and hevc::Source on raw, MP4,
// Matroska and MPEG-TS (from files and pipes), all decoding to the raw stream's pictures.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include <sigpu/hevc.hpp>

#include "hevc/length_prefixed.hpp"
#include "hevc/nal.hpp"
#include "hevc/nal_assembler.hpp"
#include "hevc/streams.hpp"

namespace sigpu::hevc {
namespace {

namespace fs = std::filesystem;

struct Decoded {
  std::vector<std::vector<std::uint16_t>> luma, chroma;
  std::vector<HashStatus> hashes;
  std::size_t problems = 0;
  bool operator==(const Decoded&) const = default;
};

std::function<void(const Frame&)> collect(Decoded& d) {
  return [&d](const Frame& f) {
    d.luma.push_back(f.planes[0]);
    d.chroma.push_back(f.planes[1]);
    d.chroma.back().insert(d.chroma.back().end(), f.planes[2].begin(), f.planes[2].end());
    d.hashes.push_back(f.hash);
  };
}

Decoded decode_source(Source& src) {
  Decoded d;
  Decoder dec;
  const auto on_frame = collect(d);
  while (auto chunk = src.read()) dec.push(chunk, on_frame);
  dec.finish(on_frame);
  d.problems = dec.problems().size() + src.problems().size();
  return d;
}

bool sh(const std::string& cmd) {
  return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0;
}

void write_file(const fs::path& p, const std::vector<std::uint8_t>& b) {
  std::ofstream(p, std::ios::binary)
      .write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// A 64x64 all-intra stream of 3 pictures and its copies in containers, made once.
class HevcInput : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!testing::have_tools()) return;
    dir_ = fs::temp_directory_path() / ("sigpu-hevc-input-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    const fs::path raw = dir_ / "s.hevc";
    if (!testing::encode("testsrc2=size=64x64:rate=25", 3, 8, "--ctu 16", raw)) return;
    for (const char* ext : {"mp4", "mkv", "ts"})
      if (!sh("ffmpeg -hide_banner -nostdin -y -i " + raw.string() + " -c copy " +
              (dir_ / "s.").string() + ext))
        return;
    ready_ = true;
  }
  static void TearDownTestSuite() {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  void SetUp() override {
    if (!ready_) GTEST_SKIP() << "x265 or ffmpeg not installed";
  }
  static fs::path path(const std::string& name) { return dir_ / name; }

  static inline fs::path dir_;
  static inline bool ready_ = false;
};

TEST_F(HevcInput, ContainersDecodeToTheRawStreamsPictures) {
  Source raw_src = Source::open(path("s.hevc").string());
  EXPECT_EQ(raw_src.format(), "Annex B");
  const Decoded raw = decode_source(raw_src);
  ASSERT_EQ(raw.luma.size(), 3u);
  EXPECT_EQ(raw.problems, 0u);
  for (HashStatus h : raw.hashes) EXPECT_EQ(h, HashStatus::matched);
  for (const char* name : {"s.mp4", "s.mkv", "s.ts"}) {
    Source src = Source::open(path(name).string());
    EXPECT_NE(src.format(), "Annex B") << name;
    EXPECT_TRUE(decode_source(src) == raw) << name << " (" << src.format() << ")";
  }
}

TEST_F(HevcInput, PushedOneByteAtATimeEqualsWholeDecode) {
  const auto bytes = testing::read_file(path("s.hevc"));
  Decoded whole, pieces, uneven;
  Decoder a;
  a.decode(bytes, collect(whole));
  ASSERT_EQ(whole.luma.size(), 3u);
  Decoder b;
  const auto on_b = collect(pieces);
  for (std::size_t i = 0; i < bytes.size(); ++i) b.push({&bytes[i], 1}, on_b);
  b.finish(on_b);
  EXPECT_TRUE(pieces == whole);
  EXPECT_EQ(b.problems().size(), a.problems().size());
  // Random splits, on the parallel backend, twice on one decoder (finish starts a new stream).
  Decoder c({.backend = Backend::cpu_parallel});
  const auto on_c = collect(uneven);
  std::mt19937 rng(7);
  for (int round = 0; round < 2; ++round) {
    for (std::size_t at = 0; at < bytes.size();) {
      const std::size_t n = std::min<std::size_t>(rng() % 700, bytes.size() - at);
      c.push({bytes.data() + at, n}, on_c);
      at += n;
    }
    c.finish(on_c);
  }
  ASSERT_EQ(uneven.luma.size(), 6u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(uneven.luma[i], whole.luma[i]);
    EXPECT_EQ(uneven.luma[i + 3], whole.luma[i]);
  }
}

TEST_F(HevcInput, SummarizesContainers) {
  Source src = Source::open(path("s.mkv").string());
  const StreamSummary s = summarize(src);
  EXPECT_EQ(s.pictures, 3u);
  EXPECT_TRUE(s.problems.empty());
}

// MPEG-TS is read in one pass from a pipe; MP4 is refused there, naming why.
TEST_F(HevcInput, PipesCarryMpegTsButNotMp4) {
  for (const char* name : {"s.ts", "s.mp4"}) {
    const auto bytes = testing::read_file(path(name));
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    std::thread writer([&] {
      for (std::size_t at = 0; at < bytes.size();) {
        const ssize_t n = ::write(fds[1], bytes.data() + at, bytes.size() - at);
        if (n <= 0) break;
        at += static_cast<std::size_t>(n);
      }
      ::close(fds[1]);
    });
    if (std::string(name) == "s.ts") {
      Source src = Source::from_fd(fds[0], "pipe");
      EXPECT_EQ(decode_source(src).luma.size(), 3u);
    } else {
      try {
        Source::from_fd(fds[0], "pipe");
        ADD_FAILURE() << "MP4 from a pipe was accepted";
      } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("seekable"), std::string::npos) << e.what();
      }
      std::vector<char> drain(1 << 16);
      while (::read(fds[0], drain.data(), drain.size()) > 0) {
      }
    }
    writer.join();
    ::close(fds[0]);
  }
}

TEST_F(HevcInput, H264InMp4IsRefusedNamingTheCodec) {
  const fs::path mp4 = path("h264.mp4");
  const std::string src =
      "ffmpeg -hide_banner -nostdin -y -f lavfi -i testsrc2=size=64x64 "
      "-frames:v 2 -pix_fmt yuv420p -c:v ";
  std::string codec = "h264";
  if (!sh(src + "libx264 " + mp4.string())) {
    codec = "mpeg4";
    ASSERT_TRUE(sh(src + "mpeg4 " + mp4.string()));
  }
  try {
    Source::open(mp4.string());
    FAIL() << "a " << codec << " track was accepted";
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("the video track is " + codec + ", not HEVC"),
              std::string::npos)
        << e.what();
  }
}

// P and B slices without the I pictures they follow: every picture precedes the first IRAP
// picture and is skipped, which finish() says instead of reporting success with no pictures.
TEST_F(HevcInput, OnlyInterPicturesIsNoDecodablePicture) {
  const fs::path inter = path("inter.hevc");
  ASSERT_TRUE(testing::encode("testsrc2=size=64x64:rate=25", 4, 8,
                              "--ctu 16 --keyint 30 "
                              "--min-keyint 30 --bframes 1",
                              inter));
  const auto bytes = testing::read_file(inter);
  std::vector<std::uint8_t> cut;
  for (const NalSpan& n : split_annexb(bytes)) {
    const int type = n.end > n.begin ? (bytes[n.begin] >> 1) & 0x3f : -1;
    if (type >= kNalBlaWLp && type <= kNalRsvIrap23) continue;
    cut.insert(cut.end(), {0, 0, 0, 1});
    cut.insert(cut.end(), bytes.begin() + n.begin, bytes.begin() + n.end);
  }
  Decoder dec;
  try {
    dec.decode(cut, [](const Frame&) {});
    FAIL() << "no picture and no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("before the first IRAP"), std::string::npos) << e.what();
  }
}

template <typename E>
std::string thrown(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

TEST(HevcInputJunk, EmptyInputIsAnInputError) {
  Decoder dec;
  EXPECT_EQ(thrown<InputError>([&] { dec.decode({}, [](const Frame&) {}); }), "empty input");
  const fs::path empty = fs::temp_directory_path() / ("sigpu-empty-" + std::to_string(::getpid()));
  std::ofstream{empty};
  EXPECT_EQ(thrown<InputError>([&] {
              Source src = Source::open(empty.string());
              decode_source(src);
            }),
            "empty input");
  fs::remove(empty);
  EXPECT_NE(thrown<InputError>([] { summarize(std::span<const std::uint8_t>{}); }).find("empty"),
            std::string::npos);
}

TEST(HevcInputJunk, RandomBytesAreAnInputError) {
  std::vector<std::uint8_t> junk(1 << 17);
  std::mt19937 rng(1);
  for (auto& b : junk) b = static_cast<std::uint8_t>(rng() | 1);  // no start code in it
  Decoder dec;
  const std::string m = thrown<InputError>([&] { dec.decode(junk, [](const Frame&) {}); });
  EXPECT_NE(m.find("no HEVC NAL units found in 131072 bytes"), std::string::npos) << m;
  // And through a file, where libavformat (when built in) gets to look at its first bytes: no
  // container's signature, so it is read as Annex B (without libavformat's probe, which logs
  // its guesses) and the decoder says the same.
  const fs::path p = fs::temp_directory_path() / ("sigpu-junk-" + std::to_string(::getpid()));
  write_file(p, junk);
  std::string format;
  const std::string f = thrown<InputError>([&] {
    Source src = Source::open(p.string());
    format = src.format();
    decode_source(src);
  });
  EXPECT_EQ(format, "Annex B");
  EXPECT_NE(f.find("no HEVC NAL units found"), std::string::npos) << f;
  fs::remove(p);
  // Start codes among junk: NAL units, but none that decodes.
  for (std::size_t i = 0; i < junk.size(); i += 1000) junk[i] = junk[i + 1] = 0, junk[i + 2] = 1;
  const std::string g = thrown<InputError>([&] { dec.decode(junk, [](const Frame&) {}); });
  EXPECT_NE(g.find("no decodable HEVC picture"), std::string::npos) << g;
}

TEST(HevcInputJunk, ZerosFailFastWithBoundedMemory) {
  const std::vector<std::uint8_t> zeros(1 << 20);
  // Leading zeros: counted, never held; past the bound (here the 64x64 limit's) an error.
  Decoder small({.max_luma_samples = 64 * 64});
  std::size_t pushed = 0;
  const std::string m = thrown<InputError>([&] {
    for (int i = 0; i < 64; ++i, pushed += zeros.size()) small.push(zeros, [](const Frame&) {});
  });
  EXPECT_NE(m.find("no start code"), std::string::npos) << m;
  EXPECT_LE(pushed, std::size_t{2} << 20);
  // With the default limit, 64 MB of zeros end in finish(): no NAL unit.
  Decoder dflt;
  const std::string d = thrown<InputError>([&] {
    for (int i = 0; i < 64; ++i) dflt.push(zeros, [](const Frame&) {});
    dflt.finish([](const Frame&) {});
  });
  EXPECT_NE(d.find("no HEVC NAL units found in 67108864 bytes"), std::string::npos) << d;
  // After a start code: a NAL unit of zeros holds no memory, and junk is refused at the bound.
  NalAssembler a(max_nal_bytes_for(35'651'584));
  const std::uint8_t start[] = {0, 0, 1, 0x40, 0x01};
  a.push(start, [](auto, std::size_t) {});
  for (int i = 0; i < 64; ++i) a.push(zeros, [](auto, std::size_t) {});
  EXPECT_LT(a.held(), 4096u);
  std::vector<std::uint8_t> ones(1 << 20, 0xff);
  NalAssembler b(max_nal_bytes_for(64 * 64));
  b.push(start, [](auto, std::size_t) {});
  const std::string n = thrown<InputError>([&] {
    for (int i = 0; i < 64; ++i) b.push(ones, [](auto, std::size_t) {});
  });
  EXPECT_NE(n.find("NAL unit at byte 0: longer than"), std::string::npos) << n;
  EXPECT_LE(b.held(), max_nal_bytes_for(64 * 64) * 2);
}

TEST(HevcInputJunk, StartCodesCutAcrossPushes) {
  // 00 00 00 01 | NAL | 00 00 01 | NAL | trailing zeros, pushed in every split of two pieces.
  const std::vector<std::uint8_t> s = {0, 0, 0, 1, 0x40, 0x01, 7, 0, 0, 1, 0x42, 0x01, 9, 0, 0};
  for (std::size_t cut = 0; cut <= s.size(); ++cut) {
    std::vector<std::pair<std::vector<std::uint8_t>, std::size_t>> nals;
    NalAssembler a(1 << 20);
    const auto on = [&](std::span<const std::uint8_t> n, std::size_t at) {
      nals.emplace_back(std::vector<std::uint8_t>(n.begin(), n.end()), at);
    };
    a.push(std::span(s).first(cut), on);
    a.push(std::span(s).subspan(cut), on);
    a.finish(on);
    ASSERT_EQ(nals.size(), 2u) << cut;
    EXPECT_EQ(nals[0].first, (std::vector<std::uint8_t>{0x40, 0x01, 7})) << cut;
    EXPECT_EQ(nals[0].second, 0u);
    EXPECT_EQ(nals[1].first, (std::vector<std::uint8_t>{0x42, 0x01, 9})) << cut;
    EXPECT_EQ(nals[1].second, 7u);
  }
}

TEST(HevcInputJunk, HvccAndLengthPrefixesAreBoundsChecked) {
  // 23 bytes of configuration (version 1, 4-byte lengths, one array), then the array: VPS,
  // one NAL unit of 3 bytes. Built whole: GCC 12 misreads an insert after a sized vector.
  std::vector<std::uint8_t> rec = {1, 0, 0, 0, 0, 0, 0, 0,    0, 0, 0, 0, 0,    0,    0,   0,
                                   0, 0, 0, 0, 0, 3, 1, 0x20, 0, 1, 0, 3, 0x40, 0x01, 0x0c};
  EXPECT_TRUE(is_hvcc(rec));
  const Hvcc h = parse_hvcc(rec);
  EXPECT_EQ(h.length_size, 4);
  EXPECT_EQ(h.annexb, (std::vector<std::uint8_t>{0, 0, 0, 1, 0x40, 0x01, 0x0c}));
  rec.pop_back();
  EXPECT_NE(thrown<InputError>([&] { parse_hvcc(rec); }).find("runs past"), std::string::npos);
  const std::vector<std::uint8_t> sample = {0, 0, 0, 2, 0x26, 0x01, 0, 0, 0, 9, 1};
  std::vector<std::uint8_t> out;
  const std::string bad = append_annexb(sample, 4, out);
  EXPECT_NE(bad.find("runs past"), std::string::npos) << bad;
  EXPECT_EQ(out, (std::vector<std::uint8_t>{0, 0, 0, 1, 0x26, 0x01}));
}

TEST(HevcInputJunk, MissingFilesAndDirectoriesAreInputErrors) {
  EXPECT_NE(thrown<InputError>([] { Source::open("/nonexistent/x.hevc"); }).find("cannot open"),
            std::string::npos);
  EXPECT_NE(thrown<InputError>([] { Source::open("/tmp"); }).find("is a directory"),
            std::string::npos);
}

}  // namespace
}  // namespace sigpu::hevc
