// The real-time benchmark's scenarios, each an audio graph of `count` units run through the
// same Engine: the three-stage console (count = N inputs), parallel mono 4096-tap convolutions
// (count = channels, each with its own IR) and true-stereo 65536-tap convolution reverbs
// (count = reverbs; 2 inputs, 2 outputs, 4 IRs each: L->L, R->L, L->R, R->R) and neural amp
// models (count = mono instances of a .nam model, each with its own input).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <sigpu/audio.hpp>

namespace sigpu::audio {

enum class ScenarioKind { console, convolution, nam };

struct ScenarioInfo {
  ScenarioKind kind;
  std::string_view name, unit_name, description;
  int taps;                  ///< IR length (0: the console)
  int channels_per_unit;     ///< graph input channels per unit of count
  int irs_per_unit;          ///< IR channels per unit (0: the console)
  int unit;                  ///< counts are multiples of this
  int min_count, max_count;  ///< the search's default range
  std::vector<int> frames;   ///< default period sizes
};

const std::vector<ScenarioInfo>& scenarios();
/// Throws Error listing the known names.
const ScenarioInfo& scenario(std::string_view name);

/// Empty where this build can run the scenario, else why not (the convolution scenarios need
/// the convolution module and libsndfile, the nam scenario the nam module).
std::string unavailable(const ScenarioInfo& s);

/// IR channels one convolution node (its IR file: libsndfile's limit) holds at most.
inline constexpr int kMaxNodeIrs = 1024;

/// IR channel `channel` of every generated IR file: decaying noise from seed `channel`, 60 dB
/// down at its end, about unit energy.
std::vector<float> bench_ir(int channel, int taps);

/// How many convolution nodes a scenario's units are split over (0 for the console). With
/// `requested` > 0 that many (within what the units and kMaxNodeIrs allow); otherwise as few as
/// kMaxNodeIrs allows for cuda and cpu (one batched convolver per node), and four per thread
/// (`threads`, 0: one per hardware thread) for cpu-parallel: the engine runs one node's
/// convolver on one thread and its pool hands out nodes in chunks of four.
int convolution_nodes(const ScenarioInfo& s, int count, Backend backend, int requested = 0,
                      unsigned threads = 0);

/// The scenario's graph for `count` units. Convolution node k takes units [count * k / nodes,
/// count * (k + 1) / nodes); its IR file (float WAV, channel j = bench_ir(j)) is written once per
/// process into a folder of its own under the system's temporary folder (removed at exit) and
/// read while the graph is parsed. Mono: node channel j through IR j. True stereo, node of c
/// reverbs: the node reads its 2c inputs twice (4c channels: IR j for input j) and a mixer sums
/// contiguous pairs into 2c outputs, the c left outputs (LL + RL) and then the c right ones (LR +
/// RR). nam: one node of `count` instances of the model at `model` (empty: default_nam_model()).
/// Throws Error where the build has no convolution effect or no libsndfile.
Graph scenario_graph(const ScenarioInfo& s, int count, double sample_rate, int nodes,
                     const std::string& model = {});

/// The standard A1 WaveNet of the test fixtures: under $SIGPU_SOURCE_DIR when set, else relative
/// to the working folder (the repository root).
std::string default_nam_model();

/// Untimed periods before a timed run.
inline constexpr std::uint64_t kWarmupPeriods = 200;

/// Late periods time_periods() records at most.
inline constexpr std::size_t kMaxLateRecorded = 4096;

/// Times `periods` back-to-back periods of a set-up engine (after kWarmupPeriods), each against
/// the period's duration, with inputs from a noise signal: process() on one array per channel
/// (what an audio callback hands over; the engine copies them into its own buffers), or with
/// `planar` process_planar() on the period's planar block (pinned host memory for CUDA, which
/// its kernels read and write directly). Stops early once more than `stop_after_misses`
/// periods were late (the result's `periods` says how many ran). `late`, when given, receives
/// the indices of the first kMaxLateRecorded late periods (0: the first timed one).
BenchResult time_periods(
    Engine& engine, int count, std::uint64_t periods,
    std::uint64_t stop_after_misses = std::numeric_limits<std::uint64_t>::max(),
    bool planar = false, std::vector<std::uint64_t>* late = nullptr);

/// How a scenario runs: the period, the rate, for the engine's CPU pool its threads (0: one
/// per hardware thread), `nodes` as convolution_nodes' `requested`, and the I/O of
/// time_periods().
struct ScenarioRun {
  int frames = 128;
  double sample_rate = 48000;
  int nodes = 0;
  unsigned threads = 0;
  bool planar = false;
  std::vector<std::uint64_t>* late = nullptr;  ///< time_periods()'s late periods
  std::string model;                           ///< nam: the .nam file (empty: the default)
};

/// One run of the scenario: builds the graph and an Engine, then time_periods() with the early
/// stop at allowed_misses(periods) (bench_search.hpp).
BenchResult bench_scenario(const ScenarioInfo& s, int count, Backend backend, std::uint64_t periods,
                           const ScenarioRun& run);

}  // namespace sigpu::audio
