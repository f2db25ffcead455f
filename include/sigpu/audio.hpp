// sigpu audio: a real-time signal graph of audio effects (gain, pan, mixer, router, biquad EQ,
// noise gate, compressor, delay, and convolution in builds with the convolution module) run one
// period at a time on the CPU (serial or a thread pool) or on the GPU (one CUDA graph launch per
// period). Drivers: an offline renderer (below) and a JACK client (`sigpu audio run`).
//
//   auto graph = sigpu::audio::Graph::load("examples/audio/guitar.json");
//   sigpu::audio::Engine engine(graph, {.backend = sigpu::Backend::cuda, .period = 64});
//   engine.setup();
//   engine.process(in, out);                    // in[c], out[c]: `period` floats per channel
//   engine.update("eq", "band.1.gain_db", 3);   // any thread; applied at the next period
//   auto buses = engine.meters();               // with .meters = true: every node's levels
//
// Graph files are JSON (docs/audio.md). Samples are float32, planar (one array per channel),
// full scale is 1.0. Every error is a sigpu::Error whose message names the node and the port
// or parameter.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <sigpu/core.hpp>

namespace sigpu::audio {

/// Integer variables a graph file may use in channel counts ("N/2"); the file's own
/// "variables" give the defaults, these override them.
using Variables = std::map<std::string, std::int64_t>;

/// Limits on graph files, checked before anything is allocated for what the file asks: a real
/// graph is a few KB (examples/audio/: at most 2.3 KB). Text beyond kMaxGraphBytes is refused
/// before it is parsed; the parser stops at the first value past the other limits.
inline constexpr std::size_t kMaxGraphBytes = std::size_t{1} << 20;  ///< 1 MiB of JSON
inline constexpr int kMaxGraphDepth = 32;                            ///< nesting of [ and {
inline constexpr std::size_t kMaxGraphNodes = 4096;
inline constexpr std::size_t kMaxGraphValues = std::size_t{1} << 18;  ///< JSON values in all

/// A parsed and validated graph (routing, effect types, parameters). It does not depend on the
/// period or the sample rate; frequencies are checked against Nyquist when an Engine is made.
class Graph {
 public:
  /// Throws InputError naming the node and port or parameter (cycles, unknown nodes or
  /// effects, channel-count mismatches, dangling ports, malformed JSON with its byte, a file
  /// or text past the limits above), UnsupportedError for a valid file this build cannot run
  /// (an effect of a module it lacks, a .nam model of an unsupported architecture).
  /// load() resolves relative file names in parameters (IRs) against the file's folder.
  static Graph parse(std::string_view json, const Variables& vars = {});
  static Graph load(const std::string& path, const Variables& vars = {});

  Graph();
  ~Graph();
  Graph(const Graph&);
  Graph& operator=(const Graph&);
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;

  int inputs() const;   ///< graph input channels
  int outputs() const;  ///< graph output channels
  std::vector<std::string> nodes() const;

  struct Impl;
  const Impl& impl() const { return *impl_; }
  explicit Graph(std::shared_ptr<const Impl> impl);

 private:
  std::shared_ptr<const Impl> impl_;
};

struct EngineOptions {
  Backend backend = Backend::automatic;
  int period = 128;            ///< frames per period, 1 .. 65536
  double sample_rate = 48000;  ///< Hz
  unsigned threads = 0;        ///< cpu_parallel: worker threads, 0 = one per core
  /// cpu_parallel: > 0 asks SCHED_FIFO at this priority (1 .. 99) for the pool's workers, as
  /// make_realtime() does for the thread that calls process(). Best effort:
  /// Engine::realtime_note() says what was refused.
  int fifo_priority = 0;
  /// Bus meters: each period also measures every node's output channels (peak and sum of
  /// squares), read with Engine::meters(). Off by default: it costs one more pass over the
  /// node outputs per period (one more kernel node in the CUDA graph).
  bool meters = false;
};

/// One node's output bus as Engine::meters() reads it: per output channel, the peak and the RMS
/// (linear, full scale 1.0) over the periods since the previous read.
struct BusMeter {
  std::string node;
  std::vector<float> peak, rms;
};

/// Runs a Graph. The phases: the constructor configures (checks every parameter against the
/// sample rate; nothing is allocated), setup() allocates, process() runs one period,
/// update() changes a parameter from any thread, teardown() (or the destructor) frees
/// everything setup() allocated.
class Engine {
 public:
  Engine(const Graph& graph, const EngineOptions& options);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Allocates buffers and state (host, and device for cuda) and clears the state.
  void setup();
  void teardown();
  bool ready() const;

  /// One period. in[c] (inputs() arrays) and out[c] (outputs() arrays) hold period() floats.
  /// Call from one thread at a time; allocates nothing, takes no lock, makes no system call
  /// (tests/audio/test_realtime.cpp). Requires setup().
  void process(const float* const* in, float* const* out);
  /// The same on planar blocks: channel c at in + c * period(). With the cuda backend they
  /// must be device-accessible (device memory or pinned host memory): the kernels read and
  /// write them directly, and the CUDA graph's I/O nodes are re-pointed when they change.
  void process_planar(const float* in, float* out);

  /// Any thread. Checks the value (throws Error naming node and parameter; the graph is left
  /// untouched) and queues it; it takes effect at the next period boundary, ramped over one
  /// period where a jump would click (gains, EQ coefficients, delay time).
  void update(std::string_view node, std::string_view param, double value);

  int inputs() const;
  int outputs() const;
  int period() const;
  double sample_rate() const;
  Backend backend() const;  ///< the backend actually used (automatic resolved)
  /// CUDA backend: kernel launches in one period's graph (batched per effect kind and level).
  int kernels_per_period() const;
  /// After setup(): empty, or why the pool's workers did not get EngineOptions::fifo_priority.
  std::string realtime_note() const;
  /// With EngineOptions::meters, after setup(): every node's bus in the graph's order, measured
  /// over the periods since the previous call (all zero when none ran), which restarts the
  /// count. Any one thread (it allocates; the periods keep running): a period that ends during
  /// the call may count in this read or the next. Throws Error without meters or setup().
  std::vector<BusMeter> meters();

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// ---- real-time scheduling ------------------------------------------------------------------

/// What make_realtime() obtained.
struct RealtimeStatus {
  bool fifo = false;    ///< the calling thread runs under SCHED_FIFO
  bool locked = false;  ///< the process's memory is locked (mlockall, current and future)
  std::string note;     ///< empty, or what was refused, why, and how to allow it (one line)
};

/// For the thread that calls Engine::process(): asks SCHED_FIFO at `priority` (1 .. 99) for the
/// calling thread, locks the process's memory (mlockall) where RLIMIT_MEMLOCK or CAP_IPC_LOCK
/// allows all of it (a partial limit would make later allocations fail), and touches the
/// thread's stack so that its first deep call does not fault. Call it after Engine::setup(), off
/// the period (it makes system calls). Never throws for a refusal: without CAP_SYS_NICE or an
/// rtprio limit the thread stays as it is and `note` says so (docs/audio.md, "Real-time").
RealtimeStatus make_realtime(int priority);

// ---- effect types ---------------------------------------------------------------------------

/// One parameter of an effect type, as its descriptor declares it (the table behind graph-file
/// validation, Engine::update and the docs).
struct ParamInfo {
  std::string name;                     ///< "gain_db"; "band.K.freq": K is an EQ band's index
  std::string type;                     ///< number, integer, choice, file or list
  double fallback = 0, lo = 0, hi = 0;  ///< number and integer
  std::string unit;                     ///< dB, ms, Hz or empty
  /// fixed: graph file only; ramped: Engine::update ramps it over a period; smoothed: taken at
  /// once, the effect's own envelope smooths it.
  std::string update;
  std::string help;
  std::string choices;  ///< choice: "a, b, c"
  bool required = false;
};
struct EffectInfo {
  std::string type, summary;
  bool sidechain = false;
  std::vector<ParamInfo> params;
};
/// The effect types this build has, in the order docs list them.
std::vector<EffectInfo> describe_effects();

// ---- memory accounting ----------------------------------------------------------------------

/// What the audio module holds right now through its allocator hooks (every buffer, state and
/// parameter array of every Engine goes through them).
struct MemoryStats {
  std::int64_t host_bytes = 0, host_blocks = 0;
  std::int64_t device_bytes = 0, device_blocks = 0;
};
MemoryStats memory_stats();

// ---- evaluator ------------------------------------------------------------------------------

/// How far `test` is from `reference` (full scale 1.0): the largest absolute difference and
/// the RMS difference, both in dBFS (-400 when identical), at the time offset in
/// [-max_offset, max_offset] (test[i + offset] against reference[i]) with the smallest RMSD.
struct Difference {
  double max_abs_dbfs = -400, rmsd_dbfs = -400;
  int offset = 0;
  std::size_t compared = 0;  ///< samples in the overlap
};
Difference compare(std::span<const float> reference, std::span<const float> test,
                   int max_offset = 0);

// ---- drivers --------------------------------------------------------------------------------

struct RenderOptions {
  Backend backend = Backend::automatic;
  int period = 1024;
  double tail_seconds = 0;  ///< extra output after the input ends (delay tails)
  /// Called now and then with frames done and the total.
  std::function<void(std::uint64_t, std::uint64_t)> progress;
};
struct RenderReport {
  std::uint64_t frames = 0;
  double sample_rate = 0, seconds = 0;
  double realtime() const { return seconds > 0 ? frames / sample_rate / seconds : 0; }
};
/// Renders an audio file (WAV, FLAC, anything libsndfile reads) through the graph into
/// `out_path` (WAV: float32; FLAC: 24-bit), at the input's sample rate. The file's channel
/// count must equal the graph's inputs.
RenderReport render(const Graph& graph, const std::string& in_path, const std::string& out_path,
                    const RenderOptions& options);

// ---- benchmark ------------------------------------------------------------------------------

/// The three-stage console: N inputs each with gate, compressor and 5-band EQ; N/2 buses and
/// N/4 matrices each with compressor and EQ (N a multiple of 4).
Graph console_graph(int N);

struct BenchResult {
  Backend backend{};
  int frames = 0, N = 0;
  std::uint64_t periods = 0, misses = 0;
  double mean_us = 0, p99_us = 0, p999_us = 0, p9999_us = 0, max_us = 0, deadline_us = 0;
  double miss_rate() const { return periods ? double(misses) / periods : 0; }
};
/// Runs `periods` back-to-back periods of the console with N inputs on `backend`, timing each
/// (process() wall time: host copies, launch and wait) against the period's duration.
BenchResult bench_console(int N, Backend backend, int frames, std::uint64_t periods,
                          double sample_rate = 48000);

// ---- JACK ----------------------------------------------------------------------------------
// The JACK client behind `sigpu audio run`: JACK's real-time callback and the processing thread
// (which may drive the GPU) exchange periods through two lock-free single-producer
// single-consumer rings, so the callback never waits, allocates, locks or logs.
struct JackOptions {
  Backend backend = Backend::automatic;
  std::string client_name = "sigpu";
  std::string server;  ///< empty: the default server
  double seconds = 0;  ///< 0: until `stop` is set
  /// Latency in periods (>= 1): the output of a callback is the input of this many callbacks
  /// before, so the processing thread has this many periods minus the copies for each.
  int extra_periods = 1;
  /// > 0: the processing thread and the engine's pool under SCHED_FIFO at this priority, memory
  /// locked (make_realtime()); what is refused is said once on stderr.
  int rt_priority = 0;
};

struct JackReport {
  std::uint64_t periods = 0;  ///< JACK callbacks
  std::uint64_t xruns = 0;    ///< reported by the server
  std::uint64_t late = 0;     ///< callbacks that found no processed period (played silence)
  std::uint64_t dropped = 0;  ///< input periods lost because the processing thread fell behind
  int period = 0;
  double sample_rate = 0;
  int latency_frames = 0;
  std::string backend;
};

/// Runs the graph as a JACK client with ports in_1.. and out_1.. at the server's period and
/// sample rate until `seconds` pass, `stop` becomes true, or the server shuts down. Throws
/// Error when no server answers or the graph does not fit (e.g. a frequency above Nyquist).
JackReport run_jack(const Graph& graph, const JackOptions& options, const std::atomic<bool>& stop);

// ---- control surface ------------------------------------------------------------------------
// `sigpu audio serve`: the graph runs (through JACK, or looping a sound file) while a web page
// shows it as nodes and connections, with every parameter as a control (from the effects'
// descriptors), level meters (graph inputs and outputs, and every node's bus) and the period-time
// histogram, and edits it live: parameter changes are ramped at a period boundary, structural edits
// (add, remove, rewire nodes, load a graph) are built off the audio thread and cross-faded in; an
// invalid edit is refused and the running graph stays.
struct ServeOptions {
  Backend backend = Backend::automatic;
  std::string graph_path;  ///< the graph file (relative file names resolve against its folder)
  Variables variables;
  /// Exactly one source: loop_path (a sound file played in a loop at its sample rate, in real
  /// time) or jack (the JACK server's ports in_N/out_N).
  std::string loop_path;
  bool jack = false;
  std::string jack_server;
  int period = 256;         ///< loop: frames per period (JACK: the server's)
  std::string record_path;  ///< loop: also write what is played to this WAV file
  std::string listen = "127.0.0.1";
  int port = 8088;  ///< 0: any free port
  /// Required in every request when non-empty (the CLI makes one up when --listen is given).
  std::string token;
  double seconds = 0;   ///< 0: until `stop`
  int rt_priority = 0;  ///< > 0: the audio thread under SCHED_FIFO, as JackOptions::rt_priority
  /// Called once the page is served, with its address (including the token).
  std::function<void(const std::string& url)> on_ready;
};
/// Throws Error when the graph, the source or the address cannot be used.
void serve(const ServeOptions& options, const std::atomic<bool>& stop);

}  // namespace sigpu::audio
