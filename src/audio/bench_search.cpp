#include <sigpu/audio_bench.hpp>

#include <algorithm>
#include <string>

namespace sigpu::audio {

std::uint64_t allowed_misses(std::uint64_t periods) {
  // Integer arithmetic: 0.1% of 100,000 is exactly 100.
  return periods / 1000;
}

bool passes(const BenchResult& r, std::uint64_t planned_periods) {
  return r.periods == planned_periods && r.misses <= allowed_misses(planned_periods) &&
         r.p999_us <= r.deadline_us;
}

LatePattern late_pattern(const std::vector<std::uint64_t>& late) {
  LatePattern p;
  p.late = late.size();
  if (late.empty()) return p;
  p.first = late.front();
  std::vector<std::uint64_t> gaps;
  for (std::size_t k = 1; k < late.size(); ++k) gaps.push_back(late[k] - late[k - 1]);
  if (gaps.empty()) return p;
  std::sort(gaps.begin(), gaps.end());
  p.min_gap = gaps.front();
  p.median_gap = gaps[gaps.size() / 2];
  p.max_gap = gaps.back();
  return p;
}

SearchOutcome search_largest(const SearchOptions& o, const Measure& measure,
                             const std::function<void(const SearchStep&)>& on_step) {
  if (o.unit < 1 || o.min_count < o.unit || o.min_count % o.unit || o.max_count < o.min_count) {
    throw Error(
        "bench search: counts [" + std::to_string(o.min_count) + ", " +
        std::to_string(o.max_count) + "] in steps of " + std::to_string(o.unit) +
        " (the smallest must be a positive multiple of the step, the largest not below it)");
  }
  if (o.search_periods == 0 || o.confirm_periods == 0) {
    throw Error("bench search: runs need at least one period");
  }
  const int top = o.max_count / o.unit * o.unit;
  SearchOutcome out;
  // A run, recorded; false when there was no time to start it.
  const auto run = [&](int count, bool confirmation, bool& passed) {
    SearchStep s;
    s.confirmation = confirmation;
    s.planned = confirmation ? o.confirm_periods : o.search_periods;
    if (o.out_of_time(confirmation, s.planned)) return false;
    s.result = measure(count, s.planned);
    s.passed = passed = passes(s.result, s.planned);
    out.steps.push_back(s);
    if (on_step) on_step(s);
    return true;
  };
  const auto down_to_unit = [&](long long n) {
    return static_cast<int>(std::max<long long>(o.min_count, n / o.unit * o.unit));
  };

  // Short runs: good passed, bad failed (0: none yet).
  int good = 0, bad = 0;
  for (long long n = o.min_count;; n = std::min<long long>(2 * n, top)) {
    bool ok = false;
    if (!run(static_cast<int>(n), false, ok)) {
      out.end = SearchOutcome::End::budget;
      out.searched = good;
      return out;
    }
    if (!ok) {
      bad = static_cast<int>(n);
      break;
    }
    good = static_cast<int>(n);
    if (n == top) break;
  }
  out.searched = good;
  if (good == 0) {
    out.end = SearchOutcome::End::floor;
    return out;
  }
  while (bad != 0 && bad - good > std::max(o.unit, good / 8)) {
    const int mid = down_to_unit((static_cast<long long>(good) + bad) / 2);
    if (mid <= good) break;
    bool ok = false;
    if (!run(mid, false, ok)) {
      out.end = SearchOutcome::End::budget;
      out.searched = good;
      return out;
    }
    (ok ? good : bad) = mid;
  }
  out.searched = good;

  // Long runs from the candidate down.
  int count = good;
  for (int failures = 0;; ++failures) {
    bool ok = false;
    if (!run(count, true, ok)) {
      out.end = SearchOutcome::End::budget;
      return out;
    }
    if (ok) {
      out.end = SearchOutcome::End::confirmed;
      out.confirmed = out.steps.back().result;
      return out;
    }
    if (count == o.min_count) {
      out.end = SearchOutcome::End::floor;
      return out;
    }
    const int divisor = failures < 2 ? 8 : failures < 4 ? 4 : 2;
    count = down_to_unit(count - std::max(o.unit, count / divisor));
  }
}

}  // namespace sigpu::audio
