// sigpu audio benchmark: the real-time benchmark's scenarios (graphs of `count` units run
// through one Engine: the three-stage console, parallel mono convolutions, true-stereo
// convolution reverbs, neural amp models) and the search for the largest count a backend runs
// within the deadline, as `sigpu audio bench` uses them.
//
// The search is separate from the timing so that tests can drive it with a fake measurement.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
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
  /// Runs every period even when many are late (a worst-case measurement at a fixed count),
  /// instead of stopping at allowed_misses(periods).
  bool full = false;
  int fifo_priority = 0;  ///< EngineOptions::fifo_priority (the pool's workers)
};

/// One run of the scenario: builds the graph and an Engine, then time_periods() with the early
/// stop at allowed_misses(periods) (below) unless run.full.
BenchResult bench_scenario(const ScenarioInfo& s, int count, Backend backend, std::uint64_t periods,
                           const ScenarioRun& run);

// ---- the search ----------------------------------------------------------------------------

/// The pass mark: at most 0.1% of the periods late, p99.9 within the period, and the run not
/// stopped early (a run stops once its misses already exceed the 0.1%).
inline constexpr double kMaxMissRate = 0.001;
bool passes(const BenchResult& r, std::uint64_t planned_periods);
/// The most misses a run of `periods` may have and still pass.
std::uint64_t allowed_misses(std::uint64_t periods);

struct SearchOptions {
  int min_count = 1, max_count = 1;  ///< counts tried lie in [min_count, max_count]
  int unit = 1;                      ///< and are multiples of this (min_count is one)
  std::uint64_t search_periods = 2000, confirm_periods = 100000;
  /// Asked before every run (a confirmation or not, its periods): true, and no run starts any
  /// more.
  std::function<bool(bool confirmation, std::uint64_t periods)> out_of_time =
      [](bool, std::uint64_t) { return false; };
};

/// One run: count, periods planned. The measurement may stop a run early once it has missed
/// more than allowed_misses(periods) deadlines (BenchResult::periods then says how many ran).
using Measure = std::function<BenchResult(int count, std::uint64_t periods)>;

struct SearchStep {
  bool confirmation = false;
  std::uint64_t planned = 0;
  bool passed = false;
  BenchResult result;
};

struct SearchOutcome {
  enum class End {
    confirmed,  ///< a confirmation run passed: `confirmed` holds it
    floor,      ///< even min_count failed (in the search or its confirmation)
    budget,     ///< out of time first; `confirmed` is empty
  };
  End end = End::floor;
  std::optional<BenchResult> confirmed;
  int searched = 0;  ///< the largest count that passed a short run (0: none)
  std::vector<SearchStep> steps;
};

/// Where a run's late periods fell (indices in periods from its first timed one): a constant
/// gap points at something periodic on the host (a timer, a daemon), gaps of one at a slow
/// stretch, a late first one at a warm-up too short.
struct LatePattern {
  std::size_t late = 0;  ///< late periods seen (0: the rest is empty)
  std::uint64_t first = 0, min_gap = 0, median_gap = 0, max_gap = 0;
};
LatePattern late_pattern(const std::vector<std::uint64_t>& late);

/// Doubles from min_count while short runs pass, bisects between the last pass and the first
/// failure down to a step of an eighth (or `unit`), then confirms the candidate with a long run;
/// a failed confirmation steps down (by an eighth, then a quarter and a half after repeated
/// failures) and confirms again, until a run passes, min_count fails or time is out.
/// `on_step` sees every run as it ends (for printing).
SearchOutcome search_largest(const SearchOptions& options, const Measure& measure,
                             const std::function<void(const SearchStep&)>& on_step = {});

}  // namespace sigpu::audio
