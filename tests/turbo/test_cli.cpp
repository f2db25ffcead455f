// End-to-end: `sigpu turbo sim --tbs` run as a user would, its BLER table read back: BLER falls
// with SNR, is 1 far below the code's threshold and 0 far above, HARQ retransmissions lower it,
// Rayleigh fading costs SNR; bad values exit 2 naming them. `sigpu turbo bench` on the CPU, and
// its refusal of a malformed P:iterations list. SIGPU_TURBO_ISA's choice of the CPU decoder.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "support/shell.hpp"

namespace {

struct Row {
  double snr = 0;
  std::vector<double> bler;  // after each transmission
  double throughput = 0;     // percent
};

// The rows of a `turbo sim --tbs` table with max_tx transmissions.
std::vector<Row> parse_rows(const std::string& out, int max_tx) {
  std::vector<Row> rows;
  std::istringstream in(out);
  std::string line;
  bool table = false;
  while (std::getline(in, line)) {
    if (line.find("SNR dB") != std::string::npos) {
      table = true;
      continue;
    }
    if (!table) continue;
    std::istringstream f(line);
    Row r;
    double blocks = 0;
    f >> r.snr >> blocks;
    r.bler.resize(max_tx);
    for (auto& b : r.bler) f >> b;
    f >> r.throughput;
    if (f) rows.push_back(r);
  }
  return rows;
}

sigpu::test::CommandResult sim(const std::string& args) {
  return sigpu::test::run_sigpu("turbo sim --backend cpu-parallel " + args);
}

}  // namespace

TEST(TurboCli, TransportBlockBlerFallsWithSnr) {
  // TBS 1000 at rate 1/2 with 16QAM (one code block of 1024 bits, CRC24A only): the waterfall
  // lies near 6 dB Es/N0.
  const auto r =
      sim("--tbs 1000 --modulation 16qam --snr-from -4 --snr-to 16 --snr-step 5 -n 16 "
          "--max-tx 2 --early-termination");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("\ncpu decoder: scalar\n"), std::string::npos) << r.output;  // float
  const auto rows = parse_rows(r.output, 2);
  ASSERT_EQ(rows.size(), 5u) << r.output;
  EXPECT_EQ(rows.front().bler[0], 1.0) << r.output;
  EXPECT_EQ(rows.front().bler[1], 1.0) << r.output;
  EXPECT_EQ(rows.front().throughput, 0.0) << r.output;
  EXPECT_EQ(rows.back().bler[0], 0.0) << r.output;
  EXPECT_EQ(rows.back().throughput, 100.0) << r.output;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    EXPECT_LE(rows[i].bler[0], rows[i - 1].bler[0]) << r.output;
    EXPECT_LE(rows[i].bler[1], rows[i].bler[0]) << r.output;
  }
}

TEST(TurboCli, HarqAndFadingChangeTheBler) {
  // QPSK at rate 0.8 below its threshold (about 5 dB): every first transmission fails, and a
  // second one (rv 2) combined with it decodes.
  const auto awgn = sim("--tbs 2000 --rate 0.8 --snr-from 3 --snr-to 3 -n 16 --max-tx 2");
  ASSERT_EQ(awgn.code, 0) << awgn.output;
  const auto a = parse_rows(awgn.output, 2);
  ASSERT_EQ(a.size(), 1u) << awgn.output;
  EXPECT_GT(a[0].bler[0], 0.5) << awgn.output;
  EXPECT_LT(a[0].bler[1], 0.2) << awgn.output;

  // Flat Rayleigh fading needs more SNR than AWGN for the same BLER (rate 1/2: AWGN decodes
  // from about 1.5 dB).
  const auto fade =
      sim("--tbs 2000 --rate 0.5 --snr-from 2 --snr-to 2 -n 16 --max-tx 1 --channel rayleigh");
  const auto plain = sim("--tbs 2000 --rate 0.5 --snr-from 2 --snr-to 2 -n 16 --max-tx 1");
  ASSERT_EQ(fade.code, 0) << fade.output;
  ASSERT_EQ(plain.code, 0) << plain.output;
  const auto f = parse_rows(fade.output, 1), p = parse_rows(plain.output, 1);
  ASSERT_EQ(f.size(), 1u);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_LT(p[0].bler[0], 0.15) << plain.output;
  EXPECT_GT(f[0].bler[0], 0.5) << fade.output;
}

TEST(TurboCli, BadValuesExitTwoNamingThem) {
  struct Case {
    const char* args;
    const char* names;
  };
  for (const Case& c : {
           Case{"--tbs 0", "A = 0"},
           Case{"--tbs 1000 --snr-from 5 --snr-to 1", "--snr-from"},
           Case{"--tbs 1000 --snr-step 0", "--snr-step"},
           Case{"--tbs 1000 --snr-from nan", "finite"},
           Case{"--tbs 1000 --max-tx 0", "max transmissions = 0"},
           Case{"--tbs 1000 -n 0", "--frames"},
           Case{"--tbs 1000 --rate 1.5", "rate"},
           Case{"--tbs 1000 --rate 0.00001", "G = "},
           Case{"--tbs 2000000", "A = 2000000"},
           Case{"--tbs 1000 --modulation 16qam -G 1001", "G = 1001"},
           Case{"--tbs 1000 --modulation bpsk", "--modulation"},
           Case{"--tbs 1000 --min-iterations 9 -i 6", "min_iterations = 9"},
           Case{"--tbs 1000 -K 6144", "--block-size"},
           Case{"--max-tx 3", "--tbs"},
           Case{"--modulation 64qam", "--tbs"},
           Case{"--ebn0-from 2 --ebn0-to 1", "--ebn0-from"},
           Case{"-n 0", "--frames"},
           Case{"-n -3", "negative"},
           Case{"-K 1024 -P 2000", "-P/--subdecoders 2000 is more than K = 1024"},
           Case{"--tbs 1000 -n -3", "negative"},
       }) {
    const auto r = sim(c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.names), std::string::npos) << c.args << "\n" << r.output;
  }
}

TEST(TurboCli, BenchOnTheCpuWithEarlyTermination) {
  // --no-gpu: on a GPU machine the FER check would run for minutes.
  const auto r = sigpu::test::run_sigpu(
      "turbo bench --no-gpu --batches 2 --reps 1 --ebn0 3 --early-termination --p 64:8");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("early termination on"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("Eb/N0 3.00 dB"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("quality: not checked"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\ncpu decoder: float scalar; int16 "), std::string::npos) << r.output;
  for (const char* type : {"float ", "int16 ", "int8 "})
    EXPECT_NE(r.output.find(std::string("\n") + type), std::string::npos) << type << r.output;
}

TEST(TurboCli, BenchRefusesAMalformedConfiguration) {
  for (const char* p : {"64:x", "64,", "0:8", "128:0"}) {
    const auto r = sigpu::test::run_sigpu(std::string("turbo bench --no-gpu --p ") + p);
    EXPECT_EQ(r.code, 2) << p << "\n" << r.output;
    EXPECT_NE(r.output.find("P:iterations"), std::string::npos) << p << "\n" << r.output;
  }
  for (const auto& [args, names] :
       {std::pair{"--reps 0", "0 repetitions"}, std::pair{"--batches 0", "batch of 0"},
        std::pair{"-i 0", "0 iterations"}}) {
    const auto r = sigpu::test::run_sigpu(std::string("turbo bench --no-gpu ") + args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(names), std::string::npos) << args << "\n" << r.output;
  }
}

// SIGPU_TURBO_ISA narrows the CPU decoder's instruction set, which the "cpu decoder" line names,
// and the frames decode the same in each; one wider than the CPU's exits 4, a name of none 2.
TEST(TurboCli, TurboIsaNarrowsTheCpuDecoderWithTheSameResults) {
  // The table's last row without its timing (the last column).
  const auto row = [](const std::string& out) {
    const std::size_t end = out.find_last_not_of(" \n");
    const std::size_t line = out.rfind('\n', end) + 1;
    const std::size_t cut = out.find_last_not_of(' ', out.find_last_of(' ', end));
    return out.substr(line, cut + 1 - line);
  };
  // int8 in saturating 8-bit metrics (the default) and in exact ones, each named per ISA.
  const std::string s8 = ", 8-bit saturating metrics";
  for (const std::string metrics : {"saturating", "exact"}) {
    const bool sat = metrics == "saturating";
    std::string sim = " ";  // appended to, not " " + ...: GCC 12 warns (-Wrestrict) on that
    sim += sigpu::test::quoted(sigpu::test::kSigpuBinary);
    sim +=
        " turbo sim -K 1024 --llr int8 --backend cpu-parallel -n 48 --batch 48 --ebn0-from 0.6 "
        "--ebn0-to 0.6 --int8-metrics ";
    sim += metrics;
    const auto widest = sigpu::test::run_command("env -u SIGPU_TURBO_ISA" + sim);
    ASSERT_EQ(widest.code, 0) << widest.output;
    const std::vector<std::pair<std::string, std::string>> isas{
        {"scalar", sat ? "scalar (8-bit saturating metrics)" : "scalar"},
        {"avx2",
         sat ? "inter-frame avx2 (32 blocks int8" + s8 + ")" : "inter-frame avx2 (16 blocks int8)"},
        {"avx512", sat ? "inter-frame avx512 (64 blocks int8" + s8 + ")"
                       : "inter-frame avx512 (32 blocks int8)"}};
    bool wider = false;  // past the widest, which the default run names
    for (const auto& [isa, name] : isas) {
      const auto r = sigpu::test::run_command("SIGPU_TURBO_ISA=" + isa + sim);
      if (wider) {
        EXPECT_EQ(r.code, 4) << isa << "\n" << r.output;
        EXPECT_NE(r.output.find("SIGPU_TURBO_ISA=" + isa), std::string::npos) << r.output;
        continue;
      }
      ASSERT_EQ(r.code, 0) << isa << "\n" << r.output;
      EXPECT_NE(r.output.find("\ncpu decoder: " + name + "\n"), std::string::npos) << r.output;
      EXPECT_EQ(row(r.output), row(widest.output)) << isa << "\n" << r.output << widest.output;
      wider = widest.output.find("\ncpu decoder: " + name + "\n") != std::string::npos;
    }
    EXPECT_TRUE(wider) << "the default names none of " << widest.output;
  }
  // Saturating metrics where they do not apply (P > 1) are refused: exit 4, naming P.
  std::string p4 = sigpu::test::quoted(sigpu::test::kSigpuBinary);
  p4 += " turbo sim -K 1024 --llr int8 --backend cpu -n 4 -P 4 --int8-metrics saturating";
  const auto refused = sigpu::test::run_command(p4);
  EXPECT_EQ(refused.code, 4) << refused.output;
  EXPECT_NE(refused.output.find("P = 4"), std::string::npos) << refused.output;
  std::string sim = " ";
  sim += sigpu::test::quoted(sigpu::test::kSigpuBinary);
  sim += " turbo sim -K 1024 --llr int8 --backend cpu-parallel -n 48 --batch 48";
  const auto bad = sigpu::test::run_command("SIGPU_TURBO_ISA=sse2" + sim);
  EXPECT_EQ(bad.code, 2) << bad.output;
  EXPECT_NE(bad.output.find("\"sse2\""), std::string::npos) << bad.output;
}
