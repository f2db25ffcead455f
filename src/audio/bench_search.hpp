// The benchmark's search for the largest count (console inputs, convolutions) that a backend
// runs within the deadline: short runs to find a candidate, then a long confirmation run that
// steps down until one passes. Separate from the timing so that tests can drive it with a fake
// measurement.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include <sigpu/audio.hpp>

namespace sigpu::audio {

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
