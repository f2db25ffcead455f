// Engine: configures a clone of each node's effect, compiles the graph into a Plan (jobs
// grouped by level and kind), and hands it to a backend runner.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>

#include "audio/graph.hpp"
#include "audio/runner.hpp"
#include "audio/update_queue.hpp"

namespace sigpu::audio {

struct Engine::Impl {
  Graph source;
  const Graph::Impl* graph = nullptr;
  EngineOptions options;
  Backend backend{};
  std::vector<std::unique_ptr<Effect>> effects;  ///< per node, the graph's order
  std::optional<Plan> plan;
  std::unique_ptr<Runner> runner;
  UpdateQueue updates;
  /// Per bus channel, in the graph's node order: what the periods since the last meters() read
  /// measured. process() adds to them, meters() takes and clears them.
  struct BusLevel {
    std::atomic<float> peak{0};
    std::atomic<double> sum_squares{0};
    std::atomic<std::uint64_t> frames{0};
  };
  HostVector<BusLevel> bus_levels;

  void build_plan();
  void add_meters();
};

namespace {

constexpr int kMaxPeriod = 65536;

}  // namespace

void Engine::Impl::build_plan() {
  const Graph::Impl& g = *graph;
  const auto P = static_cast<std::uint32_t>(options.period);
  Plan& p = plan.emplace();
  p.period = options.period;
  p.inputs = g.inputs;
  // Arena: graph inputs, then every node's outputs.
  std::vector<std::uint32_t> base(g.nodes.size());
  std::uint64_t arena = std::uint64_t(g.inputs) * P;
  for (std::size_t k = 0; k < g.nodes.size(); ++k) {
    base[k] = static_cast<std::uint32_t>(arena);
    arena += std::uint64_t(g.nodes[k].outputs) * P;
    if (arena > 0xffffffffu) throw Error("graph: buffers exceed 2^32 samples at this period");
  }
  p.arena = static_cast<std::uint32_t>(arena);
  const auto offset = [&](const ChannelRef& r) {
    return r.node == kGraphInput ? r.channel * P : base[r.node] + r.channel * P;
  };
  // One group per (level, kind): nodes sorted so that each group's jobs are contiguous.
  std::vector<int> order(g.nodes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const auto ka = std::make_pair(g.nodes[a].level, effects[a]->kind());
    const auto kb = std::make_pair(g.nodes[b].level, effects[b]->kind());
    return ka < kb;
  });
  std::vector<int> group_of(g.nodes.size(), -1);
  for (int k : order) {
    const NodeSpec& n = g.nodes[k];
    const Kind kind = effects[k]->kind();
    if (p.groups.empty() || p.groups.back().level != n.level || p.groups.back().kind != kind) {
      Group grp;
      grp.kind = kind;
      grp.level = n.level;
      grp.begin = grp.end = p.jobs(kind);
      p.groups.push_back(grp);
    }
    Group& grp = p.groups.back();
    group_of[k] = static_cast<int>(p.groups.size()) - 1;
    NodeIo io;
    for (const auto* list : {&n.input, &n.sidechain}) {
      auto& dest = list == &n.input ? io.in : io.side;
      for (const auto& r : *list) {
        dest.push_back(offset(r));
        if (r.node == kGraphInput) {
          grp.reads_input = true;
        } else if (std::find(grp.deps.begin(), grp.deps.end(), group_of[r.node]) ==
                   grp.deps.end()) {
          grp.deps.push_back(group_of[r.node]);
        }
      }
    }
    for (int c = 0; c < n.outputs; ++c) io.out.push_back(base[k] + c * P);
    effects[k]->setup(p, io);
    grp.end = p.jobs(kind);
    p.levels = std::max(p.levels, n.level + 1);
  }
  for (const auto& r : g.outputs) p.outputs.push_back(offset(r));
  p.meters = options.meters;
}

void Engine::Impl::add_meters() {
  const float* m = runner->meters();
  const auto n = static_cast<std::uint64_t>(options.period);
  for (std::size_t c = 0; c < bus_levels.size(); ++c) {
    // The reader's exchange between a load and a store here may lose or double one period of a
    // window: a meter can afford that, the audio thread cannot afford a read-modify-write loop.
    BusLevel& b = bus_levels[c];
    b.peak.store(std::max(b.peak.load(std::memory_order_relaxed), m[2 * c]),
                 std::memory_order_relaxed);
    b.sum_squares.store(b.sum_squares.load(std::memory_order_relaxed) + m[2 * c + 1],
                        std::memory_order_relaxed);
    b.frames.store(b.frames.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
}

Engine::Engine(const Graph& graph, const EngineOptions& options) : impl_(std::make_unique<Impl>()) {
  if (options.period < 1 || options.period > kMaxPeriod) {
    throw Error("audio engine: period " + std::to_string(options.period) +
                " is out of range [1, 65536]");
  }
  if (options.fifo_priority < 0 || options.fifo_priority > 99) {
    throw Error("audio engine: fifo_priority " + std::to_string(options.fifo_priority) +
                " is out of range [0, 99]");
  }
  if (!(options.sample_rate >= 1000 && options.sample_rate <= 1536000)) {
    throw Error("audio engine: sample rate " + number_text(options.sample_rate) +
                " Hz is out of range [1000, 1536000]");
  }
  impl_->source = graph;
  impl_->graph = &impl_->source.impl();
  impl_->options = options;
  impl_->backend = resolve(options.backend);
  for (const auto& n : graph.impl().nodes) {
    auto e = n.effect->clone();
    try {
      e->configure(options.sample_rate, options.period);
    } catch (const ParamError& err) {
      // The graph cannot run at this rate and period: the CLI's "not of the format", as for the
      // parameters the loader refuses.
      throw InputError("node '" + n.id + "' parameter '" + err.param() + "': " + err.what());
    }
    impl_->effects.push_back(std::move(e));
  }
}

Engine::~Engine() {
  teardown();
}

void Engine::setup() {
  teardown();
  impl_->build_plan();
  try {
    if (impl_->options.meters)
      impl_->bus_levels = HostVector<Impl::BusLevel>(impl_->plan->bus_channels());
    if (impl_->backend == Backend::cuda) {
      impl_->runner = make_cuda_runner(*impl_->plan);
    } else {
      impl_->runner = make_cpu_runner(*impl_->plan,
                                      impl_->backend == Backend::cpu ? 1u : impl_->options.threads,
                                      impl_->options.fifo_priority);
    }
  } catch (...) {
    teardown();
    throw;
  }
}

void Engine::teardown() {
  impl_->runner.reset();
  impl_->plan.reset();
  HostVector<Impl::BusLevel>().swap(impl_->bus_levels);
}

bool Engine::ready() const {
  return impl_->runner != nullptr;
}

void Engine::process(const float* const* in, float* const* out) {
  if (!impl_->runner) throw Error("audio engine: process() before setup()");
  const std::size_t n = impl_->options.period;
  float* staged_in = impl_->runner->input_buffer();
  float* staged_out = impl_->runner->output_buffer();
  for (int c = 0; c < inputs(); ++c) std::memcpy(staged_in + c * n, in[c], n * sizeof(float));
  process_planar(staged_in, staged_out);
  for (int c = 0; c < outputs(); ++c) std::memcpy(out[c], staged_out + c * n, n * sizeof(float));
}

void Engine::process_planar(const float* in, float* out) {
  if (!impl_->runner) throw Error("audio engine: process() before setup()");
  Plan& plan = *impl_->plan;
  for (Update u; impl_->updates.pop(u);) impl_->effects[u.node]->apply(u.param, u.value, plan);
  impl_->runner->process(in, out);
  plan.settle();
  if (plan.meters) impl_->add_meters();
}

void Engine::update(std::string_view node, std::string_view param, double value) {
  const int k = impl_->graph->index(node);
  if (k < 0) throw Error("update: no node '" + std::string(node) + "' in the graph");
  int id = 0;
  try {
    id = impl_->effects[k]->check(param, value);
  } catch (const ParamError& e) {
    throw Error("update: node '" + std::string(node) + "' parameter '" + e.param() +
                "': " + e.what());
  }
  if (!impl_->updates.push({k, id, value})) {
    throw Error("update: node '" + std::string(node) + "' parameter '" + std::string(param) +
                "': the update queue is full (is the audio thread running?)");
  }
}

int Engine::inputs() const {
  return impl_->graph->inputs;
}
int Engine::outputs() const {
  return static_cast<int>(impl_->graph->outputs.size());
}
int Engine::period() const {
  return impl_->options.period;
}
double Engine::sample_rate() const {
  return impl_->options.sample_rate;
}
Backend Engine::backend() const {
  return impl_->backend;
}
int Engine::kernels_per_period() const {
  return impl_->runner ? impl_->runner->kernels() : 0;
}
std::vector<BusMeter> Engine::meters() {
  if (!impl_->runner) throw Error("audio engine: meters() before setup()");
  if (!impl_->options.meters) throw Error("audio engine: meters() needs EngineOptions::meters");
  std::vector<BusMeter> out;
  std::size_t c = 0;
  for (const NodeSpec& n : impl_->graph->nodes) {
    BusMeter& m = out.emplace_back();
    m.node = n.id;
    for (int k = 0; k < n.outputs; ++k, ++c) {
      Impl::BusLevel& b = impl_->bus_levels[c];
      const std::uint64_t frames = b.frames.exchange(0, std::memory_order_relaxed);
      const double sum = b.sum_squares.exchange(0, std::memory_order_relaxed);
      m.peak.push_back(b.peak.exchange(0, std::memory_order_relaxed));
      m.rms.push_back(frames ? static_cast<float>(std::sqrt(sum / double(frames))) : 0.0f);
    }
  }
  return out;
}

std::string Engine::realtime_note() const {
  return impl_->runner ? impl_->runner->realtime_note() : std::string();
}

}  // namespace sigpu::audio
