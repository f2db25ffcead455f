// Clips read on demand: a file-backed clip decodes exactly as the same frames held in memory
// and reads its file at decode time; raw streams resynchronise past bad size fields and
// report the skipped bytes; junk, empty input and pipes are refused or read as documented.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include <sigpu/prores.hpp>

#include "prores/clips.hpp"

namespace sigpu::prores {
namespace {

namespace fs = std::filesystem;

void write_file(const fs::path& p, std::span<const std::uint8_t> bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

void put_be32(std::vector<std::uint8_t>& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b[at + i] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
}

class ProresClipIo : public ::testing::Test {
 protected:
  void SetUp() override {
#ifndef SIGPU_PRORES_HAVE_MOV
    GTEST_SKIP() << "built without libavformat";
#endif
    const testing::ClipSpec spec{"io_64x32", "testsrc2=size=64x32:rate=25", 5,
                                 "-c:v prores_ks -profile:v 2"};
    mov_ = testing::clip_path(spec);
    if (mov_.empty()) GTEST_SKIP() << "ffmpeg not available";
    dir_ = fs::temp_directory_path() / ("sigpu-prores-io-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    const Clip clip = open_file(mov_.string());
    ASSERT_EQ(clip.frames.size(), 5u);
    for (std::size_t i = 0; i < 5; ++i) {
      offsets_.push_back(raw_.size());
      const auto f = testing::frame_bytes(clip, i);
      raw_.insert(raw_.end(), f.begin(), f.end());
    }
    clean_ = decode(read_raw(raw_, "clean"), {.backend = Backend::cpu});
    ASSERT_TRUE(clean_.report.ok());
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  fs::path file(const std::string& name, std::span<const std::uint8_t> bytes) const {
    const fs::path p = dir_ / name;
    write_file(p, bytes);
    return p;
  }
  fs::path mov_, dir_;
  std::vector<std::uint8_t> raw_;
  std::vector<std::size_t> offsets_;
  Decoded clean_;
};

TEST_F(ProresClipIo, FileBackedDecodesAsInMemory) {
  for (const fs::path& p : {mov_, file("clip.icpf", raw_)}) {
    const Clip clip = open_file(p.string());
    EXPECT_FALSE(clip.in_memory()) << p;
    EXPECT_EQ(clip.coded_bytes(), raw_.size());
    ASSERT_EQ(clip.frames.size(), 5u);
    for (Backend b : {Backend::cpu, Backend::cpu_parallel}) {
      // In batches of two, as a long clip would be decoded.
      for (std::size_t i = 0; i < 5; i += 2) {
        const Decoded d = decode(clip, {.backend = b}, i, 2);
        EXPECT_TRUE(d.report.ok());
        for (std::size_t j = 0; j < d.frames.size(); ++j)
          EXPECT_TRUE(d.frames[j].samples == clean_.frames[i + j].samples) << p << " " << i + j;
      }
    }
  }
  EXPECT_TRUE(read_raw(raw_).in_memory());
}

TEST_F(ProresClipIo, FramesAreReadFromTheFileWhenDecoded) {
  // Bytes changed after opening are what decode() sees: the clip holds no frame bytes.
  auto bytes = raw_;
  const fs::path p = file("later.icpf", bytes);
  const Clip clip = open_file(p.string());
  bytes[offsets_[3] + 5] = 'X';  // frame 3's 'icpf' tag
  write_file(p, bytes);
  const Decoded d = decode(clip, {.backend = Backend::cpu});
  ASSERT_EQ(d.report.damage.size(), 1u);
  EXPECT_EQ(d.report.damage[0].frame, 3u);
  fs::resize_file(p, offsets_[4] + 10);
  EXPECT_TRUE(decode(clip, {.backend = Backend::cpu}, 0, 3).frames.size() == 3u);
  try {
    decode(clip, {.backend = Backend::cpu}, 4, 1);
    FAIL() << "a file cut after opening read as whole";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("frame 4"), std::string::npos) << e.what();
  }
}

TEST_F(ProresClipIo, BadFirstSizeFieldSkipsToTheNextFrame) {
  const std::uint32_t frame0 = static_cast<std::uint32_t>(offsets_[1]);
  for (std::uint32_t size : {0u, 7u, 100u, frame0 + 1, frame0 - 1, 0xFFFFFFFFu}) {
    auto bytes = raw_;
    put_be32(bytes, 0, size);
    const Clip clip = open_file(file("bad0.icpf", bytes).string());
    ASSERT_EQ(clip.frames.size(), 4u) << size;
    ASSERT_EQ(clip.skipped.size(), 1u) << size;
    EXPECT_EQ(clip.skipped[0].offset, 0u);
    EXPECT_EQ(clip.skipped[0].bytes, frame0);
    const Decoded d = decode(clip, {.backend = Backend::cpu});
    ASSERT_EQ(d.frames.size(), 4u);
    for (std::size_t i = 0; i < 4; ++i)
      EXPECT_TRUE(d.frames[i].samples == clean_.frames[i + 1].samples) << size << " " << i;
    ASSERT_EQ(d.report.damage.size(), 1u) << size;
    const std::string m = d.report.damage[0].message();
    EXPECT_NE(m.find("bytes 0.." + std::to_string(frame0)), std::string::npos) << m;
    EXPECT_NE(m.find("size field " + std::to_string(size)), std::string::npos) << m;
    EXPECT_THROW(decode(clip, {.backend = Backend::cpu, .stop_on_damage = true}), Error);
  }
}

TEST_F(ProresClipIo, SkippedBytesAreReportedOnceAcrossCalls) {
  auto bytes = raw_;
  put_be32(bytes, offsets_[2], 3);  // frame 2 lost
  const std::vector<std::uint8_t> junk = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  bytes.insert(bytes.end(), junk.begin(), junk.end());
  const Clip clip = open_file(file("bad2.icpf", bytes).string());
  ASSERT_EQ(clip.frames.size(), 4u);
  std::vector<Damage> damage;
  std::size_t frames = 0;
  for (std::size_t i = 0; i < clip.frames.size(); ++i) {
    const Decoded d = decode(clip, {.backend = Backend::cpu}, i, 1);
    frames += d.frames.size();
    damage.insert(damage.end(), d.report.damage.begin(), d.report.damage.end());
  }
  EXPECT_EQ(frames, 4u);
  ASSERT_EQ(damage.size(), 2u);
  EXPECT_EQ(damage[0].offset, offsets_[2]);
  EXPECT_EQ(damage[0].bytes, offsets_[3] - offsets_[2]);
  EXPECT_EQ(damage[0].frame, 2u);  // the frame after the gap
  EXPECT_EQ(damage[1].offset, raw_.size());
  EXPECT_EQ(damage[1].bytes, junk.size());
}

TEST_F(ProresClipIo, JunkAndEmptyInputAreInputErrors) {
  std::mt19937 rng(7);
  std::vector<std::uint8_t> junk(4096);
  for (auto& b : junk) b = static_cast<std::uint8_t>(rng());
  EXPECT_THROW(open_file(file("junk.bin", junk).string()), InputError);
  EXPECT_THROW(read_raw(junk, "junk"), InputError);
  EXPECT_THROW(open_file(file("empty.icpf", {}).string()), InputError);
  EXPECT_THROW(read_raw({}, "empty"), InputError);
  EXPECT_THROW(open_file(dir_.string()), InputError);
  EXPECT_THROW(open_file((dir_ / "missing.mov").string()), InputError);
  // A size field alone and nothing after it.
  std::vector<std::uint8_t> box(raw_.begin(), raw_.begin() + 8);
  put_be32(box, 0, 3);
  EXPECT_THROW(read_raw(box, "box"), InputError);
  try {
    open_file(file("junk2.bin", junk).string());
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no ProRes frame found"), std::string::npos) << e.what();
  }
}

// Writes `bytes` into a pipe from another thread; returns the read end.
struct Pipe {
  explicit Pipe(std::vector<std::uint8_t> bytes) {
    ::signal(SIGPIPE, SIG_IGN);  // a reader that stops early must not end the test process
    int fds[2];
    if (::pipe(fds) != 0) throw std::runtime_error("pipe");
    read_fd = fds[0];
    writer = std::thread([fd = fds[1], b = std::move(bytes)] {
      std::size_t done = 0;
      while (done < b.size()) {
        const ssize_t n =
            ::write(fd, b.data() + done, std::min<std::size_t>(4096, b.size() - done));
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
      }
      ::close(fd);
    });
  }
  ~Pipe() {
    ::close(read_fd);
    writer.join();
  }
  int read_fd = -1;
  std::thread writer;
};

TEST_F(ProresClipIo, RawStreamReadsAPipeInOnePass) {
  auto bytes = raw_;
  put_be32(bytes, 0, 0xFFFFFFFFu);  // frame 0 lost
  Pipe pipe(bytes);
  RawStream stream(pipe.read_fd, "pipe");
  std::vector<Frame> frames;
  std::vector<Damage> damage;
  for (;;) {
    const Clip c = stream.next(3);
    EXPECT_TRUE(c.in_memory());
    EXPECT_EQ(c.first_frame, frames.size());
    const Decoded d = decode(c, {.backend = Backend::cpu});
    damage.insert(damage.end(), d.report.damage.begin(), d.report.damage.end());
    for (const Frame& f : d.frames) frames.push_back(f);
    if (c.frames.empty()) break;
  }
  ASSERT_EQ(frames.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i)
    EXPECT_TRUE(frames[i].samples == clean_.frames[i + 1].samples) << i;
  ASSERT_EQ(damage.size(), 1u);
  EXPECT_EQ(damage[0].offset, 0u);
  EXPECT_EQ(damage[0].bytes, offsets_[1]);
}

TEST_F(ProresClipIo, RawStreamRefusesMovEmptyAndJunk) {
  {
    Pipe pipe(testing::read_file(mov_));
    EXPECT_THROW(RawStream(pipe.read_fd, "mov"), UnsupportedError);
  }
  {
    Pipe pipe({});
    EXPECT_THROW(RawStream(pipe.read_fd, "empty"), InputError);
  }
  {
    Pipe pipe(std::vector<std::uint8_t>(100000, 0x42));
    RawStream stream(pipe.read_fd, "junk");
    EXPECT_THROW(stream.next(4), InputError);
  }
}

}  // namespace
}  // namespace sigpu::prores
