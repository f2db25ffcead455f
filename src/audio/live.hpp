// A graph that changes while it plays, for `sigpu audio serve`: parameter updates go through the
// Engine's own update path (ramped at a period boundary); a structural edit builds a new Engine
// off the audio thread, which the audio thread then runs beside the old one, first warming it
// up on the same input (its filters and envelopes settle, output unused), then cross-fading from
// the old output to the new; the old engine is freed off the audio thread. The audio thread also
// measures each period (peak and mean square per channel, processing time).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <sigpu/audio.hpp>

namespace sigpu::audio {

/// Processing-time histogram: bucket b counts periods of [2^(b/4), 2^((b+1)/4)) microseconds.
inline constexpr int kTimeBuckets = 80;

struct LiveLevels {
  std::vector<float> in_peak, in_rms, out_peak, out_rms;  ///< linear, since the last call
  std::vector<BusMeter> buses;                            ///< the running graph's, likewise
};

struct LiveTiming {
  std::array<std::uint64_t, kTimeBuckets> buckets{};
  std::uint64_t periods = 0, late = 0, xruns = 0;
  double max_us = 0, deadline_us = 0;
  /// The upper edge of the bucket holding quantile q (0.99, 0.999), in microseconds.
  double quantile_us(double q) const;
};

class LiveEngine {
 public:
  /// Builds and sets up the first engine, with bus meters whatever options say; throws Error
  /// like Engine does.
  LiveEngine(const Graph& graph, const EngineOptions& options);
  ~LiveEngine();

  /// Audio thread only: one period (in[c], out[c]: period() floats); allocates nothing, takes
  /// no lock.
  void process(const float* const* in, float* const* out);
  /// Audio thread or driver: the device reported an overrun or underrun.
  void xrun() { xruns_.fetch_add(1, std::memory_order_relaxed); }

  /// Control threads. Throws Error naming node and parameter; the graph is left as it was.
  void update(std::string_view node, std::string_view param, double value);
  /// Control threads: swaps in `graph` (same inputs and outputs) and returns once the old one is
  /// gone. Throws Error (the graph's own, or the channel counts) and then keeps the old graph.
  void replace(const Graph& graph);

  /// Control threads: the levels and timing since the last call of each.
  LiveLevels levels();
  LiveTiming timing() const;

  int inputs() const { return inputs_; }
  int outputs() const { return outputs_; }
  int period() const { return options_.period; }
  double sample_rate() const { return options_.sample_rate; }
  Backend backend() const;

 private:
  struct Meter {
    std::atomic<float> peak{0}, sum_squares{0};
    std::atomic<std::uint32_t> frames{0};
  };
  void meter(std::vector<Meter>& meters, const float* const* x);

  EngineOptions options_;
  int inputs_ = 0, outputs_ = 0;
  std::mutex control_;                     ///< one control operation at a time
  std::unique_ptr<Engine> current_;        ///< control threads: the engine that owns the graph
  std::atomic<Engine*> pending_{nullptr};  ///< handed to the audio thread
  std::atomic<Engine*> retired_{nullptr};  ///< handed back once the swap is done
  Engine* active_ = nullptr;               ///< audio thread: the engine heard
  Engine* incoming_ = nullptr;             ///< audio thread: warming up or fading in
  int swap_period_ = 0;                    ///< audio thread: periods into the swap
  int warm_periods_ = 0, fade_periods_ = 0;
  std::vector<std::vector<float>> scratch_;  ///< the incoming engine's output
  std::vector<float*> scratch_ptrs_;
  std::vector<Meter> in_meters_, out_meters_;
  std::array<std::atomic<std::uint64_t>, kTimeBuckets> buckets_{};
  std::atomic<std::uint64_t> periods_{0}, late_{0}, xruns_{0};
  std::atomic<double> max_us_{0};
};

}  // namespace sigpu::audio
