// End-to-end: the built `sigpu` binary on files made by the reference `flac` tool, its output
// compared with what `flac -d` writes for the same input.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include <sigpu/core.hpp>

#include "support/shell.hpp"

namespace {

namespace fs = std::filesystem;

using sigpu::test::quoted;
using Result = sigpu::test::CommandResult;
const std::string& kSigpu = sigpu::test::kSigpuBinary;

Result run(const std::string& command) {
  return sigpu::test::run_command(command);
}
Result sigpu(const std::string& args) {
  return sigpu::test::run_sigpu(args);
}

std::vector<std::uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void write_all(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

/// The body of a RIFF chunk (`id`), found by walking the chunk list.
std::vector<std::uint8_t> chunk(const std::vector<std::uint8_t>& wav, const std::string& id) {
  auto le32 = [&](std::size_t at) {
    return std::uint32_t(wav[at]) | wav[at + 1] << 8 | wav[at + 2] << 16 |
           std::uint32_t(wav[at + 3]) << 24;
  };
  for (std::size_t at = 12; at + 8 <= wav.size();) {
    const std::uint32_t size = le32(at + 4);
    if (std::string(wav.begin() + at, wav.begin() + at + 4) == id) {
      const std::size_t end = std::min<std::size_t>(wav.size(), at + 8 + std::size_t(size));
      return {wav.begin() + at + 8, wav.begin() + end};
    }
    at += 8 + std::size_t(size) + (size & 1);
  }
  ADD_FAILURE() << "no '" << id << "' chunk";
  return {};
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kSigpu)) GTEST_SKIP() << kSigpu << " is not built";
    if (run("flac --version").code != 0) GTEST_SKIP() << "the flac tool is not installed";
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("sigpu_cli_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  /// A few seconds of chords plus a little noise, as little-endian signed raw PCM at the
  /// container width, encoded by `flac`. Returns the .flac path; the .raw stays beside it.
  std::string make_flac(const std::string& name, unsigned channels, unsigned bits,
                        double seconds = 3.0) {
    const unsigned bytes = bits / 8, rate = 44100;
    const std::size_t frames = std::size_t(seconds * rate);
    const double full = std::ldexp(1.0, int(bits) - 1) - 1;
    std::vector<std::uint8_t> raw;
    raw.reserve(frames * channels * bytes);
    std::uint32_t noise = 12345;
    for (std::size_t i = 0; i < frames; ++i) {
      for (unsigned c = 0; c < channels; ++c) {
        const double t = double(i) / rate;
        noise = noise * 1664525u + 1013904223u;
        double x = 0.3 * std::sin(2 * M_PI * (220 + 55 * c) * t) +
                   0.2 * std::sin(2 * M_PI * 330 * t + c) +
                   0.01 * (double(noise >> 8) / (1 << 24) - 0.5);
        const auto v = std::int64_t(std::llround(x * full));
        for (unsigned b = 0; b < bytes; ++b) raw.push_back(std::uint8_t(v >> (8 * b)));
      }
    }
    write_all(path(name + ".raw"), raw);
    const auto r = run("flac -s -f --force-raw-format --endian=little --sign=signed --channels=" +
                       std::to_string(channels) + " --bps=" + std::to_string(bits) +
                       " --sample-rate=44100 -o " + quoted(path(name + ".flac")) + " " +
                       quoted(path(name + ".raw")));
    EXPECT_EQ(r.code, 0) << r.output;
    return path(name + ".flac");
  }

  fs::path dir_;
};

TEST_F(Cli, InfoPrintsStreamInfoAndBlocks) {
  const auto f = make_flac("a", 2, 16);
  const auto r = sigpu("flac info " + quoted(f));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("44100 Hz"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("bits per sample   16"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("132300"), std::string::npos) << "total samples\n" << r.output;
  EXPECT_NE(r.output.find("frames            33"), std::string::npos) << "4096-sample blocks\n"
                                                                      << r.output;
  EXPECT_NE(r.output.find("STREAMINFO"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("VORBIS_COMMENT"), std::string::npos) << r.output;
  const auto md5 = run("metaflac --show-md5sum " + quoted(f));
  if (md5.code == 0) {
    EXPECT_NE(r.output.find(md5.output.substr(0, 32)), std::string::npos) << r.output;
  }
}

TEST_F(Cli, SkipAndUntilMatchTheFlacTool) {
  const auto f = make_flac("r", 2, 16, 4.0);
  struct Case {
    const char *skip, *until;
  };
  for (const Case c :
       {Case{"44100", "66150"}, Case{"0:01.50", "0:02.25"}, Case{"130000", ""}, Case{"", "1000"}}) {
    for (const char* backend : {"cpu", "cpu-parallel", "auto"}) {
      const std::string args =
          std::string(*c.skip ? " --skip=" : "") + c.skip + (*c.until ? " --until=" : "") + c.until;
      SCOPED_TRACE(args + " " + backend);
      const auto r = sigpu("flac decode -q -f --backend " + std::string(backend) + args + " -o " +
                           quoted(path("ours.wav")) + " " + quoted(f));
      ASSERT_EQ(r.code, 0) << r.output;
      EXPECT_EQ(r.output.find("warning"), std::string::npos) << "a range of a clean file\n"
                                                             << r.output;
      const auto ref =
          run("flac -s -d -f" + args + " -o " + quoted(path("ref.wav")) + " " + quoted(f));
      ASSERT_EQ(ref.code, 0) << ref.output;
      EXPECT_TRUE(chunk(read_all(path("ours.wav")), "data") ==
                  chunk(read_all(path("ref.wav")), "data"))
          << "samples differ";
    }
  }
  const auto bad = sigpu("flac decode -q -f --skip=2000 --until=1000 -o " + quoted(path("x.wav")) +
                         " " + quoted(f));
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.output.find("--until must be past --skip"), std::string::npos) << bad.output;
  const auto odd =
      sigpu("flac decode -q -f --skip=1.5s -o " + quoted(path("x.wav")) + " " + quoted(f));
  EXPECT_NE(odd.code, 0);
  EXPECT_NE(odd.output.find("mm:ss.ss"), std::string::npos) << odd.output;
}

TEST_F(Cli, DecodeMatchesTheFlacTool) {
  struct Case {
    unsigned channels, bits;
  };
  for (const Case c : {Case{2, 16}, Case{1, 8}, Case{6, 24}, Case{3, 16}, Case{2, 32}}) {
    for (const char* backend : {"cpu", "cpu-parallel", "auto"}) {
      const std::string name =
          std::to_string(c.channels) + "ch" + std::to_string(c.bits) + "_" + backend;
      SCOPED_TRACE(name);
      const auto f = make_flac(name, c.channels, c.bits, 1.0);
      const auto r = sigpu("flac decode -q --backend " + std::string(backend) + " " + quoted(f));
      ASSERT_EQ(r.code, 0) << r.output;
      ASSERT_TRUE(fs::exists(path(name + ".wav"))) << "the input's name with .wav";
      const auto ref = run("flac -s -d -f -o " + quoted(path(name + "_ref.wav")) + " " + quoted(f));
      ASSERT_EQ(ref.code, 0) << ref.output;
      const auto ours = read_all(path(name + ".wav"));
      const auto theirs = read_all(path(name + "_ref.wav"));
      EXPECT_TRUE(chunk(ours, "data") == chunk(theirs, "data")) << "sample data differs";
      if (c.channels == 2 && c.bits == 16) {
        EXPECT_EQ(ours, theirs) << "canonical 16-bit stereo files should be identical";
      }
    }
  }
}

TEST_F(Cli, RawOutputIsTheEncodedInput) {
  for (unsigned bits : {8u, 16u, 24u}) {
    const std::string name = "r" + std::to_string(bits);
    const auto f = make_flac(name, 2, bits, 1.0);
    const auto out = path(name + "_out.raw");
    const auto r = sigpu("flac decode -q --format raw -o " + quoted(out) + " " + quoted(f));
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_TRUE(read_all(out) == read_all(path(name + ".raw"))) << bits << " bits";
  }
}

TEST_F(Cli, FloatOutputIsScaledSamples) {
  const auto f = make_flac("f", 2, 16, 0.5);
  const auto r =
      sigpu("flac decode -q --sample-format f32 -o " + quoted(path("f.wav")) + " " + quoted(f));
  ASSERT_EQ(r.code, 0) << r.output;
  const auto wav = read_all(path("f.wav"));
  const auto raw = read_all(path("f.raw"));
  const auto data = chunk(wav, "data");
  ASSERT_EQ(data.size(), raw.size() * 2);
  for (std::size_t i = 0; i < raw.size() / 2; ++i) {
    const auto s = std::int16_t(raw[2 * i] | raw[2 * i + 1] << 8);
    float x;
    std::memcpy(&x, data.data() + 4 * i, 4);
    ASSERT_EQ(x, float(s) / 32768.0f) << "sample " << i;
  }
}

TEST_F(Cli, DecodeWritesToAPipe) {
  const auto f = make_flac("p", 2, 24, 0.5);
  ASSERT_EQ(sigpu("flac decode -q " + quoted(f)).code, 0);
  const auto r =
      sigpu("flac decode -q -o - " + quoted(f) + " | cat > " + quoted(path("piped.wav")));
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(read_all(path("piped.wav")) == read_all(path("p.wav")));
}

TEST_F(Cli, SeveralInputsNeedAnOutputDirectory) {
  const auto a = make_flac("a", 2, 16, 0.5), b = make_flac("b", 1, 16, 0.5);
  auto r = sigpu("flac decode " + quoted(a) + " " + quoted(b));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("sigpu: "), std::string::npos) << r.output;
  fs::create_directories(path("out"));
  r = sigpu("flac decode -q -o " + quoted(path("out")) + " " + quoted(a) + " " + quoted(b));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(fs::exists(path("out/a.wav")));
  EXPECT_TRUE(fs::exists(path("out/b.wav")));
}

TEST_F(Cli, DirectoryInputsSplitIntoShards) {
  // A corpus in nested folders, decoded by two shards of a cluster job into one output tree.
  const auto a = make_flac("a", 2, 16, 0.4), b = make_flac("b", 1, 16, 0.3),
             c = make_flac("c", 2, 24, 0.3);
  fs::create_directories(path("in/x/y"));
  fs::rename(a, path("in/a.flac"));
  fs::rename(b, path("in/x/b.flac"));
  fs::rename(c, path("in/x/y/c.FLAC"));
  write_all(path("in/x/notes.txt"), {'h', 'i'});
  for (const char* shard : {"0/2", "1/2"}) {
    const auto r = sigpu("flac decode -q --shard " + std::string(shard) + " " + quoted(path("in")) +
                         " -o " + quoted(path("out")));
    EXPECT_EQ(r.code, 0) << shard << ": " << r.output;
  }
  // Sorted: in/a.flac, in/x/b.flac, in/x/y/c.FLAC; shard 0 takes the first and third.
  for (const char* name : {"out/a.wav", "out/x/b.wav", "out/x/y/c.wav"})
    EXPECT_TRUE(fs::exists(path(name))) << name;
  const auto ref =
      run("flac -s -d -f -o " + quoted(path("ref_b.wav")) + " " + quoted(path("in/x/b.flac")));
  ASSERT_EQ(ref.code, 0) << ref.output;
  EXPECT_TRUE(read_all(path("out/x/b.wav")) == read_all(path("ref_b.wav")));
  EXPECT_EQ(
      sigpu("flac decode --shard 2/2 " + quoted(path("in")) + " -o " + quoted(path("o2"))).code, 2);
}

/// Slurm's job array variables for the commands a test runs, unset again at its end.
class SlurmArray {
 public:
  explicit SlurmArray(std::vector<std::pair<std::string, std::string>> vars) {
    for (const char* name : kNames) ::unsetenv(name);
    for (const auto& [name, value] : vars) ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~SlurmArray() {
    for (const char* name : kNames) ::unsetenv(name);
  }

 private:
  static constexpr const char* kNames[] = {"SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN",
                                           "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP",
                                           "SLURM_ARRAY_TASK_COUNT"};
};

TEST_F(Cli, SlurmArrayTasksSplitTheCorpus) {
  // sbatch --array=1-2: the tasks with ids 1 and 2 are shards 0/2 and 1/2.
  const auto a = make_flac("a", 2, 16, 0.2), b = make_flac("b", 1, 16, 0.2),
             c = make_flac("c", 2, 16, 0.2);
  fs::create_directories(path("in"));
  for (const auto& f : {a, b, c}) fs::rename(f, path("in") + "/" + fs::path(f).filename().string());
  const std::string cmd =
      "flac decode -q --shard slurm " + quoted(path("in")) + " -o " + quoted(path("out"));
  {
    SlurmArray env({{"SLURM_ARRAY_TASK_ID", "1"},
                    {"SLURM_ARRAY_TASK_MIN", "1"},
                    {"SLURM_ARRAY_TASK_MAX", "2"}});
    const auto r = sigpu(cmd);
    EXPECT_EQ(r.code, 0) << r.output;
  }
  EXPECT_TRUE(fs::exists(path("out/a.wav")));
  EXPECT_FALSE(fs::exists(path("out/b.wav")));
  EXPECT_TRUE(fs::exists(path("out/c.wav")));
  {
    SlurmArray env({{"SLURM_ARRAY_TASK_ID", "2"},
                    {"SLURM_ARRAY_TASK_COUNT", "2"},
                    {"SLURM_ARRAY_TASK_MIN", "1"},
                    {"SLURM_ARRAY_TASK_MAX", "2"}});
    const auto r = sigpu(cmd);
    EXPECT_EQ(r.code, 0) << r.output;
  }
  EXPECT_TRUE(fs::exists(path("out/b.wav")));

  // Missing, malformed or disagreeing variables are usage errors that say what is wrong.
  const std::vector<std::vector<std::pair<std::string, std::string>>> bad = {
      {},
      {{"SLURM_ARRAY_TASK_ID", "0"}},
      {{"SLURM_ARRAY_TASK_ID", "x1"}, {"SLURM_ARRAY_TASK_COUNT", "2"}},
      {{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_COUNT", "2"}},
      {{"SLURM_ARRAY_TASK_ID", "3"},
       {"SLURM_ARRAY_TASK_MIN", "1"},
       {"SLURM_ARRAY_TASK_MAX", "3"},
       {"SLURM_ARRAY_TASK_COUNT", "2"}},
      {{"SLURM_ARRAY_TASK_ID", "3"},
       {"SLURM_ARRAY_TASK_MIN", "0"},
       {"SLURM_ARRAY_TASK_MAX", "8"},
       {"SLURM_ARRAY_TASK_STEP", "2"}}};
  for (const auto& vars : bad) {
    SlurmArray env(vars);
    const auto r = sigpu(cmd + " -f");
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("--shard slurm"), std::string::npos) << r.output;
  }
}

TEST_F(Cli, ListFileNpyOutputAndPerFileErrors) {
  const auto a = make_flac("a", 2, 16, 0.4), b = make_flac("b", 2, 24, 0.3);
  write_all(path("broken.flac"), std::vector<std::uint8_t>(300, 0x33));
  const std::string list = "# corpus\n" + a + "\n\n" + path("broken.flac") + "\n" + b + "\n";
  write_all(path("list.txt"), {list.begin(), list.end()});
  const auto r = sigpu("flac decode -q --format npy --list " + quoted(path("list.txt")) + " -o " +
                       quoted(path("out")));
  EXPECT_EQ(r.code, 3) << "the broken file is not FLAC, the batch goes on: " << r.output;
  EXPECT_NE(r.output.find("broken.flac"), std::string::npos) << r.output;
  for (const char* name : {"a", "b"}) {
    const auto npy = read_all(path(std::string("out/") + name + ".npy"));
    const auto raw = read_all(path(std::string(name) + ".raw"));
    ASSERT_GE(npy.size(), 128u) << name;
    EXPECT_EQ(std::string(npy.begin() + 1, npy.begin() + 6), "NUMPY");
    const std::string header(npy.begin() + 10, npy.begin() + 128);
    const bool wide = std::string(name) == "b";
    EXPECT_NE(header.find(wide ? "'<i4'" : "'<i2'"), std::string::npos) << header;
    const std::size_t frames = raw.size() / (wide ? 6 : 4);
    EXPECT_NE(header.find("(" + std::to_string(frames) + ", 2)"), std::string::npos) << header;
    if (!wide) {
      EXPECT_TRUE(std::vector<std::uint8_t>(npy.begin() + 128, npy.end()) == raw);
    } else {  // 24-bit samples widen to int32, sign-extended
      ASSERT_EQ(npy.size() - 128, frames * 8);
      for (std::size_t i = 0; i < frames * 2; ++i) {
        const std::int32_t want =
            std::int32_t(std::uint32_t(raw[3 * i]) << 8 | std::uint32_t(raw[3 * i + 1]) << 16 |
                         std::uint32_t(raw[3 * i + 2]) << 24) >>
            8;
        std::int32_t got;
        std::memcpy(&got, npy.data() + 128 + 4 * i, 4);
        ASSERT_EQ(got, want) << "sample " << i;
      }
    }
  }
}

TEST_F(Cli, ExistingOutputNeedsForce) {
  const auto f = make_flac("a", 2, 16, 0.5);
  ASSERT_EQ(sigpu("flac decode -q " + quoted(f)).code, 0);
  auto r = sigpu("flac decode -q " + quoted(f));
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--force"), std::string::npos) << r.output;
  r = sigpu("flac decode -q --force " + quoted(f));
  EXPECT_EQ(r.code, 0) << r.output;
}

TEST_F(Cli, TestPassesAGoodFile) {
  const auto f = make_flac("good", 2, 16);
  const auto r = sigpu("flac test " + quoted(f));
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("OK"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("MD5 ok"), std::string::npos) << r.output;
}

TEST_F(Cli, TestNamesTheByteOffsetOfDamage) {
  const auto f = make_flac("bad", 2, 16);
  auto bytes = read_all(f);
  const std::size_t flipped = bytes.size() / 2;
  for (std::size_t i = flipped; i < flipped + 4; ++i) bytes[i] ^= 0xA5;
  write_all(f, bytes);

  auto r = sigpu("flac test " + quoted(f));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_NE(r.output.find("FAILED"), std::string::npos) << r.output;
  // The damaged frame starts at or before the flipped bytes, within one frame's length.
  const std::regex offset_re("byte ([0-9]+)");
  bool named = false;
  for (std::sregex_iterator it(r.output.begin(), r.output.end(), offset_re), end; it != end; ++it) {
    const auto at = std::stoull((*it)[1]);
    named = named || (at <= flipped && flipped - at < 64 * 1024);
  }
  EXPECT_TRUE(named) << "no byte offset near " << flipped << " in:\n" << r.output;

  r = sigpu("flac decode -q " + quoted(f));
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_TRUE(fs::exists(path("bad.wav"))) << "damage is silenced and reported, not fatal";
}

TEST_F(Cli, MissingFileFailsAndIsNamed) {
  const auto missing = path("missing.flac");
  for (const char* verb : {"test", "info", "decode"}) {
    const auto r = sigpu(std::string("flac ") + verb + " " + quoted(missing));
    EXPECT_EQ(r.code, 3) << verb << ": " << r.output;
    EXPECT_NE(r.output.find("sigpu: "), std::string::npos) << verb << ": " << r.output;
    EXPECT_NE(r.output.find(missing), std::string::npos) << verb << ": " << r.output;
  }
}

TEST_F(Cli, UsageErrorsExitWith2) {
  const auto f = make_flac("a", 2, 16, 0.5);
  const std::vector<std::string> cases = {"",
                                          "bogus",
                                          "flac",
                                          "flac decode",
                                          "flac decode --backend gpu " + quoted(f),
                                          "flac decode --sample-format s8 " + quoted(f),
                                          "flac decode --format mp3 " + quoted(f),
                                          "flac test --no-such-option " + quoted(f),
                                          "demo --runs 0"};
  for (const auto& args : cases) {
    const auto r = sigpu(args);
    EXPECT_EQ(r.code, 2) << "'" << args << "': " << r.output;
    EXPECT_EQ(r.output.rfind("sigpu: ", 0), 0u) << "'" << args << "': " << r.output;
  }
}

TEST_F(Cli, DeviceListsAreChecked) {
  const auto f = make_flac("a", 2, 16, 0.5);
  const auto cpu = sigpu("flac decode --backend cpu --devices 0 " + quoted(f));
  EXPECT_EQ(cpu.code, 2) << cpu.output;
  EXPECT_NE(cpu.output.find("--devices needs the cuda backend"), std::string::npos) << cpu.output;
  // Without a GPU device 0 does not exist; with one it is listed twice: either way it is named.
  const auto twice = sigpu("flac decode --backend cuda --devices 0,0 " + quoted(f));
  EXPECT_NE(twice.code, 0);
  EXPECT_NE(twice.output.find("CUDA device 0 "), std::string::npos) << twice.output;
  const auto bad = sigpu("flac decode --backend cuda --devices 0,x " + quoted(f));
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.output.find("'x' is not a device index"), std::string::npos) << bad.output;
}

/// `--devices all` on a long file (split at frame starts) and on a directory (shared out).
class FlacMultiGpuCli : public Cli {};

TEST_F(FlacMultiGpuCli, AllDevicesMatchTheFlacTool) {
  if (sigpu::cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  const auto f = make_flac("long", 2, 16, 20.0);
  make_flac("short", 2, 16, 2.0);
  const auto r = sigpu("flac decode -q --backend cuda --devices all -o " + quoted(path("out.wav")) +
                       " " + quoted(f));
  ASSERT_EQ(r.code, 0) << r.output;
  const auto ref = run("flac -s -d -f -o " + quoted(path("ref.wav")) + " " + quoted(f));
  ASSERT_EQ(ref.code, 0) << ref.output;
  EXPECT_EQ(read_all(path("out.wav")), read_all(path("ref.wav")));
  const auto dir = sigpu("flac decode -q --backend cuda --devices all -o " + quoted(path("out")) +
                         " " + quoted(dir_.string()));
  ASSERT_EQ(dir.code, 0) << dir.output;
  EXPECT_EQ(read_all(path("out/long.wav")), read_all(path("ref.wav")));
}

TEST_F(Cli, HelpVersionAndInfoSucceed) {
  auto r = sigpu("--help");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("flac"), std::string::npos) << r.output;
  EXPECT_EQ(sigpu("flac decode --help").code, 0);
  r = sigpu("--version");
  EXPECT_EQ(r.code, 0) << r.output;
  r = sigpu("info");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("cpu-parallel"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("libFLAC"), std::string::npos) << r.output;
}

TEST_F(Cli, DemoIsBitExact) {
  const auto r = sigpu("demo --seconds 2 --runs 1");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("every decoder returned the original samples"), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find(" NO "), std::string::npos) << r.output;
}

}  // namespace
