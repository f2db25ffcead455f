// End-to-end: the built `sigpu` binary renders a real FLAC file (made by sox and flac) through
// the guitar chain; its WAV and FLAC outputs are read back with libsndfile and compared with
// an in-process render of the same samples.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>

#include "support/shell.hpp"
#include "util.hpp"

#ifdef SIGPU_HAVE_SNDFILE
#include <sndfile.h>
#endif

namespace audio = sigpu::audio;
using namespace sigpu::test::audio;
namespace fs = std::filesystem;

namespace {

const std::string& kSigpu = sigpu::test::kSigpuBinary;

sigpu::test::CommandResult shell(const std::string& command) {
  return sigpu::test::run_command(command);
}

#ifdef SIGPU_HAVE_SNDFILE
Channels read_file(const std::string& path, int* rate = nullptr) {
  SF_INFO info{};
  SNDFILE* f = sf_open(path.c_str(), SFM_READ, &info);
  if (!f) return {};
  std::vector<float> inter(std::size_t(info.frames) * info.channels);
  sf_readf_float(f, inter.data(), info.frames);
  sf_close(f);
  Channels out(info.channels, std::vector<float>(info.frames));
  for (sf_count_t i = 0; i < info.frames; ++i) {
    for (int c = 0; c < info.channels; ++c) out[c][i] = inter[i * info.channels + c];
  }
  if (rate) *rate = info.samplerate;
  return out;
}
#endif

/// A 12-second plucked-string phrase at 48 kHz, mono, 24-bit FLAC: sox synthesises, flac
/// encodes. Empty when the tools are missing. ctest runs tests in parallel and two of them want
/// this file: it is made under a name of this process's own and renamed into place whole.
std::string make_input() {
  const fs::path dir = fs::path(SIGPU_BINARY_DIR) / "test-data" / "audio";
  fs::create_directories(dir);
  const fs::path flac = dir / "pluck.flac";
  if (fs::exists(flac)) return flac;
  const std::string own = std::to_string(::getpid());
  const fs::path wav = dir / ("pluck-" + own + ".wav"), part = dir / ("pluck-" + own + ".flac");
  const auto r = shell("sox -n -r 48000 -b 24 -c 1 '" + wav.string() +
                       "' synth 3 pluck A2 pluck E3 pluck A3 pluck C4 repeat 3 fade 0 12 0.5 "
                       "gain -8 && flac -s -f -8 -o '" +
                       part.string() + "' '" + wav.string() + "'");
  fs::remove(wav);
  if (r.code != 0) return "";
  fs::rename(part, flac);
  return flac;
}

}  // namespace

#ifdef SIGPU_HAVE_SNDFILE
TEST(AudioCli, RenderFlacThroughGuitarChain) {
  const std::string in = make_input();
  if (in.empty()) GTEST_SKIP() << "sox or flac not installed";
  const std::string graph = source_path("examples/audio/guitar.json");
  const auto input = read_file(in);
  ASSERT_EQ(input.size(), 1u);
  ASSERT_GT(input[0].size(), 48000u * 10);
  const auto want =
      run(audio::Graph::load(graph), input, {.backend = sigpu::Backend::cpu, .period = 1024});
  const fs::path dir = fs::path(in).parent_path();
  for (const char* backend : {"cpu", "cpu-parallel"}) {
    const std::string wav = (dir / (std::string("out-") + backend + ".wav")).string();
    const auto r = shell("'" + kSigpu + "' audio render -f '" + graph + "' '" + in + "' '" + wav +
                         "' --backend " + backend);
    ASSERT_EQ(r.code, 0) << r.output;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(r.output, m, std::regex(R"(\((\d+)x real time\))"))) << r.output;
    EXPECT_GT(std::stod(m[1]), 1.0) << r.output;
    int rate = 0;
    const auto got = read_file(wav, &rate);
    EXPECT_EQ(rate, 48000);
    ASSERT_EQ(got.size(), 2u);
    ASSERT_EQ(got[0].size(), input[0].size());
    EXPECT_LT(worst_dbfs(want, got), -100) << backend;
  }
  // FLAC output is 24-bit: within its quantisation step.
  const std::string flac = (dir / "out.flac").string();
  auto r = shell("'" + kSigpu + "' audio render -f '" + graph + "' '" + in + "' '" + flac + "'");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_LT(worst_dbfs(want, read_file(flac)), -130);
  // The reference decoder agrees that it is a valid FLAC file.
  EXPECT_EQ(shell("flac -s -t '" + flac + "'").code, 0);
}

TEST(AudioCli, RenderRefusesClearly) {
  const std::string in = make_input();
  if (in.empty()) GTEST_SKIP() << "sox or flac not installed";
  const fs::path dir = fs::path(in).parent_path();
  const std::string bad = (dir / "bad.json").string();
  {
    std::FILE* f = std::fopen(bad.c_str(), "w");
    std::fputs(R"({"inputs": 1, "nodes": [{"id": "lo", "type": "eq", "input": "in",
      "params": {"bands": [{"type": "lowpass", "freq": 40000}]}}], "outputs": "lo"})",
               f);
    std::fclose(f);
  }
  auto r = shell("'" + kSigpu + "' audio render -f '" + bad + "' '" + in + "' '" +
                 (dir / "x.wav").string() + "'");
  EXPECT_EQ(r.code, 3);  // the graph cannot run at the file's rate
  EXPECT_NE(r.output.find("node 'lo' parameter 'band.0.freq'"), std::string::npos) << r.output;
  r = shell("'" + kSigpu + "' audio render -f '" + source_path("examples/audio/sends.json") +
            "' '" + in + "' '" + (dir / "x.wav").string() + "'");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.output.find("has 1 channels but the graph has 4 inputs"), std::string::npos)
      << r.output;
  // Something that is not a sound file as the input: 3, and nothing written.
  r = shell("'" + kSigpu + "' audio render -f '" + source_path("examples/audio/guitar.json") +
            "' '" + bad + "' '" + (dir / "y.wav").string() + "'");
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find("cannot read '" + bad + "'"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir / "y.wav"));
  r = shell("'" + kSigpu + "' audio check '" + source_path("examples/audio/console.json") +
            "' --set N=256");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("256 inputs, 64 outputs"), std::string::npos) << r.output;
}
#endif

// docs/audio.md's parameter tables are what the effects' descriptors say.
TEST(AudioCli, EffectsTableMatchesTheDocs) {
  const auto r = shell(kSigpu + " audio effects");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("| `band.K.freq` | number | 0.001 .. 1e+06 | required | Hz | ramped"),
            std::string::npos)
      << r.output;
#if !defined(SIGPU_HAVE_AUDIO_CONVOLUTION) || !defined(SIGPU_HAVE_AUDIO_NAM)
  GTEST_SKIP() << "the docs list every effect type; this build lacks convolution or nam";
#endif
  std::ifstream f(source_path("docs/audio.md"));
  const std::string docs((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  const std::string begin = "<!-- generated by `sigpu audio effects`: begin -->\n";
  const auto a = docs.find(begin);
  const auto b = docs.find("<!-- generated by `sigpu audio effects`: end -->");
  ASSERT_NE(a, std::string::npos);
  ASSERT_NE(b, std::string::npos);
  EXPECT_EQ(docs.substr(a + begin.size(), b - a - begin.size()), r.output)
      << "regenerate the tables in docs/audio.md with `sigpu audio effects`";
}

// bench --count: one run per scenario and period size, every period, and the tail columns.
TEST(AudioCli, BenchAtFixedCountsPrintsTheTail) {
  auto r = shell("'" + kSigpu +
                 "' audio bench --scenario console --count 8 --frames 32,64 --backends cpu "
                 "--periods 300 2>&1");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("p99.99 us"), std::string::npos) << r.output;
  const auto table = r.output.find("worst case at fixed counts");
  ASSERT_NE(table, std::string::npos) << r.output;
  for (const char* row :
       {"console   cpu              32      8", "console   cpu              64      8"}) {
    EXPECT_NE(r.output.find(row, table), std::string::npos) << row << "\n" << r.output;
  }
  EXPECT_EQ(r.output.find("search"), std::string::npos) << r.output;
  r = shell("'" + kSigpu +
            "' audio bench --scenario console,nam --count nam=2 --backends cpu 2>&1");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--count: console needs a count"), std::string::npos) << r.output;
  r = shell("'" + kSigpu + "' audio bench --scenario console --count 8 --realtime 100 2>&1");
  EXPECT_EQ(r.code, 2) << r.output;
}

// Without the privilege (another user, no rtprio or memlock limit): one notice naming what was
// refused and how to allow it, and the command runs on.
TEST(AudioCli, RealtimeRefusalIsOneNoticeAndTheRunGoesOn) {
  if (geteuid() != 0 || shell("command -v setpriv").code != 0) {
    GTEST_SKIP() << "needs root and setpriv to run as an unprivileged user";
  }
  const auto r = shell("cd / && setpriv --reuid=65534 --regid=65534 --clear-groups '" + kSigpu +
                       "' audio bench --scenario console --count 8 --frames 64 --backends cpu "
                       "--periods 200 --realtime 40 2>&1");
  if (r.output.find("Permission denied") != std::string::npos) GTEST_SKIP() << r.output;
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("SCHED_FIFO 40 refused"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rtprio"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("worst case at fixed counts"), std::string::npos) << r.output;
}
