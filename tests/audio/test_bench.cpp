// The real-time benchmark: its search (driven by fake measurements: doubling, bisection, the
// step-down after failed confirmations, the floor, the time budget), the scenario graphs
// (routing checked against float64 direct convolution of the generated IRs), a timed run with
// its early stop, and `sigpu audio bench` end to end with tiny counts.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include <sigpu/audio_bench.hpp>
#include "support/shell.hpp"
#include "util.hpp"

namespace audio = sigpu::audio;
using namespace sigpu::test::audio;
namespace fs = std::filesystem;

namespace {

constexpr double kPeriodUs = 32 / 48000.0 * 1e6;

/// A measurement that passes up to `capacity` (search runs) and `confirm_capacity` (longer
/// runs), as a backend whose rare stalls only long runs see.
audio::Measure fake(int capacity, int confirm_capacity, std::uint64_t confirm_periods,
                    std::vector<std::pair<int, std::uint64_t>>* calls = nullptr) {
  return [=](int count, std::uint64_t periods) {
    if (calls) calls->push_back({count, periods});
    const int cap = periods == confirm_periods ? confirm_capacity : capacity;
    audio::BenchResult r;
    r.N = count;
    r.frames = 32;
    r.periods = periods;
    r.deadline_us = kPeriodUs;
    const bool ok = count <= cap;
    r.mean_us = r.p99_us = r.p999_us = ok ? kPeriodUs * 0.9 : kPeriodUs * 1.2;
    r.max_us = kPeriodUs * 1.5;
    // A failing run stops at its first miss over the allowance (here: every other period late).
    r.misses = audio::allowed_misses(periods) + (ok ? 0 : 1);
    if (!ok) r.periods = std::min<std::uint64_t>(periods, 2 * r.misses);
    return r;
  };
}

audio::SearchOptions options(int min_count = 8, int max_count = 65536, int unit = 8) {
  return {.min_count = min_count,
          .max_count = max_count,
          .unit = unit,
          .search_periods = 2000,
          .confirm_periods = 100000};
}

}  // namespace

TEST(AudioBenchSearch, PassMarkIsAtMostOnePerMille) {
  audio::BenchResult r;
  r.periods = 100000;
  r.deadline_us = kPeriodUs;
  r.p999_us = kPeriodUs;
  r.misses = 100;
  EXPECT_TRUE(audio::passes(r, 100000));
  r.misses = 101;
  EXPECT_FALSE(audio::passes(r, 100000));
  r.misses = 0;
  r.p999_us = kPeriodUs + 1;
  EXPECT_FALSE(audio::passes(r, 100000));
  r.p999_us = 1;
  r.periods = 99999;  // stopped early
  EXPECT_FALSE(audio::passes(r, 100000));
}

TEST(AudioBenchSearch, DoublesBisectsAndConfirms) {
  std::vector<std::pair<int, std::uint64_t>> calls;
  const auto o = options();
  const auto out = audio::search_largest(o, fake(1000, 1000, o.confirm_periods, &calls));
  ASSERT_EQ(out.end, audio::SearchOutcome::End::confirmed);
  ASSERT_TRUE(out.confirmed.has_value());
  EXPECT_LE(out.confirmed->N, 1000);
  EXPECT_GT(out.confirmed->N, 1000 * 7 / 8);
  EXPECT_EQ(out.confirmed->N % 8, 0);
  // 8, 16, ..., 1024 (the first failure), then bisection, then one confirmation.
  for (int k = 0; k < 8; ++k) EXPECT_EQ(calls[k].first, 8 << k);
  EXPECT_EQ(calls.back().second, o.confirm_periods);
  EXPECT_EQ(out.steps.size(), calls.size());
  EXPECT_EQ(std::count_if(out.steps.begin(), out.steps.end(),
                          [](const auto& s) { return s.confirmation; }),
            1);
}

TEST(AudioBenchSearch, StepsDownUntilAConfirmationPasses) {
  const auto o = options();
  const auto out = audio::search_largest(o, fake(4000, 700, o.confirm_periods));
  ASSERT_EQ(out.end, audio::SearchOutcome::End::confirmed);
  EXPECT_GT(out.searched, 3500);
  EXPECT_LE(out.confirmed->N, 700);
  EXPECT_GT(out.confirmed->N, 300);
  // Confirmations go strictly down, fail until the last, and stay multiples of the unit.
  int previous = out.searched + 1, confirmations = 0;
  for (const auto& s : out.steps) {
    if (!s.confirmation) continue;
    ++confirmations;
    EXPECT_LT(s.result.N, previous);
    EXPECT_EQ(s.result.N % o.unit, 0);
    EXPECT_EQ(s.passed, &s == &out.steps.back());
    previous = s.result.N;
  }
  EXPECT_GE(confirmations, 4);
}

TEST(AudioBenchSearch, FloorWhenNothingConfirms) {
  const auto o = options(4, 4096, 4);
  const auto out = audio::search_largest(o, fake(2048, 0, o.confirm_periods));
  EXPECT_EQ(out.end, audio::SearchOutcome::End::floor);
  EXPECT_FALSE(out.confirmed.has_value());
  EXPECT_EQ(out.searched, 2048);
  EXPECT_TRUE(out.steps.back().confirmation);
  EXPECT_EQ(out.steps.back().result.N, 4);
  // The smallest count failing its short run ends the search at once.
  const auto none = audio::search_largest(o, fake(0, 0, o.confirm_periods));
  EXPECT_EQ(none.end, audio::SearchOutcome::End::floor);
  EXPECT_EQ(none.searched, 0);
  EXPECT_EQ(none.steps.size(), 1u);
}

TEST(AudioBenchSearch, TheLargestCountPassingIsConfirmedWithoutBisection) {
  const auto o = options(1, 100, 1);
  const auto out = audio::search_largest(o, fake(1000, 1000, o.confirm_periods));
  ASSERT_EQ(out.end, audio::SearchOutcome::End::confirmed);
  EXPECT_EQ(out.confirmed->N, 100);  // 1, 2, ..., 64, 100, then its confirmation
  EXPECT_EQ(out.steps.size(), 9u);
}

TEST(AudioBenchSearch, NoRunStartsOnceTimeIsOut) {
  auto o = options();
  int runs = 0;
  o.out_of_time = [&](bool, std::uint64_t) { return runs >= 3; };
  const auto measure = fake(1000, 1000, o.confirm_periods);
  const auto out = audio::search_largest(o, [&](int count, std::uint64_t periods) {
    ++runs;
    return measure(count, periods);
  });
  EXPECT_EQ(out.end, audio::SearchOutcome::End::budget);
  EXPECT_FALSE(out.confirmed.has_value());
  EXPECT_EQ(out.steps.size(), 3u);
  EXPECT_EQ(out.searched, 32);
  // Out of time at the confirmation: the search's best is reported, unconfirmed.
  runs = 0;
  int limit = 1000;
  o.out_of_time = [&](bool confirmation, std::uint64_t periods) {
    EXPECT_EQ(periods, confirmation ? o.confirm_periods : o.search_periods);
    return runs >= limit;
  };
  const auto full = audio::search_largest(o, measure);
  limit = static_cast<int>(full.steps.size()) - 1;
  runs = 0;
  const auto cut = audio::search_largest(o, [&](int count, std::uint64_t periods) {
    ++runs;
    return measure(count, periods);
  });
  EXPECT_EQ(cut.end, audio::SearchOutcome::End::budget);
  EXPECT_EQ(cut.searched, full.confirmed->N);
  EXPECT_FALSE(cut.confirmed.has_value());
}

TEST(AudioBenchSearch, LatePatternGivesFirstAndGaps) {
  EXPECT_EQ(audio::late_pattern({}).late, 0u);
  const auto one = audio::late_pattern({7});
  EXPECT_EQ(one.late, 1u);
  EXPECT_EQ(one.first, 7u);
  EXPECT_EQ(one.max_gap, 0u);
  const auto p = audio::late_pattern({10, 1510, 3010, 3011, 4511});
  EXPECT_EQ(p.late, 5u);
  EXPECT_EQ(p.first, 10u);
  EXPECT_EQ(p.min_gap, 1u);
  EXPECT_EQ(p.median_gap, 1500u);
  EXPECT_EQ(p.max_gap, 1500u);
}

TEST(AudioBenchSearch, RefusesBadRanges) {
  const auto m = fake(1, 1, 1);
  EXPECT_THROW(audio::search_largest(options(6, 100, 4), m), sigpu::Error);
  EXPECT_THROW(audio::search_largest(options(8, 4, 4), m), sigpu::Error);
  EXPECT_THROW(audio::search_largest(options(0, 4, 4), m), sigpu::Error);
}

#if defined(SIGPU_HAVE_AUDIO_CONVOLUTION) && defined(SIGPU_HAVE_SNDFILE)
namespace {

std::vector<double> direct(const std::vector<float>& x, const std::vector<float>& h) {
  std::vector<double> y(x.size(), 0.0);
  for (std::size_t n = 0; n < x.size(); ++n) {
    for (std::size_t m = 0; m <= n && m < h.size(); ++m) y[n] += double(h[m]) * x[n - m];
  }
  return y;
}

/// max |a + b - out| in dBFS (b may be empty).
double error_dbfs(const std::vector<double>& a, const std::vector<double>& b,
                  const std::vector<float>& out) {
  std::vector<float> ref(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) ref[i] = float(a[i] + (b.empty() ? 0 : b[i]));
  return audio::compare(ref, out).max_abs_dbfs;
}

}  // namespace

TEST(AudioBench, MonoConvolutionGraphIsEveryChannelThroughItsOwnIr) {
  const auto& s = audio::scenario("conv4096");
  const auto in = music(24, 1024, 5);
  for (int nodes : {1, 5}) {  // five nodes: sizes 4 and 5, two IR files
    const auto g = audio::scenario_graph(s, 24, 48000, nodes);
    EXPECT_EQ(g.nodes().size(), std::size_t(nodes));
    const auto out = run(g, in, {.backend = sigpu::Backend::cpu_parallel, .period = 32});
    ASSERT_EQ(out.size(), 24u);
    for (int k = 0; k < nodes; ++k) {
      // Node k's channel j runs through IR j.
      for (int c = 24 * k / nodes; c < 24 * (k + 1) / nodes; ++c) {
        const auto ir = audio::bench_ir(c - 24 * k / nodes, 4096);
        EXPECT_LT(error_dbfs(direct(in[c], ir), {}, out[c]), -100) << nodes << " " << c;
      }
    }
  }
}

TEST(AudioBench, TrueStereoGraphSumsFourPaths) {
  const auto& s = audio::scenario("conv65536");
  const auto in = music(4, 512, 6);
  const auto g = audio::scenario_graph(s, 2, 48000, 1);
  const auto out = run(g, in, {.backend = sigpu::Backend::cpu, .period = 128});
  ASSERT_EQ(out.size(), 4u);
  // Outputs: L of reverb 0 and 1, then R of both; the node's inputs L0 R0 L1 R1 twice.
  std::vector<std::vector<float>> h;
  for (int j = 0; j < 8; ++j) h.push_back(audio::bench_ir(j, 65536));
  for (int r = 0; r < 2; ++r) {
    const auto& L = in[2 * r];
    const auto& R = in[2 * r + 1];
    EXPECT_LT(error_dbfs(direct(L, h[2 * r]), direct(R, h[2 * r + 1]), out[r]), -100) << r;
    EXPECT_LT(error_dbfs(direct(L, h[4 + 2 * r]), direct(R, h[5 + 2 * r]), out[2 + r]), -100) << r;
  }
}

TEST(AudioBench, NodeSplitFollowsTheBackend) {
  const auto& mono = audio::scenario("conv4096");
  const auto& stereo = audio::scenario("conv65536");
  EXPECT_EQ(audio::convolution_nodes(mono, 8192, sigpu::Backend::cpu), 8);  // 1024 IRs a file
  EXPECT_EQ(audio::convolution_nodes(stereo, 1000, sigpu::Backend::cpu), 4);
  EXPECT_EQ(audio::convolution_nodes(stereo, 1000, sigpu::Backend::cpu, 2), 4);
  EXPECT_EQ(audio::convolution_nodes(mono, 3, sigpu::Backend::cpu_parallel), 3);
  EXPECT_GE(audio::convolution_nodes(mono, 8192, sigpu::Backend::cpu_parallel), 8);
  EXPECT_EQ(audio::convolution_nodes(mono, 8192, sigpu::Backend::cpu_parallel, 0, 14), 56);
  EXPECT_EQ(audio::convolution_nodes(mono, 100, sigpu::Backend::cpu, 10), 10);
  EXPECT_EQ(audio::convolution_nodes(audio::scenario("console"), 64, sigpu::Backend::cpu), 0);
  EXPECT_THROW(audio::scenario_graph(mono, 12, 48000, 1), sigpu::Error);    // not a multiple of 8
  EXPECT_THROW(audio::scenario_graph(mono, 2048, 48000, 1), sigpu::Error);  // 2048 IRs in a file
  EXPECT_THROW(audio::scenario("reverb"), sigpu::Error);
}

TEST(AudioBenchGpu, ConvolutionScenariosMatchTheCpu) {
  if (sigpu::cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  for (const char* name : {"conv4096", "conv65536"}) {
    const auto& s = audio::scenario(name);
    const int count = 2 * s.unit, frames = s.frames.front();
    const auto in = music(count * s.channels_per_unit, 8 * 1024, 7);
    for (int nodes : {1, 2}) {
      const auto g = audio::scenario_graph(s, count, 48000, nodes);
      EXPECT_LT(worst_dbfs(run(g, in, {.backend = sigpu::Backend::cpu, .period = frames}),
                           run(g, in, {.backend = sigpu::Backend::cuda, .period = frames})),
                -100)
          << name << " " << nodes;
    }
  }
}

TEST(AudioBenchCli, ConvolutionNeedsAPowerOfTwoPeriod) {
  const auto odd = sigpu::test::run_sigpu("audio bench --scenario conv4096 --frames 48");
  EXPECT_EQ(odd.code, 2) << odd.output;
  EXPECT_NE(odd.output.find("needs a power of two"), std::string::npos) << odd.output;
}

TEST(AudioBenchCli, ARunThatCannotBeSetUpFailsThatCountOnly) {
  const auto r = sigpu::test::run_command(
      "TMPDIR=/nonexistent/sigpu " + sigpu::test::quoted(sigpu::test::kSigpuBinary) +
      " audio bench --scenario conv4096 --backends cpu --periods 10 --search-periods 10");
  EXPECT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("cannot run: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("channels: none: the smallest count fails"), std::string::npos)
      << r.output;
}

TEST(AudioBench, EveryScenarioRuns) {
  for (const auto& s : audio::scenarios()) {
    if (!audio::unavailable(s).empty()) continue;
    const int frames = s.frames.front();
    const auto r =
        audio::bench_scenario(s, s.min_count, sigpu::Backend::cpu, 50,
                              {.frames = frames,
                               .sample_rate = 48000,
                               .model = SIGPU_SOURCE_DIR "/examples/audio/models/a1-wavenet.nam"});
    EXPECT_EQ(r.N, s.min_count) << s.name;
    EXPECT_EQ(r.frames, frames);
    EXPECT_NEAR(r.deadline_us, frames / 48000.0 * 1e6, 1e-9);
    EXPECT_GT(r.periods, 0u);
    EXPECT_LE(r.periods, 50u);
    // A run stops at its first miss past the allowance (none for 50 periods).
    if (r.periods < 50 || r.misses > 0) {
      EXPECT_EQ(r.misses, 1u) << s.name;
    }
    EXPECT_GT(r.mean_us, 0);
    EXPECT_LE(r.p99_us, r.p999_us);
    EXPECT_LE(r.p999_us, r.max_us);
  }
}
#endif

namespace {

void expect_both_io_modes_run(sigpu::Backend backend) {
  audio::Engine e(audio::console_graph(16), {.backend = backend, .period = 32});
  e.setup();
  for (bool planar : {false, true}) {
    const auto r = audio::time_periods(e, 16, 300, 1000, planar);
    EXPECT_EQ(r.periods, 300u) << planar;
    EXPECT_GT(r.mean_us, 0) << planar;
    EXPECT_LE(r.mean_us, r.max_us) << planar;
  }
}

}  // namespace

TEST(AudioBench, PlanarIoRuns) {
  expect_both_io_modes_run(sigpu::Backend::cpu);
}

TEST(AudioBenchGpu, PlanarIoRunsOnPinnedMemory) {
  if (sigpu::cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  expect_both_io_modes_run(sigpu::Backend::cuda);
}

TEST(AudioBench, RunStopsOnceTheMissesAreOverTheAllowance) {
  // 256 console inputs in 16 frames at 1.536 MHz: a 10.4 us deadline no CPU meets.
  audio::Engine e(audio::console_graph(256),
                  {.backend = sigpu::Backend::cpu, .period = 16, .sample_rate = 1536000});
  e.setup();
  std::vector<std::uint64_t> late;
  const auto r = audio::time_periods(e, 256, 1000, 0, false, &late);
  EXPECT_EQ(late, std::vector<std::uint64_t>{0});
  EXPECT_EQ(r.periods, 1u);
  EXPECT_EQ(r.misses, 1u);
  EXPECT_GT(r.mean_us, r.deadline_us);
}

TEST(AudioBenchCli, SearchesAndWritesCsv) {
  const fs::path dir =
      fs::path(SIGPU_BINARY_DIR) / "test-data" / "audio" / ("bench-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const auto r = sigpu::test::run_command(
      "SIGPU_BENCH_OUT=" + sigpu::test::quoted(dir.string()) + " " +
      sigpu::test::quoted(sigpu::test::kSigpuBinary) +
      " audio bench --scenario console --frames 128 --backends cpu --periods 40 "
      "--search-periods 20 --max-n 16 --time-budget 30");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_TRUE(std::regex_search(r.output, std::regex(R"(console +cpu +128 +8 +- +search)")))
      << r.output;
  EXPECT_NE(r.output.find("summary:"), std::string::npos) << r.output;
  std::ifstream runs(dir / "audio_bench-console-runs.csv"),
      summary(dir / "audio_bench-console-summary.csv");
  ASSERT_TRUE(runs && summary);
  std::string header, line;
  std::getline(summary, header);
  EXPECT_EQ(header.rfind("scenario,backend,frames,count,", 0), 0u) << header;
  ASSERT_TRUE(std::getline(summary, line));
  EXPECT_EQ(line.rfind("console,cpu,128,", 0), 0u) << line;
  int rows = 0;
  for (std::getline(runs, line); std::getline(runs, line);) ++rows;
  EXPECT_GE(rows, 1);
  fs::remove_all(dir);

  const auto bad = sigpu::test::run_sigpu("audio bench --scenario reverb");
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_NE(bad.output.find("unknown scenario 'reverb'"), std::string::npos) << bad.output;
}

#ifdef SIGPU_HAVE_AUDIO_NAM
TEST(AudioBench, NamScenarioIsOneNodeOfInstances) {
  const auto& s = audio::scenario("nam");
  const std::string small = SIGPU_SOURCE_DIR "/examples/audio/models/tiny-wavenet.nam";
  const auto g = audio::scenario_graph(s, 3, 48000, 0, small);
  EXPECT_EQ(g.inputs(), 3);
  EXPECT_EQ(g.outputs(), 3);
  const auto r = audio::bench_scenario(s, 3, sigpu::Backend::cpu, 20,
                                       {.frames = 64, .sample_rate = 48000, .model = small});
  EXPECT_EQ(r.N, 3);
  EXPECT_GT(r.periods, 0u);
  EXPECT_THROW(audio::scenario_graph(s, 2, 48000, 0, SIGPU_SOURCE_DIR "/no/such.nam"),
               sigpu::Error);
}
#endif
