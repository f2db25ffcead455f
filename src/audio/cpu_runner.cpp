// The CPU backend: the plan's groups level by level; within a level every job (one channel of
// one node, or one heavy node) is independent, so the thread pool splits them. Each kind runs
// its jobs through its own CPU processing (Kind::Cpu).
#include <algorithm>
#include <cstring>
#include <optional>
#include <thread>

#include "audio/meter.hpp"
#include "audio/runner.hpp"
#include "core/no_denormals.hpp"
#include "core/rt_pool.hpp"

namespace sigpu::audio {
namespace {

template <typename... K>
using CpuTuple = std::tuple<std::optional<typename K::Cpu>...>;
template <typename L>
struct CpuKinds;
template <typename... K>
struct CpuKinds<KindList<K...>> {
  using type = CpuTuple<K...>;
};

class CpuRunner final : public Runner {
 public:
  CpuRunner(Plan& plan, unsigned threads, int fifo_priority) : plan_(plan) {
    arena_.assign(plan.arena, 0.0f);
    input_.assign(std::size_t(plan.inputs) * plan.period, 0.0f);
    output_.assign(plan.outputs.size() * plan.period, 0.0f);
    if (plan.meters) meters_.assign(2 * std::size_t(plan.bus_channels()), 0.0f);
    for_each_kind(
        [&](auto i) { std::get<i>(kinds_).emplace(std::get<i>(plan.kinds), plan.period); });
    // Per level: its groups and the running count of their jobs, for the parallel split.
    levels_.resize(plan.levels);
    for (std::size_t g = 0; g < plan.groups.size(); ++g) {
      auto& level = levels_[plan.groups[g].level];
      level.groups.push_back(static_cast<int>(g));
      level.starts.push_back(level.jobs);
      level.jobs += plan.groups[g].end - plan.groups[g].begin;
      with_kind(plan.groups[g].kind,
                [&](auto i) { level.heavy |= Kinds::At<decltype(i)::value>::heavy; });
    }
    // No more threads than the widest level has chunks (a heavy job, or four light ones): a
    // worker with nothing to do still spins, and a pool that fills every core leaves none idle
    // for any other thread that wakes up, so the scheduler puts it on a core running a chunk,
    // which then waits a whole time slice (milliseconds) while the period waits for it.
    std::size_t useful = 1;
    for (const auto& level : levels_) {
      useful = std::max(useful, level.heavy ? level.jobs : (level.jobs + 3) / 4);
    }
    const unsigned wanted = threads ? threads : std::max(1u, std::thread::hardware_concurrency());
    const auto size = static_cast<unsigned>(std::min<std::size_t>(wanted, useful));
    if (size > 1) {
      pool_ =
          std::make_unique<RtPool>(RtPoolOptions{.threads = size, .fifo_priority = fifo_priority});
    }
  }

  float* input_buffer() override { return input_.data(); }
  float* output_buffer() override { return output_.data(); }
  std::string realtime_note() const override { return pool_ ? pool_->setup().note : ""; }
  const float* meters() const override { return plan_.meters ? meters_.data() : nullptr; }

  void process(const float* in, float* out) override {
    const ScopedNoDenormals flush;  // decaying filters and envelopes must not slow a period
    const std::size_t n = plan_.period;
    std::memcpy(arena_.data(), in, sizeof(float) * n * plan_.inputs);
    for (const auto& level : levels_) {
      // About four chunks per thread, but no chunk below a few channels where a job is short
      // (a channel of an effect); a convolution node or an amp model is a long job on its own.
      const std::size_t grain =
          pool_ ? std::max<std::size_t>(level.heavy ? 1 : 4, level.jobs / (4 * pool_->size())) : 0;
      if (pool_ && level.jobs > grain) {
        pool_->run(
            level.jobs, [&](std::size_t b, std::size_t e) { run_range(level, b, e); }, grain);
      } else {
        run_range(level, 0, level.jobs);
      }
    }
    for (std::size_t c = 0; c < plan_.outputs.size(); ++c) {
      std::memcpy(out + c * n, arena_.data() + plan_.outputs[c], sizeof(float) * n);
    }
    if (plan_.meters) {
      const std::size_t channels = plan_.bus_channels();
      const std::size_t grain =
          pool_ ? std::max<std::size_t>(16, channels / (4 * pool_->size())) : 0;
      const auto range = [&](std::size_t b, std::size_t e) { meter(b, e); };
      if (pool_ && channels > grain) {
        pool_->run(channels, range, grain);
      } else {
        meter(0, channels);
      }
    }
  }

 private:
  struct Level {
    std::vector<int> groups;
    std::vector<std::size_t> starts;
    std::size_t jobs = 0;
    bool heavy = false;  ///< has jobs of a heavy kind (convolution, nam)
  };

  void run_range(const Level& level, std::size_t begin, std::size_t end) {
    auto k = std::upper_bound(level.starts.begin(), level.starts.end(), begin) -
             level.starts.begin() - 1;
    for (std::size_t i = begin; i < end;) {
      const Group& g = plan_.groups[level.groups[k]];
      const std::size_t group_end = level.starts[k] + (g.end - g.begin);
      const std::size_t stop = std::min(end, group_end);
      const std::size_t first = g.begin + (i - level.starts[k]);
      const std::size_t last = g.begin + (stop - level.starts[k]);
      with_kind(g.kind, [&](auto c) {
        std::get<c>(kinds_)->run(std::get<c>(plan_.kinds), first, last, arena_.data(),
                                 plan_.period);
      });
      i = stop;
      ++k;
    }
  }

  /// Bus channels [begin, end) into meters_.
  void meter(std::size_t begin, std::size_t end) {
    const std::size_t n = plan_.period;
    for (std::size_t c = begin; c < end; ++c) {
      meter_channel(arena_.data() + (plan_.inputs + c) * n, n, meters_.data() + 2 * c);
    }
  }

  Plan& plan_;
  HostVector<float> arena_, input_, output_;
  HostVector<float> meters_;  ///< per bus channel: peak, sum of squares (the last period)
  CpuKinds<Kinds>::type kinds_;
  std::vector<Level> levels_;
  // Workers spin between periods (core/rt_pool.hpp): the general ThreadPool's condition
  // variable wake-ups missed 0.67 ms deadlines even at 8 channels on a 16-core machine.
  std::unique_ptr<RtPool> pool_;
};

}  // namespace

std::unique_ptr<Runner> make_cpu_runner(Plan& plan, unsigned threads, int fifo_priority) {
  return std::make_unique<CpuRunner>(plan, threads, fifo_priority);
}

}  // namespace sigpu::audio
