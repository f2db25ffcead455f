#include "audio/live.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>
#include <utility>

namespace sigpu::audio {
namespace {

/// The incoming engine runs this long on the live input before it is heard: long enough for
/// filters and envelopes to settle, short enough that an edit feels immediate.
constexpr double kWarmSeconds = 0.05;
/// The cross-fade from the old output to the new.
constexpr double kFadeSeconds = 0.01;

int bucket_of(double us) {
  if (us < 1) return 0;
  return std::min(kTimeBuckets - 1, static_cast<int>(4 * std::log2(us)));
}

double bucket_top_us(int b) {
  return std::exp2((b + 1) / 4.0);
}

}  // namespace

double LiveTiming::quantile_us(double q) const {
  std::uint64_t total = 0;
  for (auto n : buckets) total += n;
  if (!total) return 0;
  const auto want = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(total)));
  std::uint64_t seen = 0;
  for (int b = 0; b < kTimeBuckets; ++b) {
    seen += buckets[b];
    if (seen >= want) return std::min(bucket_top_us(b), max_us);
  }
  return max_us;
}

namespace {

/// The surface exists to be watched, so its engines always meter their buses: a pass over the
/// node outputs the period has just written (docs/audio.md, "serve").
EngineOptions metered(EngineOptions o) {
  o.meters = true;
  return o;
}

}  // namespace

LiveEngine::LiveEngine(const Graph& graph, const EngineOptions& options)
    : options_(metered(options)),
      current_(std::make_unique<Engine>(graph, options_)),
      in_meters_(graph.inputs()),
      out_meters_(graph.outputs()) {
  current_->setup();
  active_ = current_.get();
  inputs_ = current_->inputs();
  outputs_ = current_->outputs();
  const double period_s = options.period / options.sample_rate;
  warm_periods_ = static_cast<int>(std::ceil(kWarmSeconds / period_s));
  fade_periods_ = std::max(1, static_cast<int>(std::lround(kFadeSeconds / period_s)));
  scratch_.assign(outputs_, std::vector<float>(options.period));
  for (auto& s : scratch_) scratch_ptrs_.push_back(s.data());
}

LiveEngine::~LiveEngine() = default;

Backend LiveEngine::backend() const {
  return current_->backend();
}

void LiveEngine::meter(std::vector<Meter>& meters, const float* const* x) {
  const int n = options_.period;
  for (std::size_t c = 0; c < meters.size(); ++c) {
    float peak = 0, sum = 0;
    for (int i = 0; i < n; ++i) {
      peak = std::max(peak, std::abs(x[c][i]));
      sum += x[c][i] * x[c][i];
    }
    // One writer; a reader's reset may lose a period's contribution, which a meter can afford.
    Meter& m = meters[c];
    m.peak.store(std::max(m.peak.load(std::memory_order_relaxed), peak), std::memory_order_relaxed);
    m.sum_squares.store(m.sum_squares.load(std::memory_order_relaxed) + sum,
                        std::memory_order_relaxed);
    m.frames.store(m.frames.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
}

void LiveEngine::process(const float* const* in, float* const* out) {
  const auto start = std::chrono::steady_clock::now();
  if (!incoming_) {
    if (Engine* next = pending_.exchange(nullptr, std::memory_order_acquire)) {
      incoming_ = next;
      swap_period_ = 0;
    }
  }
  active_->process(in, out);
  if (incoming_) {
    incoming_->process(in, scratch_ptrs_.data());
    if (swap_period_ >= warm_periods_) {
      const int n = options_.period;
      const double total = double(fade_periods_) * n;
      const int done = (swap_period_ - warm_periods_) * n;
      for (int c = 0; c < outputs_; ++c) {
        for (int i = 0; i < n; ++i) {
          const auto w = static_cast<float>((done + i + 1) / total);
          out[c][i] += w * (scratch_[c][i] - out[c][i]);
        }
      }
    }
    if (++swap_period_ == warm_periods_ + fade_periods_) {
      // From here on this thread never touches the old engine: the control thread frees it.
      retired_.store(std::exchange(active_, std::exchange(incoming_, nullptr)),
                     std::memory_order_release);
    }
  }
  meter(in_meters_, in);
  meter(out_meters_, out);
  const double us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  buckets_[bucket_of(us)].fetch_add(1, std::memory_order_relaxed);
  periods_.fetch_add(1, std::memory_order_relaxed);
  if (us > 1e6 * options_.period / options_.sample_rate)
    late_.fetch_add(1, std::memory_order_relaxed);
  if (us > max_us_.load(std::memory_order_relaxed)) max_us_.store(us, std::memory_order_relaxed);
}

void LiveEngine::update(std::string_view node, std::string_view param, double value) {
  std::lock_guard lock(control_);
  current_->update(node, param, value);
}

void LiveEngine::replace(const Graph& graph) {
  std::lock_guard lock(control_);
  auto next = std::make_unique<Engine>(graph, options_);
  if (next->inputs() != inputs_ || next->outputs() != outputs_) {
    throw Error("graph: " + std::to_string(next->inputs()) + " inputs and " +
                std::to_string(next->outputs()) + " outputs, but the running graph has " +
                std::to_string(inputs_) + " and " + std::to_string(outputs_) +
                " (the audio device's channels)");
  }
  next->setup();
  Engine* old = current_.get();
  pending_.store(next.get(), std::memory_order_release);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (retired_.load(std::memory_order_acquire) != old) {
    if (std::chrono::steady_clock::now() > give_up) {
      Engine* expected = next.get();
      if (pending_.compare_exchange_strong(expected, nullptr)) {
        throw Error("graph: the audio thread is not running; the graph was not replaced");
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  current_ = std::move(next);
  retired_.store(nullptr, std::memory_order_relaxed);
}

LiveLevels LiveEngine::levels() {
  LiveLevels l;
  const auto read = [](std::vector<Meter>& meters, std::vector<float>& peak,
                       std::vector<float>& rms) {
    for (auto& m : meters) {
      peak.push_back(m.peak.exchange(0, std::memory_order_relaxed));
      const float sum = m.sum_squares.exchange(0, std::memory_order_relaxed);
      const std::uint32_t n = m.frames.exchange(0, std::memory_order_relaxed);
      rms.push_back(n ? std::sqrt(sum / static_cast<float>(n)) : 0.0f);
    }
  };
  read(in_meters_, l.in_peak, l.in_rms);
  read(out_meters_, l.out_peak, l.out_rms);
  std::lock_guard lock(control_);  // current_ changes under it
  l.buses = current_->meters();
  return l;
}

LiveTiming LiveEngine::timing() const {
  LiveTiming t;
  for (int b = 0; b < kTimeBuckets; ++b) t.buckets[b] = buckets_[b].load(std::memory_order_relaxed);
  t.periods = periods_.load(std::memory_order_relaxed);
  t.late = late_.load(std::memory_order_relaxed);
  t.xruns = xruns_.load(std::memory_order_relaxed);
  t.max_us = max_us_.load(std::memory_order_relaxed);
  t.deadline_us = 1e6 * options_.period / options_.sample_rate;
  return t;
}

}  // namespace sigpu::audio
