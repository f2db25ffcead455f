// The benchmark's quality check and table on the CPU: fer_crossing() brackets and interpolates
// the FER target, the P[:iterations] list parses or is refused naming the entry, benchmark()
// runs the CPU rows with early termination and checks the CPU decoders' FER on request, and the
// table marks a row that fails the check.
#include <gtest/gtest.h>
#include "support/turbo_frames.hpp"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <sigpu/turbo.hpp>

namespace turbo = sigpu::turbo;

namespace {

// K = 104 on the CPU: FER 0.1 lies near 1.2 dB, and a point takes milliseconds.
turbo::SimOptions small_code() {
  turbo::SimOptions o;
  o.K = 104;
  o.decoder.backend = sigpu::Backend::cpu_parallel;
  o.max_frames = 400;
  o.target_frame_errors = 40;
  return o;
}

constexpr double kTarget = 0.1;

// The crossing is where the straight line through the bracketing points, log10(FER) over dB,
// meets log10(target); a point without errors enters as one error.
void expect_bracketed(const turbo::FerCrossing& c) {
  ASSERT_TRUE(c.found);
  ASSERT_GE(c.points.size(), 2u);
  for (std::size_t i = 1; i < c.points.size(); ++i)
    EXPECT_LT(c.points[i - 1].ebn0_db, c.points[i].ebn0_db);
  std::size_t b = 0;  // the first point below the target
  while (b < c.points.size() && c.points[b].fer() >= kTarget) ++b;
  ASSERT_GT(b, 0u);
  ASSERT_LT(b, c.points.size());
  const turbo::SimPoint &above = c.points[b - 1], &below = c.points[b];
  EXPECT_GT(c.ebn0_db, above.ebn0_db);
  EXPECT_LE(c.ebn0_db, below.ebn0_db);
  const double f_below = below.frame_errors ? below.fer() : 1.0 / double(below.frames);
  const double slope =
      (std::log10(f_below) - std::log10(above.fer())) / (below.ebn0_db - above.ebn0_db);
  EXPECT_NEAR(std::log10(above.fer()) + slope * (c.ebn0_db - above.ebn0_db), std::log10(kTarget),
              1e-9);
}

}  // namespace

TEST(TurboFerCrossing, WalksUpFromBelowTheWaterfall) {
  const auto c = turbo::fer_crossing(small_code(), kTarget, 0.0, 0.5);
  expect_bracketed(c);
  EXPECT_DOUBLE_EQ(c.points.front().ebn0_db, 0.0);
  // It stops at the first point below the target.
  EXPECT_LT(c.points.back().fer(), kTarget);
  for (std::size_t i = 0; i + 1 < c.points.size(); ++i) EXPECT_GE(c.points[i].fer(), kTarget);
}

TEST(TurboFerCrossing, WalksDownWhenTheStartIsBelowAndFindsTheSameCrossing) {
  const auto up = turbo::fer_crossing(small_code(), kTarget, 0.0, 0.5);
  const auto down = turbo::fer_crossing(small_code(), kTarget, 3.0, 0.5);
  expect_bracketed(down);
  EXPECT_DOUBLE_EQ(down.points.back().ebn0_db, 3.0);  // the start, highest
  EXPECT_GE(down.points.front().fer(), kTarget);
  for (std::size_t i = 1; i < down.points.size(); ++i) EXPECT_LT(down.points[i].fer(), kTarget);
  // Frames depend only on (seed, frame): the same bracketing points give the same crossing.
  EXPECT_DOUBLE_EQ(down.ebn0_db, up.ebn0_db);
}

TEST(TurboFerCrossing, APointWithoutErrorsCountsAsBelow) {
  const auto c = turbo::fer_crossing(small_code(), 0.02, 1.5, 1.0);
  ASSERT_TRUE(c.found);
  ASSERT_EQ(c.points.size(), 2u);
  EXPECT_EQ(c.points.back().frame_errors, 0u);
  EXPECT_GT(c.ebn0_db, 1.5);
  EXPECT_LT(c.ebn0_db, 2.5);
}

TEST(TurboFerCrossing, NotFoundWhenThePointsDoNotReach) {
  const auto c = turbo::fer_crossing(small_code(), kTarget, -2.0, 0.5, 2);
  EXPECT_FALSE(c.found);
  ASSERT_EQ(c.points.size(), 2u);
  for (const auto& p : c.points) EXPECT_GE(p.fer(), kTarget);
}

TEST(TurboFerCrossing, RefusesBadArgumentsNamingThem) {
  const auto o = small_code();
  EXPECT_NE(sigpu::test::message_of([&] { turbo::fer_crossing(o, 0.0, 0, 0.5); }).find("target 0"),
            std::string::npos);
  EXPECT_NE(
      sigpu::test::message_of([&] { turbo::fer_crossing(o, 1.5, 0, 0.5); }).find("target 1.5"),
      std::string::npos);
  EXPECT_NE(sigpu::test::message_of([&] { turbo::fer_crossing(o, 0.1, 0, 0.0); }).find("step 0"),
            std::string::npos);
  EXPECT_NE(sigpu::test::message_of([&] {
              turbo::fer_crossing(o, 0.1, 0, 0.5, 1);
            }).find("max_points = 1"),
            std::string::npos);
}

TEST(TurboBench, ParsesPAndIterations) {
  const auto c = turbo::parse_bench_configs("64,128:8,768:16", 6);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].P, 64);
  EXPECT_EQ(c[0].iterations, 6);
  EXPECT_EQ(c[1].P, 128);
  EXPECT_EQ(c[1].iterations, 8);
  EXPECT_EQ(c[2].P, 768);
  EXPECT_EQ(c[2].iterations, 16);
  for (const char* bad : {"", "64,", "x", "64:0", "64:", ":8", "64:8:2", "-1", "64 ", "0"}) {
    const std::string m = sigpu::test::message_of([&] { turbo::parse_bench_configs(bad, 6); });
    EXPECT_NE(m.find("P:iterations"), std::string::npos) << bad << ": " << m;
  }
  EXPECT_NE(
      sigpu::test::message_of([] { turbo::parse_bench_configs("64,12x:8", 6); }).find("\"12x:8\""),
      std::string::npos);
}

TEST(TurboBench, CpuRowsWithEarlyTermination) {
  turbo::BenchOptions o;
  o.K = 1024;
  o.batches = {4};
  o.types = {turbo::LlrType::f32, turbo::LlrType::i8};
  o.gpu = false;
  o.reps = 5;
  o.ebn0_db = 3.0;
  o.early_termination = true;
  int calls = 0;
  const auto rows = turbo::benchmark(o, [&](const turbo::BenchRow&) { ++calls; });
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(calls, 2);
  for (const auto& r : rows) {
    EXPECT_EQ(r.blocks, 4);
    EXPECT_EQ(r.config.P, 1);
    EXPECT_GT(r.cpu_median, 0);
    // Far above the waterfall a block passes its CRC within a few iterations.
    EXPECT_GE(r.cpu_iterations, 1.0);
    EXPECT_LT(r.cpu_iterations, o.iterations);
    EXPECT_EQ(r.strict_median, 0);
    EXPECT_FALSE(r.fer_checked);      // the check needs the GPU
    EXPECT_FALSE(r.cpu_fer_checked);  // or cpu_fer_check
  }
  o.early_termination = false;
  o.types = {turbo::LlrType::f32};
  const auto fixed = turbo::benchmark(o);
  ASSERT_EQ(fixed.size(), 1u);
  EXPECT_EQ(fixed[0].cpu_iterations, o.iterations);
}

// Without a GPU, cpu_fer_check runs the reference and each CPU decoder's check on the CPU: the
// float decoder is the reference's own (delta 0), the int8 one (saturating metrics) has its
// own crossing, and each row carries its type's.
TEST(TurboBench, ChecksTheCpuDecodersOnRequest) {
  turbo::BenchOptions o;
  o.K = 104;
  o.batches = {8};
  o.types = {turbo::LlrType::f32, turbo::LlrType::i8};
  o.gpu = false;
  o.reps = 5;
  o.cpu_fer_check = true;
  o.fer_target = kTarget;
  o.fer_max_frames = 400;
  o.fer_min_errors = 40;
  std::vector<turbo::BenchCheck> checks;
  const auto rows =
      turbo::benchmark(o, {}, [&](const turbo::BenchCheck& c) { checks.push_back(c); });
  ASSERT_EQ(checks.size(), 3u);
  EXPECT_TRUE(checks[0].reference);
  ASSERT_TRUE(checks[0].crossing.found);
  EXPECT_TRUE(checks[1].cpu);
  EXPECT_EQ(checks[1].delta_db, 0.0);
  EXPECT_TRUE(checks[2].cpu);
  EXPECT_EQ(checks[2].type, turbo::LlrType::i8);
  ASSERT_TRUE(checks[2].crossing.found);
  EXPECT_NEAR(checks[2].delta_db, checks[2].crossing.ebn0_db - checks[0].crossing.ebn0_db, 1e-12);
  ASSERT_EQ(rows.size(), 2u);
  for (const auto& r : rows) {
    EXPECT_TRUE(r.cpu_fer_checked);
    EXPECT_FALSE(r.fer_checked);
  }
  EXPECT_EQ(rows[1].cpu_fer_delta_db, checks[2].delta_db);
  EXPECT_NE(turbo::bench_check_line(o, checks[2]).find("8-bit saturating metrics"),
            std::string::npos)
      << turbo::bench_check_line(o, checks[2]);
}

TEST(TurboBench, RefusesBadOptions) {
  turbo::BenchOptions o;
  o.gpu = false;
  o.configs = {{0, 6}};
  EXPECT_NE(sigpu::test::message_of([&] { turbo::benchmark(o); }).find("P = 0"), std::string::npos);
  o.configs = {{64, 6}};
  o.batches = {0};
  EXPECT_NE(sigpu::test::message_of([&] { turbo::benchmark(o); }).find("batch of 0"),
            std::string::npos);
  o.batches = {1};
  o.fer_target = 2;
  EXPECT_NE(sigpu::test::message_of([&] { turbo::check_bench_options(o); }).find("FER target 2"),
            std::string::npos);
}

TEST(TurboBench, TableMarksRowsThatFailTheCheck) {
  turbo::BenchOptions o;
  o.early_termination = true;
  turbo::BenchCheck ref;
  ref.reference = true;
  ref.crossing.found = true;
  ref.crossing.ebn0_db = 0.671;
  const std::string header = turbo::bench_header(o, &ref);
  EXPECT_NE(header.find("0.671 dB"), std::string::npos) << header;
  EXPECT_NE(header.find("within 0.10 dB"), std::string::npos) << header;
  EXPECT_NE(header.find("Eb/N0 1.00 dB"), std::string::npos) << header;
  EXPECT_NE(header.find("early termination on"), std::string::npos) << header;
  EXPECT_NE(header.find("avg it"), std::string::npos) << header;
  EXPECT_NE(turbo::bench_header(o, nullptr).find("not checked"), std::string::npos);

  turbo::BenchRow r;
  r.blocks = 1536;
  r.config = {64, 6};
  r.strict_min = r.strict_median = r.strict_max = 1e-3;
  r.cpu_median = 0.2;
  r.fer_checked = true;
  r.fer_ebn0_db = 0.791;
  r.fer_delta_db = 0.12;
  const std::string fail = turbo::bench_row(o, r);
  EXPECT_NE(fail.find("FAIL"), std::string::npos) << fail;
  EXPECT_NE(fail.find("+0.120"), std::string::npos) << fail;
  EXPECT_EQ(fail.substr(fail.size() - 2), "*\n") << fail;

  r.full_quality = true;
  r.fer_delta_db = 0.05;
  const std::string ok = turbo::bench_row(o, r);
  EXPECT_EQ(ok.find("FAIL"), std::string::npos) << ok;
  EXPECT_EQ(ok.substr(ok.size() - 4), " ok\n") << ok;

  r.fer_checked = r.full_quality = false;
  const std::string unchecked = turbo::bench_row(o, r);
  EXPECT_EQ(unchecked.substr(unchecked.size() - 3), " -\n") << unchecked;
  EXPECT_EQ(unchecked.find("FAIL"), std::string::npos) << unchecked;

  // The CPU decoder's own check, in its columns.
  r.cpu_fer_checked = true;
  r.cpu_fer_delta_db = 0.15;
  const std::string cpu_fail = turbo::bench_row(o, r);
  EXPECT_NE(cpu_fail.find("+0.150 FAIL *"), std::string::npos) << cpu_fail;
  r.cpu_full_quality = true;
  r.cpu_fer_delta_db = 0.02;
  EXPECT_NE(turbo::bench_row(o, r).find("+0.020 ok"), std::string::npos) << turbo::bench_row(o, r);
}
