// `sigpu audio run` against a real jackd (dummy backend): this test is a JACK client too; it
// plays a music-like signal into the sigpu client, records what comes back, and compares it
// with an offline render of the same graph. Skips when jackd is not installed.
#include <gtest/gtest.h>

#ifdef SIGPU_HAVE_JACK
#include <fcntl.h>
#include <jack/jack.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "support/shell.hpp"
#include "util.hpp"

extern char** environ;

namespace audio = sigpu::audio;
using namespace sigpu::test::audio;
namespace fs = std::filesystem;

namespace {

constexpr int kRate = 48000, kPeriod = 1024;

/// A child process, killed (by its pid) and reaped when this goes out of scope.
struct Child {
  pid_t pid = -1;
  Child(std::vector<std::string> args, const std::string& log) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    if (posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ) != 0) pid = -1;
    posix_spawn_file_actions_destroy(&fa);
  }
  /// The exit status, or -1 when it did not exit within `seconds`.
  int wait(double seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return -1;
  }
  ~Child() {
    if (pid > 0) {
      kill(pid, SIGTERM);
      if (wait(5) < 0) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
      }
    }
  }
};

bool have_jackd() {
  return std::system("command -v jackd >/dev/null 2>&1") == 0;
}

/// The recording client: plays `src` once `playing`, records its two inputs once `recording`.
struct Recorder {
  jack_client_t* jack = nullptr;
  jack_port_t *out = nullptr, *in[2] = {nullptr, nullptr};
  std::vector<float> src;
  std::vector<float> rec[2];
  std::size_t played = 0, recorded = 0;
  std::atomic<bool> playing{false}, recording{false};

  static int process(jack_nframes_t n, void* arg) {
    auto& r = *static_cast<Recorder*>(arg);
    auto* o = static_cast<float*>(jack_port_get_buffer(r.out, n));
    for (jack_nframes_t i = 0; i < n; ++i) {
      o[i] = r.playing && r.played < r.src.size() ? r.src[r.played++] : 0.0f;
    }
    if (r.recording) {
      for (int c = 0; c < 2; ++c) {
        const auto* x = static_cast<const float*>(jack_port_get_buffer(r.in[c], n));
        for (jack_nframes_t i = 0; i < n && r.recorded + i < r.rec[c].size(); ++i) {
          r.rec[c][r.recorded + i] = x[i];
        }
      }
      r.recorded += n;
    }
    return 0;
  }
  ~Recorder() {
    if (jack) jack_client_close(jack);
  }
};

const char* kGraph = R"({"inputs": 1, "nodes": [
  {"id": "eq", "type": "eq", "input": "in", "params": {"bands": [
    {"type": "highpass", "freq": 80}, {"type": "peak", "freq": 2000, "gain_db": 6}]}},
  {"id": "comp", "type": "compressor", "input": "eq", "params": {"threshold_db": -30}},
  {"id": "pan", "type": "pan", "input": "comp", "params": {"pan": 0.3}},
  {"id": "delay", "type": "delay", "input": "pan", "params": {"time_ms": 90, "feedback": 0.4}}],
  "outputs": "delay"})";

}  // namespace

TEST(AudioJack, RunMatchesOfflineRenderThroughJackd) {
  if (!have_jackd()) GTEST_SKIP() << "jackd not installed";
  const fs::path dir = fs::path(SIGPU_BINARY_DIR) / "test-data" / "audio";
  fs::create_directories(dir);
  const std::string graph_path = (dir / "jack-graph.json").string();
  std::ofstream(graph_path) << kGraph;
  const std::string server = "sigpu-test-" + std::to_string(getpid());
  Child jackd({"jackd", "-n", server, "-d", "dummy", "-r", std::to_string(kRate), "-p",
               std::to_string(kPeriod)},
              (dir / "jackd.log").string());
  ASSERT_GT(jackd.pid, 0);

  Recorder r;
  for (int tries = 0; tries < 100 && !r.jack; ++tries) {
    jack_status_t st{};
    r.jack = jack_client_open("recorder",
                              static_cast<jack_options_t>(JackNoStartServer | JackServerName), &st,
                              server.c_str());
    if (!r.jack) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_NE(r.jack, nullptr) << "jackd did not come up";
  ASSERT_EQ(jack_get_buffer_size(r.jack), jack_nframes_t(kPeriod));
  r.src = music(1, kRate * 2, 41)[0];
  for (auto& x : r.rec) x.assign(kRate * 4, 0.0f);
  r.out = jack_port_register(r.jack, "src", JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
  r.in[0] = jack_port_register(r.jack, "rec_1", JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
  r.in[1] = jack_port_register(r.jack, "rec_2", JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
  jack_set_process_callback(r.jack, Recorder::process, &r);
  ASSERT_EQ(jack_activate(r.jack), 0);

  const std::string log = (dir / "jack-run.log").string();
  Child sigpu({std::string(SIGPU_BINARY_DIR) + "/bin/sigpu", "audio", "run", graph_path, "--server",
               server, "--name", "sut", "--backend", "cpu", "--seconds", "4", "--latency", "2"},
              log);
  ASSERT_GT(sigpu.pid, 0);
  // The ports appear when sigpu registers them, but connect only once it has activated.
  const auto connect = [&](const char* from, const char* to) {
    for (int tries = 0; tries < 250; ++tries) {
      if (jack_connect(r.jack, from, to) == 0) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  };
  ASSERT_TRUE(connect("recorder:src", "sut:in_1"));
  ASSERT_TRUE(connect("sut:out_1", "recorder:rec_1"));
  ASSERT_TRUE(connect("sut:out_2", "recorder:rec_2"));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  r.recording = true;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  r.playing = true;
  ASSERT_EQ(sigpu.wait(20), 0);
  jack_deactivate(r.jack);
  std::stringstream out;
  out << std::ifstream(log).rdbuf();
  EXPECT_NE(out.str().find("periods of 1024 frames at 48000 Hz on cpu, latency 2048 frames"),
            std::string::npos)
      << out.str();

  // Same signal offline; the live output is that, later by the time it took to start playing.
  const auto want = run(audio::Graph::parse(kGraph), {r.src},
                        {.backend = sigpu::Backend::cpu, .period = kPeriod});
  const auto first = [](const std::vector<float>& x) {
    std::size_t i = 0;
    while (i < x.size() && std::abs(x[i]) < 1e-9f) ++i;
    return i;
  };
  const std::size_t a = first(want[0]), b = first(r.rec[0]);
  ASSERT_LT(b, r.rec[0].size()) << "nothing came back: " << out.str();
  ASSERT_GE(b, a);
  const std::size_t n = std::min(want[0].size() - a, r.rec[0].size() - b);
  ASSERT_GT(n, std::size_t(kRate));
  for (int c = 0; c < 2; ++c) {
    const std::span<const float> ref(want[c].data(), n + a), got(r.rec[c].data() + (b - a), n + a);
    EXPECT_LT(audio::compare(ref, got).max_abs_dbfs, -100) << "channel " << c;
  }
}
// `sigpu audio serve --jack`: the live graph runs at the server's period; its status shows the
// periods it processed.
TEST(AudioJack, ServeRunsTheLiveGraphThroughJackd) {
  if (!have_jackd()) GTEST_SKIP() << "jackd not installed";
  const fs::path dir = fs::path(SIGPU_BINARY_DIR) / "test-data" / "audio";
  fs::create_directories(dir);
  const std::string graph_path = (dir / "jack-serve-graph.json").string();
  std::ofstream(graph_path) << kGraph;
  const std::string server = "sigpu-serve-" + std::to_string(getpid());
  Child jackd({"jackd", "-n", server, "-d", "dummy", "-r", std::to_string(kRate), "-p", "256"},
              (dir / "jackd-serve.log").string());
  ASSERT_GT(jackd.pid, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const std::string log = (dir / "serve.log").string();
  Child serve({std::string(SIGPU_BINARY_DIR) + "/bin/sigpu", "audio", "serve", graph_path, "--jack",
               "--server", server, "--backend", "cpu", "--port", "0", "--seconds", "4"},
              log);
  ASSERT_GT(serve.pid, 0);
  std::string url;
  for (int tries = 0; tries < 150 && url.empty(); ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::stringstream s;
    s << std::ifstream(log).rdbuf();
    const auto at = s.str().find("serving ");
    if (at != std::string::npos && s.str().find(' ', at + 8) != std::string::npos) {
      url = s.str().substr(at + 8, s.str().find(' ', at + 8) - at - 8);
    }
  }
  ASSERT_FALSE(url.empty()) << "no server";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto r = sigpu::test::run_command(
      "python3 -c 'import sys, urllib.request; "
      "print(urllib.request.urlopen(sys.argv[1]).read().decode())' '" +
      url + "api/levels'");
  ASSERT_EQ(r.code, 0) << r.output;
  const auto at = r.output.find("\"periods\":");
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_GT(std::stol(r.output.substr(at + 10)), 50) << r.output;  // 0.5 s is ~94 periods
  EXPECT_NE(r.output.find("\"deadline_us\":5333.3"), std::string::npos) << r.output;
  EXPECT_EQ(serve.wait(10), 0);
}

#endif
