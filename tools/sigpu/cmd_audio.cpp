// `sigpu audio check|render|run|bench|effects`: validate a graph file, render a sound file
// through it, run it as a JACK client, the real-time benchmark (console and convolution
// scenarios, the largest count within the deadline), and the effect types' parameter tables.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <sigpu/audio.hpp>
#include <sigpu/io.hpp>

#include <sigpu/audio_bench.hpp>
#include "commands.hpp"
#include "progress.hpp"

namespace sigpu::cli {
namespace {

audio::Variables parse_sets(const std::vector<std::string>& sets) {
  audio::Variables vars;
  for (const auto& s : sets) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--set expects NAME=VALUE, got '" + s + "'");
    try {
      std::size_t used = 0;
      const long long v = std::stoll(s.substr(eq + 1), &used);
      if (used != s.size() - eq - 1) throw std::invalid_argument(s);
      vars[s.substr(0, eq)] = v;
    } catch (const std::logic_error&) {
      throw UsageError("--set " + s + ": the value must be an integer");
    }
  }
  return vars;
}

struct CheckArgs {
  std::string graph;
  std::vector<std::string> sets;
  double rate = 48000;
};

int run_check(const CheckArgs& a) {
  const auto g = audio::Graph::load(a.graph, parse_sets(a.sets));
  audio::Engine e(g, {.backend = Backend::cpu, .sample_rate = a.rate});
  std::printf("%s: ok: %d inputs, %d outputs, %zu nodes (checked at %.0f Hz)\n", a.graph.c_str(),
              g.inputs(), g.outputs(), g.nodes().size(), a.rate);
  return kExitOk;
}

struct RenderArgs {
  std::string graph, in, backend = "auto";
  OutputArgs out;
  std::string out_positional;
  std::vector<std::string> sets;
  int period = 1024;
  double tail = 0;
};

int run_render(const RenderArgs& a) {
  const auto g = audio::Graph::load(a.graph, parse_sets(a.sets));
  std::uint64_t shown = 0;
  audio::RenderOptions o{
      .backend = parse_backend(a.backend), .period = a.period, .tail_seconds = a.tail};
  // The bar counts frames as its "bytes".
  std::unique_ptr<Progress> bar;
  o.progress = [&](std::uint64_t done, std::uint64_t total) {
    if (!bar) {
      bar = std::make_unique<Progress>(total, 1);
      bar->set_current(a.in);
    }
    bar->add_bytes(done - shown);
    shown = done;
  };
  if (!a.out.output.empty() && !a.out_positional.empty())
    throw UsageError("name the output once: as the third argument or with -o");
  const std::string path = a.out.output.empty() ? a.out_positional : a.out.output;
  if (path.empty()) throw UsageError("name the output file with -o (.wav or .flac)");
  io::Input in(a.in);
  io::Output out(path, {.force = a.out.force, .inputs = {&in}});
  const auto r = audio::render(g, a.in, out.staging_path(), o);
  out.commit();
  bar.reset();
  std::fprintf(stderr, "%s -> %s: %llu frames at %.0f Hz in %.2f s (%.0fx real time)\n",
               in.name().c_str(), out.name().c_str(), static_cast<unsigned long long>(r.frames),
               r.sample_rate, r.seconds, r.realtime());
  return kExitOk;
}

/// --realtime PRIO: 0 (off) or 1 .. 99.
void add_realtime_option(CLI::App* app, int& priority, const char* what) {
  app->add_option("--realtime", priority,
                  std::string(what) +
                      " under SCHED_FIFO at this priority with memory locked, where the system "
                      "allows (else one notice on stderr; docs/audio.md, Real-time); 0: off. 40 "
                      "sits above ordinary threads and below the kernel's interrupt threads (50); "
                      "the JACK server must be real-time too (jackd -R), or the pool's spinning "
                      "workers starve it")
      ->check(CLI::Range(0, 99))
      ->capture_default_str();
}

struct RunArgs {
  std::string graph, backend = "auto", server, name = "sigpu";
  std::vector<std::string> sets;
  double seconds = 0;
  int latency = 1;
  int realtime = 0;
};

std::atomic<bool> g_stop{false};
extern "C" void stop_on_signal(int) {
  g_stop.store(true);
}

int run_jack_client(const RunArgs& a) {
  const auto g = audio::Graph::load(a.graph, parse_sets(a.sets));
  std::signal(SIGINT, stop_on_signal);
  std::signal(SIGTERM, stop_on_signal);
  const auto r = audio::run_jack(g,
                                 {.backend = parse_backend(a.backend),
                                  .client_name = a.name,
                                  .server = a.server,
                                  .seconds = a.seconds,
                                  .extra_periods = a.latency,
                                  .rt_priority = a.realtime},
                                 g_stop);
  std::printf(
      "%s: %llu periods of %d frames at %.0f Hz on %s, latency %d frames; xruns %llu, late "
      "%llu, dropped %llu\n",
      a.graph.c_str(), static_cast<unsigned long long>(r.periods), r.period, r.sample_rate,
      r.backend.c_str(), r.latency_frames, static_cast<unsigned long long>(r.xruns),
      static_cast<unsigned long long>(r.late), static_cast<unsigned long long>(r.dropped));
  return kExitOk;
}

struct ServeArgs {
  std::string graph, backend = "auto", loop, record, listen, server;
  std::vector<std::string> sets;
  bool jack = false;
  int port = 8088, period = 256;
  double seconds = 0;
  int realtime = 0;
};

/// 128 random bits as hex, from the system's entropy source.
std::string make_token() {
  std::random_device rd;
  std::string t;
  char buf[9];
  for (int i = 0; i < 4; ++i) {
    std::snprintf(buf, sizeof buf, "%08x", static_cast<unsigned>(rd()));
    t += buf;
  }
  return t;
}

int run_serve(const ServeArgs& a) {
  if (a.jack == !a.loop.empty()) throw UsageError("serve: give one of --jack or --loop FILE");
  std::signal(SIGINT, stop_on_signal);
  std::signal(SIGTERM, stop_on_signal);
  audio::ServeOptions o{.backend = parse_backend(a.backend),
                        .graph_path = a.graph,
                        .variables = parse_sets(a.sets),
                        .loop_path = a.loop,
                        .jack = a.jack,
                        .jack_server = a.server,
                        .period = a.period,
                        .record_path = a.record,
                        .listen = a.listen.empty() ? "127.0.0.1" : a.listen,
                        .port = a.port,
                        .token = a.listen.empty() ? "" : make_token(),
                        .seconds = a.seconds,
                        .rt_priority = a.realtime};
  o.on_ready = [](const std::string& url) {
    std::printf("serving %s (Ctrl-C to stop)\n", url.c_str());
    std::fflush(stdout);
  };
  audio::serve(o, g_stop);
  return kExitOk;
}

/// A number for the parameter table: 0.7071067811865476 as 0.707107.
std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

/// The effect types' parameters from their descriptors, as the Markdown docs/audio.md holds.
int run_effects() {
  for (const auto& e : audio::describe_effects()) {
    std::string summary = e.summary;
    if (!summary.empty()) summary[0] = static_cast<char>(std::toupper(summary[0]));
    std::printf("#### %s\n\n%s%s.\n\n", e.type.c_str(), summary.c_str(),
                e.sidechain ? " (takes a side-chain input)" : "");
    std::printf("| parameter | type | range | default | unit | runtime | meaning |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    for (const auto& p : e.params) {
      std::string range, fallback = p.required ? "required" : "";
      if (p.type == "number" || p.type == "integer") {
        range = short_number(p.lo) + " .. " + short_number(p.hi);
        if (!p.required) fallback = short_number(p.fallback);
      } else if (p.type == "choice") {
        range = p.choices;
      }
      std::printf("| `%s` | %s | %s | %s | %s | %s | %s |\n", p.name.c_str(), p.type.c_str(),
                  range.c_str(), fallback.c_str(), p.unit.c_str(), p.update.c_str(),
                  p.help.c_str());
    }
    std::printf("\n");
  }
  return kExitOk;
}

struct BenchArgs {
  std::vector<std::string> scenarios{"all"};
  std::vector<int> frames;  ///< empty: each scenario's own
  std::vector<std::string> backends{"cuda", "cpu-parallel"};
  std::uint64_t periods = 100000, search_periods = 2000;
  int min_n = 0, max_n = 0, nodes = 0;  ///< 0: the scenario's default
  unsigned threads = 0;                 ///< cpu-parallel: 0, one per hardware thread
  std::string io = "channels";          ///< channels (process) or planar (process_planar)
  double rate = 48000, time_budget = 0;
  std::string model;  ///< nam scenario: empty, the standard A1 WaveNet
  /// --count: "N" for every scenario or "SCENARIO=N"; one run per job at that count instead
  /// of the search.
  std::vector<std::string> counts;
  int realtime = 0;
};

/// One search: a scenario at one period size on one backend.
struct BenchJob {
  const audio::ScenarioInfo* scenario;
  int frames;
  std::string backend;
  bool skipped = false;  ///< no CUDA device
  int count = 0;         ///< --count: one run at this count, no search
  audio::SearchOutcome outcome;
};

/// The count --count gives scenario `name` (0: none).
int fixed_count(const std::vector<std::string>& counts, std::string_view name) {
  int found = 0;
  for (const auto& c : counts) {
    const auto eq = c.find('=');
    if (eq != std::string::npos && c.compare(0, eq, name) != 0) continue;
    const std::string n = eq == std::string::npos ? c : c.substr(eq + 1);
    try {
      std::size_t used = 0;
      found = std::stoi(n, &used);
      if (used != n.size() || found < 1) throw std::invalid_argument(n);
    } catch (const std::logic_error&) {
      throw UsageError("--count " + c + ": expected N or SCENARIO=N with N >= 1");
    }
  }
  return found;
}

void print_run(const BenchJob& j, const audio::SearchStep& s, int nodes) {
  const auto& r = s.result;
  const std::string periods = r.periods == s.planned
                                  ? std::to_string(r.periods)
                                  : std::to_string(r.periods) + "/" + std::to_string(s.planned);
  std::printf(
      "%-9s %-12s %6d %6d %5s %-7s %13s | %8.1f %8.1f %8.1f %9.1f %9.1f | %7.1f | %7llu %8.4f%% "
      "%s\n",
      std::string(j.scenario->name).c_str(), j.backend.c_str(), r.frames, r.N,
      nodes ? std::to_string(nodes).c_str() : "-",
      j.count          ? "fixed"
      : s.confirmation ? "confirm"
                       : "search",
      periods.c_str(), r.mean_us, r.p99_us, r.p999_us, r.p9999_us, r.max_us, r.deadline_us,
      static_cast<unsigned long long>(r.misses), 100.0 * r.miss_rate(),
      s.passed                 ? "pass"
      : r.periods != s.planned ? "fail (stopped: over 0.1%)"
                               : "fail");
  std::fflush(stdout);
}

/// Where the late periods of a run fell (nothing when none was late): period numbers, and the
/// wall time they stand for at the run's mean period time (the periods run back to back).
void print_late(const audio::LatePattern& p, double mean_us) {
  if (p.late == 0) return;
  const auto ms = [&](std::uint64_t periods) { return double(periods) * mean_us / 1000.0; };
  std::printf("%48s late: first period #%llu (~%.0f ms in)", "",
              static_cast<unsigned long long>(p.first), ms(p.first));
  if (p.late > 1) {
    std::printf(", then every %llu periods at the median (~%.1f ms; min %llu, max %llu)",
                static_cast<unsigned long long>(p.median_gap), ms(p.median_gap),
                static_cast<unsigned long long>(p.min_gap),
                static_cast<unsigned long long>(p.max_gap));
  }
  std::printf("\n");
}

std::string outcome_text(const BenchJob& j) {
  using End = audio::SearchOutcome::End;
  const auto& o = j.outcome;
  if (j.skipped) return "skipped: no CUDA device";
  switch (o.end) {
    case End::confirmed:
      return std::to_string(o.confirmed->N) + " confirmed";
    case End::floor:
      return o.searched ? "none confirmed down to the floor" : "none: the smallest count fails";
    case End::budget:
      return "time budget spent" +
             (o.searched ? ", unconfirmed " + std::to_string(o.searched) : std::string());
  }
  return {};
}

/// $SIGPU_BENCH_OUT/audio_bench-SCENARIOS[-planar]-runs.csv (every run) and -summary.csv (every
/// search).
void write_csv(const BenchArgs& a, const std::vector<BenchJob>& jobs,
               const std::vector<std::vector<audio::SearchStep>>& runs) {
  const char* dir = std::getenv("SIGPU_BENCH_OUT");
  if (!dir || !*dir) return;
  std::string tag;
  for (const auto& j : jobs) {
    const std::string n(j.scenario->name);
    if (tag.find(n) == std::string::npos) tag += (tag.empty() ? "" : "+") + n;
  }
  if (a.io != "channels") tag += "-" + a.io;
  const std::string base = std::string(dir) + "/audio_bench-" + tag;
  const auto row = [&](std::FILE* f, const BenchJob& j, const audio::BenchResult& r) {
    std::fprintf(
        f, "%s,%s,%d,%d,%d,%llu,%.2f,%.2f,%.2f,%.2f,%.2f,%.2f,%llu",
        std::string(j.scenario->name).c_str(), j.backend.c_str(), j.frames, r.N,
        audio::convolution_nodes(*j.scenario, r.N, parse_backend(j.backend), a.nodes, a.threads),
        static_cast<unsigned long long>(r.periods), r.deadline_us, r.mean_us, r.p99_us, r.p999_us,
        r.p9999_us, r.max_us, static_cast<unsigned long long>(r.misses));
  };
  const char* columns =
      "scenario,backend,frames,count,nodes,periods,period_us,mean_us,p99_us,p999_us,p9999_us,max_"
      "us,"
      "misses";
  if (std::FILE* f = std::fopen((base + "-runs.csv").c_str(), "w")) {
    std::fprintf(f, "%s,planned,run,passed\n", columns);
    for (std::size_t k = 0; k < jobs.size(); ++k) {
      for (const auto& s : runs[k]) {
        row(f, jobs[k], s.result);
        std::fprintf(f, ",%llu,%s,%d\n", static_cast<unsigned long long>(s.planned),
                     jobs[k].count    ? "fixed"
                     : s.confirmation ? "confirm"
                                      : "search",
                     s.passed ? 1 : 0);
      }
    }
    std::fclose(f);
  }
  if (std::FILE* f = std::fopen((base + "-summary.csv").c_str(), "w")) {
    std::fprintf(f, "%s,result,searched\n", columns);
    for (const auto& j : jobs) {
      const auto& o = j.outcome;
      audio::BenchResult r;
      r.frames = j.frames;
      r.deadline_us = j.frames / a.rate * 1e6;
      if (o.confirmed) r = *o.confirmed;
      row(f, j, r);
      const char* end = j.skipped                                       ? "skipped"
                        : o.end == audio::SearchOutcome::End::confirmed ? "confirmed"
                        : o.end == audio::SearchOutcome::End::floor     ? "none"
                                                                        : "budget";
      std::fprintf(f, ",%s,%d\n", end, o.searched);
    }
    std::fclose(f);
  }
  std::printf("CSV: %s-runs.csv, %s-summary.csv\n", base.c_str(), base.c_str());
}

/// Per scenario and period size: the largest confirmed count per backend, CUDA's ratio to
/// cpu-parallel, and each p99.9 against the period.
void print_summary(const BenchArgs& a, const std::vector<BenchJob>& jobs) {
  std::printf("\nsummary: the largest count with <= 0.1%% misses and p99.9 <= period, confirmed\n");
  std::printf("%-9s %6s %9s | %-12s %-44s %9s | %s\n", "scenario", "frames", "period us", "backend",
              "result", "p99.9 us", "cuda / cpu-parallel");
  for (const auto& j : jobs) {
    const auto& r = j.outcome.confirmed;
    char p999[32] = "-", ratio[64] = "";
    if (r) std::snprintf(p999, sizeof p999, "%.1f", r->p999_us);
    for (const auto& c : jobs) {
      if (j.backend != "cuda" || !r || c.scenario != j.scenario || c.frames != j.frames ||
          c.backend != "cpu-parallel") {
        continue;
      }
      if (c.outcome.confirmed) {
        std::snprintf(ratio, sizeof ratio, "%.2fx", double(r->N) / c.outcome.confirmed->N);
      } else {
        std::snprintf(ratio, sizeof ratio, "(cpu-parallel: none)");
      }
    }
    std::printf("%-9s %6d %9.1f | %-12s %-44s %9s | %s\n", std::string(j.scenario->name).c_str(),
                j.frames, j.frames / a.rate * 1e6, j.backend.c_str(),
                (std::string(j.scenario->unit_name) + ": " + outcome_text(j)).c_str(), p999, ratio);
  }
}

/// --count: each job's one run, its tail percentiles and late periods.
void print_worst_case(const BenchArgs& a, const std::vector<BenchJob>& jobs) {
  std::printf("\nworst case at fixed counts (period time, back to back)\n");
  std::printf("%-9s %-12s %6s %6s %9s | %10s | %8s %8s %9s %9s | %9s\n", "scenario", "backend",
              "frames", "count", "period us", "periods", "p99 us", "p99.9 us", "p99.99 us",
              "max us", "late");
  for (const auto& j : jobs) {
    if (j.skipped || !j.outcome.confirmed) {
      std::printf("%-9s %-12s %6d %6d: %s\n", std::string(j.scenario->name).c_str(),
                  j.backend.c_str(), j.frames, j.count,
                  j.skipped ? "skipped: no CUDA device" : "-");
      continue;
    }
    const auto& r = *j.outcome.confirmed;
    std::printf("%-9s %-12s %6d %6d %9.1f | %10llu | %8.1f %8.1f %9.1f %9.1f | %9llu\n",
                std::string(j.scenario->name).c_str(), j.backend.c_str(), j.frames, r.N,
                j.frames / a.rate * 1e6, static_cast<unsigned long long>(r.periods), r.p99_us,
                r.p999_us, r.p9999_us, r.max_us, static_cast<unsigned long long>(r.misses));
  }
}

const BenchArgs& check_bench(const BenchArgs& a) {
  try {
    for (const auto& s : a.scenarios) {
      if (s != "all") audio::scenario(s);
    }
    for (const auto& b : a.backends) parse_backend(b);
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  for (int f : a.frames) {
    if (f < 1 || f > 65536) {
      throw UsageError("--frames: " + std::to_string(f) + " is not in [1, 65536]");
    }
  }
  if (a.min_n < 0 || a.max_n < 0 || a.nodes < 0 || a.time_budget < 0) {
    throw UsageError("--min-n, --max-n, --nodes and --time-budget must not be negative");
  }
  if (a.periods == 0 || a.search_periods == 0) {
    throw UsageError("--periods and --search-periods must be positive");
  }
  return a;
}

int run_bench(const BenchArgs& a) {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  const auto devices = cuda_devices();
  std::vector<BenchJob> jobs;
  for (const auto& name : a.scenarios) {
    std::vector<const audio::ScenarioInfo*> list;
    if (name == "all") {
      for (const auto& s : audio::scenarios()) {
        if (const auto why = audio::unavailable(s); why.empty()) {
          list.push_back(&s);
        } else {
          std::printf("%s: left out: it %s\n", std::string(s.name).c_str(), why.c_str());
        }
      }
    } else {
      list.push_back(&audio::scenario(name));
      if (const auto why = audio::unavailable(*list.back()); !why.empty()) {
        throw UsageError("--scenario " + name + ": " + why);
      }
    }
    for (const auto* s : list) {
      const int count = fixed_count(a.counts, s->name);
      if (!a.counts.empty() && (count == 0 || count % s->unit)) {
        throw UsageError("--count: " + std::string(s->name) + " needs a count" +
                         (s->unit > 1 ? " in multiples of " + std::to_string(s->unit) : "") +
                         " (N, or " + std::string(s->name) + "=N)");
      }
      const int lo = a.min_n ? a.min_n : s->min_count, hi = a.max_n ? a.max_n : s->max_count;
      if (lo % s->unit || hi < lo) {
        throw UsageError("--min-n/--max-n: " + std::string(s->name) + " counts " +
                         std::string(s->unit_name) + " in multiples of " + std::to_string(s->unit) +
                         " (smallest " + std::to_string(lo) + ", largest " + std::to_string(hi) +
                         ")");
      }
      for (int frames : a.frames.empty() ? s->frames : a.frames) {
        if (s->kind == audio::ScenarioKind::convolution &&
            (frames < 16 || frames > 8192 || (frames & (frames - 1)))) {
          throw UsageError("--frames " + std::to_string(frames) + ": " + std::string(s->name) +
                           " (partitioned convolution) needs a power of two in [16, 8192]");
        }
        for (const auto& b : a.backends) {
          BenchJob j{s, frames, b};
          j.count = count;
          j.skipped = resolve(parse_backend(b)) == Backend::cuda && devices.empty();
          jobs.push_back(j);
        }
      }
    }
  }
  std::printf(
      "audio bench at %.0f Hz, I/O %s. GPU: %s; CPU: %u hardware threads (cpu-parallel: %u). "
      "Search runs %llu "
      "periods, confirmation runs %llu; time budget %s\n",
      a.rate, a.io.c_str(), devices.empty() ? "none" : devices[0].name.c_str(),
      std::thread::hardware_concurrency(),
      a.threads ? a.threads : std::thread::hardware_concurrency(),
      static_cast<unsigned long long>(a.search_periods), static_cast<unsigned long long>(a.periods),
      a.time_budget > 0 ? (std::to_string(int(a.time_budget)) + " s").c_str() : "none");
  for (const auto& s : audio::scenarios()) {
    if (std::any_of(jobs.begin(), jobs.end(),
                    [&](const BenchJob& j) { return j.scenario == &s; })) {
      std::printf("  %s: %s\n", std::string(s.name).c_str(), std::string(s.description).c_str());
    }
  }
  std::printf("%-9s %-12s %6s %6s %5s %-7s %13s | %8s %8s %8s %9s %9s | %7s | %17s\n", "scenario",
              "backend", "frames", "count", "nodes", "run", "periods", "mean us", "p99 us",
              "p99.9 us", "p99.99 us", "max us", "period", "late");
  if (a.realtime > 0) {
    const auto rt = audio::make_realtime(a.realtime);
    std::printf("real-time: SCHED_FIFO %d %s, memory %s\n", a.realtime,
                rt.fifo ? "granted" : "refused", rt.locked ? "locked" : "not locked");
    if (!rt.note.empty()) std::fprintf(stderr, "sigpu: %s\n", rt.note.c_str());
    // Back-to-back periods keep the thread busy all the time: the kernel's real-time
    // throttling then takes its core away for the rest of every period of sched_rt_period_us.
    std::ifstream throttle("/proc/sys/kernel/sched_rt_runtime_us");
    long runtime = -1;
    if (rt.fifo && throttle >> runtime && runtime >= 0) {
      std::fprintf(stderr,
                   "sigpu: real-time throttling is on (kernel.sched_rt_runtime_us = %ld): a "
                   "SCHED_FIFO thread busy back to back is stopped for the rest of each second; "
                   "sysctl -w kernel.sched_rt_runtime_us=-1 for the measurement\n",
                   runtime);
    }
  }
  std::vector<std::vector<audio::SearchStep>> runs(jobs.size());
  std::size_t left = 0;
  for (const auto& j : jobs) left += j.skipped ? 0 : 1;
  for (std::size_t k = 0; k < jobs.size(); ++k) {
    BenchJob& j = jobs[k];
    if (j.skipped) continue;
    // The budget is shared evenly by the searches left (what one leaves goes to those after
    // it); a run starts only if it can end within this search's share, its periods and the
    // warm-up back to back taking the period's duration at most when it passes.
    const auto budget_end = start + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double>(a.time_budget));
    const auto share_end = Clock::now() + (budget_end - Clock::now()) / static_cast<long>(left--);
    const double period_s = j.frames / a.rate;
    const Backend b = parse_backend(j.backend);
    audio::SearchOptions o{.min_count = a.min_n ? a.min_n : j.scenario->min_count,
                           .max_count = a.max_n ? a.max_n : j.scenario->max_count,
                           .unit = j.scenario->unit,
                           .search_periods = a.search_periods,
                           .confirm_periods = a.periods};
    if (a.time_budget > 0) {
      o.out_of_time = [=](bool, std::uint64_t periods) {
        return Clock::now() +
                   std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                       double(periods + audio::kWarmupPeriods) * period_s)) >
               share_end;
      };
    }
    std::vector<std::uint64_t> late;
    const auto measure = [&](int count, std::uint64_t periods) {
      late.clear();
      try {
        return audio::bench_scenario(*j.scenario, count, b, periods,
                                     {.frames = j.frames,
                                      .sample_rate = a.rate,
                                      .nodes = a.nodes,
                                      .threads = a.threads,
                                      .planar = a.io == "planar",
                                      .late = &late,
                                      .model = a.model,
                                      .full = j.count > 0,
                                      .fifo_priority = a.realtime});
      } catch (const std::exception& e) {
        // Too large to set up (memory): a failed run at this count, not the end of the
        // command.
        std::printf("%-9s %-12s %6d %6d: cannot run: %s\n", std::string(j.scenario->name).c_str(),
                    j.backend.c_str(), j.frames, count, e.what());
        audio::BenchResult r;
        r.backend = b;
        r.frames = j.frames;
        r.N = count;
        r.deadline_us = j.frames / a.rate * 1e6;
        return r;
      }
    };
    const auto show = [&](const audio::SearchStep& s) {
      runs[k].push_back(s);
      print_run(j, s, audio::convolution_nodes(*j.scenario, s.result.N, b, a.nodes, a.threads));
      print_late(audio::late_pattern(late), s.result.mean_us);
    };
    if (j.count > 0) {  // the worst case at a given count: every period runs, however many late
      audio::SearchStep s{.confirmation = true, .planned = a.periods};
      s.result = measure(j.count, a.periods);
      s.passed = audio::passes(s.result, a.periods);
      show(s);
      j.outcome.end =
          s.passed ? audio::SearchOutcome::End::confirmed : audio::SearchOutcome::End::floor;
      j.outcome.confirmed = s.result;
      j.outcome.steps.push_back(s);
      continue;
    }
    j.outcome = audio::search_largest(o, measure, show);
    std::printf("%-9s %-12s %6d: %s %s\n", std::string(j.scenario->name).c_str(), j.backend.c_str(),
                j.frames, std::string(j.scenario->unit_name).c_str(), outcome_text(j).c_str());
  }
  if (a.counts.empty()) {
    print_summary(a, jobs);
  } else {
    print_worst_case(a, jobs);
  }
  write_csv(a, jobs, runs);
  return kExitOk;
}

void add_audio_commands(CLI::App& app, Action& action) {
  auto* audio = app.add_subcommand(
      "audio", "Real-time audio signal graph: check, render, run (JACK), serve, bench, effects");
  audio->require_subcommand(1);

  auto check = std::make_shared<CheckArgs>();
  auto* cc = audio->add_subcommand("check", "Validate a graph file");
  cc->add_option("graph", check->graph, "Graph file (JSON)")->required();
  cc->add_option("--set", check->sets, "Override a graph variable: NAME=VALUE");
  cc->add_option("--rate", check->rate, "Sample rate to check frequencies against")
      ->capture_default_str();
  cc->callback([&action, check] { action = [check] { return run_check(*check); }; });

  auto render = std::make_shared<RenderArgs>();
  auto* cr = audio->add_subcommand("render", "Render a sound file through a graph (WAV, FLAC)");
  cr->add_option("graph", render->graph, "Graph file (JSON)")->required();
  cr->add_option("input", render->in, "Input sound file")->required();
  cr->add_option("output", render->out_positional, "Output: .wav (float32) or .flac (24-bit)");
  cr->add_option("-o,--output", render->out.output, "Output (instead of the third argument)");
  cr->add_flag("-f,--force", render->out.force, "Overwrite an existing output file");
  cr->add_option("--backend", render->backend, "cpu, cpu-parallel, cuda or auto")
      ->capture_default_str();
  cr->add_option("--period", render->period, "Frames per period")->capture_default_str();
  cr->add_option("--tail", render->tail, "Seconds of output after the input ends")
      ->capture_default_str();
  cr->add_option("--set", render->sets, "Override a graph variable: NAME=VALUE");
  cr->callback([&action, render] { action = [render] { return run_render(*render); }; });

  auto run = std::make_shared<RunArgs>();
  auto* cj = audio->add_subcommand("run", "Run a graph as a JACK client (ports in_N, out_N)");
  cj->add_option("graph", run->graph, "Graph file (JSON)")->required();
  cj->add_option("--backend", run->backend, "cpu, cpu-parallel, cuda or auto")
      ->capture_default_str();
  cj->add_option("--server", run->server, "JACK server name (default: the default server)");
  cj->add_option("--name", run->name, "JACK client name")->capture_default_str();
  cj->add_option("--seconds", run->seconds, "Stop after this long (0: at Ctrl-C)")
      ->capture_default_str();
  cj->add_option("--latency", run->latency, "Periods between capture and playback (>= 1)")
      ->capture_default_str();
  cj->add_option("--set", run->sets, "Override a graph variable: NAME=VALUE");
  add_realtime_option(cj, run->realtime, "The processing thread and the engine's pool");
  cj->callback([&action, run] { action = [run] { return run_jack_client(*run); }; });

  auto serve = std::make_shared<ServeArgs>();
  auto* cs = audio->add_subcommand(
      "serve", "Run a graph and serve its control surface (a web page) while it plays");
  cs->add_option("graph", serve->graph, "Graph file (JSON)")->required();
  cs->add_option("--backend", serve->backend, "cpu, cpu-parallel, cuda or auto")
      ->capture_default_str();
  cs->add_flag("--jack", serve->jack, "Play through JACK (ports in_N, out_N)");
  cs->add_option("--server", serve->server,
                 "--jack: the JACK server's name (default: the default)");
  cs->add_option("--loop", serve->loop, "Play this sound file in a loop, in real time");
  cs->add_option("--record", serve->record, "--loop: also write what is played (WAV)");
  cs->add_option("--period", serve->period, "--loop: frames per period")->capture_default_str();
  cs->add_option("--port", serve->port, "HTTP port (0: any free one)")->capture_default_str();
  cs->add_option("--listen", serve->listen,
                 "Address to listen on (default 127.0.0.1); with it, a token printed at start "
                 "is required by every request");
  cs->add_option("--seconds", serve->seconds, "Stop after this long (0: at Ctrl-C)")
      ->capture_default_str();
  cs->add_option("--set", serve->sets, "Override a graph variable: NAME=VALUE");
  add_realtime_option(cs, serve->realtime, "The audio thread and the engine's pool");
  cs->callback([&action, serve] { action = [serve] { return run_serve(*serve); }; });

  auto* ce = audio->add_subcommand(
      "effects", "The effect types and their parameters (Markdown, as in docs/audio.md)");
  ce->callback([&action] { action = [] { return run_effects(); }; });

  auto bench = std::make_shared<BenchArgs>();
  auto* cb = audio->add_subcommand(
      "bench", "Real-time benchmark: the largest console or convolution count per period");
  cb->add_option("--scenario", bench->scenarios,
                 "console, conv4096 (mono 4096-tap), conv65536 (true-stereo 65536-tap), nam (amp "
                 "models) or all")
      ->delimiter(',')
      ->capture_default_str();
  cb->add_option("--frames", bench->frames,
                 "Period sizes (default: console 32,64,128; conv4096 32; conv65536 128)")
      ->delimiter(',');
  cb->add_option("--backends", bench->backends, "Backends to measure")
      ->delimiter(',')
      ->capture_default_str();
  cb->add_option("--periods", bench->periods, "Periods of each confirmation run")
      ->capture_default_str();
  cb->add_option("--search-periods", bench->search_periods, "Periods of each search run")
      ->capture_default_str();
  cb->add_option("--min-n", bench->min_n,
                 "Smallest count tried: console N, convolution channels or reverbs (0: the "
                 "scenario's own)")
      ->capture_default_str();
  cb->add_option("--max-n", bench->max_n, "Largest count tried (0: the scenario's own)")
      ->capture_default_str();
  cb->add_option("--nodes", bench->nodes,
                 "Convolution nodes the count is split over (0: per backend, see docs/audio.md)")
      ->capture_default_str();
  cb->add_option("--threads", bench->threads,
                 "cpu-parallel: threads of the engine's pool (0: one per hardware thread)")
      ->capture_default_str();
  cb->add_option("--io", bench->io,
                 "channels: one array per channel through process() (the engine copies); "
                 "planar: process_planar() on pinned planar blocks (no host copies)")
      ->check(CLI::IsMember({"channels", "planar"}))
      ->capture_default_str();
  cb->add_option("--time-budget", bench->time_budget,
                 "Seconds for the whole command, shared evenly by its searches: a run starts only "
                 "if it can end within its search's share; 0: no limit")
      ->capture_default_str();
  cb->add_option("--rate", bench->rate, "Sample rate")->capture_default_str();
  cb->add_option("--count", bench->counts,
                 "No search: one run of --periods periods at this count, every period however "
                 "many are late (N for every scenario, or SCENARIO=N, e.g. "
                 "console=64,conv4096=64,nam=8)")
      ->delimiter(',');
  add_realtime_option(cb, bench->realtime, "The timing thread and the engine's pool");
  cb->add_option("--model", bench->model,
                 "nam scenario: the .nam file (default: the standard A1 WaveNet of the test "
                 "fixtures, under $SIGPU_SOURCE_DIR or the working folder)");
  // Checked when the action runs: main() answers a UsageError from there (not from parse()).
  cb->callback([&action, bench] { action = [bench] { return run_bench(check_bench(*bench)); }; });
}

const CommandRegistration registration{40, add_audio_commands};
}  // namespace

}  // namespace sigpu::cli
