#include <sigpu/audio_bench.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>

#ifdef SIGPU_HAVE_SNDFILE
#include <sndfile.h>
#endif

#include <nlohmann/json.hpp>

namespace sigpu::audio {
namespace {

#ifdef SIGPU_HAVE_AUDIO_CONVOLUTION
namespace fs = std::filesystem;

/// A folder of its own under the system's temporary folder, removed with everything in it.
class TempFolder {
 public:
  TempFolder() {
    static std::atomic<int> serial{0};
    path_ = fs::temp_directory_path() /
            ("sigpu-bench-" + std::to_string(::getpid()) + "-" + std::to_string(serial++));
    fs::create_directories(path_);
  }
  ~TempFolder() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};
#endif

/// IR channel `channel` tap by tap: splitmix64 noise seeded by the channel under an exponential
/// envelope (energy: (1/3) * scale^2 * sum of exp(-13.8 i / taps) = 1; 60 dB down at the end).
class IrTaps {
 public:
  IrTaps(int channel, int taps)
      : state_(std::uint64_t(channel) + 1),
        env_(std::sqrt(3.0 * 13.8 / taps)),
        decay_(std::exp(-6.9 / taps)) {}
  float next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    const double uniform = static_cast<double>(z >> 11) * 0x1p-52 - 1;  // [-1, 1)
    const auto tap = static_cast<float>(env_ * uniform);
    env_ *= decay_;
    return tap;
  }

 private:
  std::uint64_t state_;
  double env_, decay_;
};

#ifdef SIGPU_HAVE_AUDIO_CONVOLUTION
/// IRs 0 .. channels - 1 (bench_ir) as a float WAV at `rate`.
void write_irs(const fs::path& path, int channels, int taps, double rate) {
#ifdef SIGPU_HAVE_SNDFILE
  std::vector<IrTaps> irs;
  for (int c = 0; c < channels; ++c) irs.emplace_back(c, taps);
  std::vector<float> inter(std::size_t(taps) * channels);
  for (std::size_t i = 0, at = 0; i < std::size_t(taps); ++i) {
    for (auto& ir : irs) inter[at++] = ir.next();
  }
  SF_INFO info{};
  info.samplerate = static_cast<int>(rate);
  info.channels = channels;
  info.format = SF_FORMAT_WAV | SF_FORMAT_FLOAT;
  SNDFILE* f = sf_open(path.c_str(), SFM_WRITE, &info);
  if (!f)
    throw OutputError("audio bench: cannot write '" + path.string() + "': " + sf_strerror(nullptr));
  const sf_count_t written = sf_writef_float(f, inter.data(), taps);
  const std::string why = sf_strerror(f);
  sf_close(f);
  if (written != taps)
    throw OutputError("audio bench: writing '" + path.string() + "' failed: " + why);
#else
  (void)channels, (void)taps, (void)rate;
  throw Error("audio bench: cannot write the IR '" + path.string() +
              "': sigpu was built without libsndfile");
#endif
}

/// The IR file of `channels` channels (bench_ir 0 ..), written once per process: a search
/// builds a graph for every count it tries, and the reverbs' files run to hundreds of MB.
std::string ir_file(int channels, int taps, double rate) {
  static std::mutex mutex;
  static TempFolder folder;  // removed at exit with every file in it
  static std::map<std::tuple<int, int, double>, std::string> files;
  const std::lock_guard lock(mutex);
  auto [file, fresh] = files.try_emplace({channels, taps, rate});
  if (fresh) {
    const std::string path =
        (folder.path() / ("ir-" + std::to_string(channels) + "x" + std::to_string(taps) + "-" +
                          std::to_string(std::lround(rate)) + ".wav"))
            .string();
    try {
      write_irs(path, channels, taps, rate);
    } catch (...) {
      files.erase(file);
      throw;
    }
    file->second = path;
  }
  return file->second;
}
#endif

}  // namespace

std::vector<float> bench_ir(int channel, int taps) {
  IrTaps gen(channel, taps);
  std::vector<float> ir(taps);
  for (auto& tap : ir) tap = gen.next();
  return ir;
}

const std::vector<ScenarioInfo>& scenarios() {
  static const std::vector<ScenarioInfo> all = {
      {.kind = ScenarioKind::console,
       .name = "console",
       .unit_name = "N",
       .description = "three-stage console: N inputs each with gate, compressor and 5-band EQ; "
                      "N/2 buses and N/4 matrices each with compressor and EQ",
       .taps = 0,
       .channels_per_unit = 1,
       .irs_per_unit = 0,
       .unit = 4,
       .min_count = 8,
       .max_count = 16384,
       .frames = {32, 64, 128}},
      {.kind = ScenarioKind::convolution,
       .name = "conv4096",
       .unit_name = "channels",
       .description = "parallel mono 4096-tap convolutions, every channel with its own IR",
       .taps = 4096,
       .channels_per_unit = 1,
       .irs_per_unit = 1,
       .unit = 8,
       .min_count = 8,
       .max_count = 65536,
       .frames = {32}},
      {.kind = ScenarioKind::convolution,
       .name = "conv65536",
       .unit_name = "reverbs",
       .description = "true-stereo 65536-tap convolution reverbs (2 in, 2 out, 4 IRs each)",
       .taps = 65536,
       .channels_per_unit = 2,
       .irs_per_unit = 4,
       .unit = 1,
       .min_count = 1,
       .max_count = 8192,
       .frames = {128}},
      {.kind = ScenarioKind::nam,
       .name = "nam",
       .unit_name = "instances",
       .description = "neural amp models (the standard A1 WaveNet unless --model), mono, every "
                      "instance with its own input",
       .taps = 0,
       .channels_per_unit = 1,
       .irs_per_unit = 0,
       .unit = 1,
       .min_count = 1,
       .max_count = 4096,
       .frames = {32, 128}},
  };
  return all;
}

const ScenarioInfo& scenario(std::string_view name) {
  std::string known;
  for (const auto& s : scenarios()) {
    if (s.name == name) return s;
    known += (known.empty() ? "" : ", ") + std::string(s.name);
  }
  throw Error("audio bench: unknown scenario '" + std::string(name) + "' (known: " + known + ")");
}

std::string unavailable(const ScenarioInfo& s) {
  if (s.kind == ScenarioKind::console) return {};
  if (s.kind == ScenarioKind::nam) {
#ifdef SIGPU_HAVE_AUDIO_NAM
    return {};
#else
    return "needs the nam effect (a build with the nam module)";
#endif
  }
#ifndef SIGPU_HAVE_AUDIO_CONVOLUTION
  return "needs the convolution effect (a build with the convolution module)";
#elif !defined(SIGPU_HAVE_SNDFILE)
  return "needs libsndfile (the convolution effect reads its IRs from files)";
#else
  return {};
#endif
}

int convolution_nodes(const ScenarioInfo& s, int count, Backend backend, int requested,
                      unsigned threads) {
  if (s.kind != ScenarioKind::convolution || count < 1) return 0;
  const int per_node = kMaxNodeIrs / s.irs_per_unit;
  const int fewest = (count + per_node - 1) / per_node;
  int nodes = requested;
  if (nodes <= 0) {
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    nodes = resolve(backend) == Backend::cpu_parallel ? 4 * static_cast<int>(threads) : fewest;
  }
  return std::clamp(nodes, fewest, count);
}

std::string default_nam_model() {
  const char* root = std::getenv("SIGPU_SOURCE_DIR");
  return (root && *root ? std::string(root) + "/" : std::string()) +
         "examples/audio/models/a1-wavenet.nam";
}

Graph scenario_graph(const ScenarioInfo& s, int count, double sample_rate, int nodes,
                     const std::string& model) {
  if (count < s.unit || count % s.unit) {
    throw Error("audio bench: " + std::string(s.name) + " needs a count that is a positive " +
                "multiple of " + std::to_string(s.unit) + ", not " + std::to_string(count));
  }
  if (s.kind == ScenarioKind::console) return console_graph(count);
  if (const auto why = unavailable(s); !why.empty()) {
    throw Error("audio bench: the " + std::string(s.name) + " scenario " + why);
  }
  if (s.kind == ScenarioKind::nam) {
    // One node: its channels are the instances, batched into the same launches on the GPU.
    const nlohmann::json graph = {
        {"name", "nam"},
        {"inputs", count},
        {"nodes",
         {{{"id", "amp"},
           {"type", "nam"},
           {"input", "in:0-" + std::to_string(count - 1)},
           {"params",
            {{"model",
              std::filesystem::absolute(model.empty() ? default_nam_model() : model).string()}}}}}},
        {"outputs", "amp"}};
    return Graph::parse(graph.dump());
  }
#ifndef SIGPU_HAVE_AUDIO_CONVOLUTION
  (void)sample_rate, (void)nodes;
  return {};
#else
  const int per_node = kMaxNodeIrs / s.irs_per_unit;
  if (nodes < (count + per_node - 1) / per_node || nodes > count) {
    throw Error("audio bench: " + std::to_string(count) + " " + std::string(s.unit_name) + " of " +
                std::string(s.name) + " cannot be split over " + std::to_string(nodes) +
                " convolution nodes");
  }
  const bool stereo = s.irs_per_unit == 4;
  nlohmann::json graph = {{"name", std::string(s.name)}, {"inputs", count * s.channels_per_unit}};
  nlohmann::json& list = graph["nodes"] = nlohmann::json::array();
  nlohmann::json& outputs = graph["outputs"] = nlohmann::json::array();
  for (int k = 0; k < nodes; ++k) {
    const auto first = static_cast<int>(std::int64_t(count) * k / nodes);
    const auto units = static_cast<int>(std::int64_t(count) * (k + 1) / nodes) - first;
    const int irs = units * s.irs_per_unit;
    const std::string ir = ir_file(irs, s.taps, sample_rate);
    const std::string id = "conv" + std::to_string(k);
    const std::string in = "in:" + std::to_string(first * s.channels_per_unit) + "-" +
                           std::to_string((first + units) * s.channels_per_unit - 1);
    list.push_back({{"id", id},
                    {"type", "convolution"},
                    {"input", stereo ? nlohmann::json{in, in} : nlohmann::json(in)},
                    {"params", {{"ir", ir}}}});
    if (stereo) {
      const std::string mix = "mix" + std::to_string(k);
      list.push_back(
          {{"id", mix}, {"type", "mixer"}, {"input", id}, {"params", {{"outputs", 2 * units}}}});
      outputs.push_back(mix);
    } else {
      outputs.push_back(id);
    }
  }
  const std::string json = graph.dump();
  return Graph::parse(json);
#endif
}

BenchResult bench_scenario(const ScenarioInfo& s, int count, Backend backend, std::uint64_t periods,
                           const ScenarioRun& run) {
  const Graph g =
      scenario_graph(s, count, run.sample_rate,
                     convolution_nodes(s, count, backend, run.nodes, run.threads), run.model);
  Engine engine(g, {.backend = backend,
                    .period = run.frames,
                    .sample_rate = run.sample_rate,
                    .threads = run.threads,
                    .fifo_priority = run.fifo_priority});
  engine.setup();
  return time_periods(
      engine, count, periods,
      run.full ? std::numeric_limits<std::uint64_t>::max() : allowed_misses(periods), run.planar,
      run.late);
}

}  // namespace sigpu::audio
