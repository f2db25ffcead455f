// The turbo benchmark as text, shared by `sigpu turbo bench` and bench/turbo_bench.cpp: its
// P[:iterations] list, the FER check lines and the table.
#include <charconv>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <optional>
#include <string>

#include <sigpu/turbo.hpp>

#include "core/thread_pool.hpp"

namespace sigpu::turbo {
namespace {

std::string fmt(const char* f, ...) __attribute__((format(printf, 1, 2)));
std::string fmt(const char* f, ...) {
  char buf[512];
  va_list ap;
  va_start(ap, f);
  std::vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

// A positive integer that is the whole of s, else nothing.
std::optional<int> positive(std::string_view s) {
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 1) return std::nullopt;
  return v;
}

std::string algorithm_name(const BenchOptions& o) {
  return o.algorithm == Algorithm::log_map ? "log-map" : "max-log-map 0.75";
}

std::string config_name(LlrType t, const BenchConfig& c, bool early_termination) {
  return fmt("%s P = %d, %d it%s", std::string(to_string(t)).c_str(), c.P, c.iterations,
             early_termination ? ", early termination" : "");
}

// A value, or "-" where it was not measured, right-aligned in the column.
std::string cell(bool measured, int width, const char* f, double v) {
  return measured ? fmt(f, width, v) : fmt("%*s", width, "-");
}

std::string quality(bool checked, bool full_quality) {
  if (!checked) return "-";
  return full_quality ? "ok" : "FAIL *";
}

DecoderOptions cpu_options(const BenchOptions& o) {
  return {.algorithm = o.algorithm, .int8_metrics = o.int8_metrics};
}

}  // namespace

std::vector<BenchConfig> parse_bench_configs(std::string_view list, int default_iterations) {
  std::vector<BenchConfig> configs;
  for (std::size_t at = 0; at <= list.size();) {
    const std::size_t comma = std::min(list.find(',', at), list.size());
    const std::string_view entry = list.substr(at, comma - at);
    const std::size_t colon = entry.find(':');
    const auto P = positive(entry.substr(0, colon));
    const auto it = colon == std::string_view::npos ? std::optional<int>(default_iterations)
                                                    : positive(entry.substr(colon + 1));
    if (!P || !it)
      throw Error("turbo bench: \"" + std::string(entry) +
                  "\" is not P or P:iterations (positive integers, e.g. 128:8)");
    configs.push_back({*P, *it});
    at = comma + 1;
  }
  return configs;
}

std::string bench_check_line(const BenchOptions& o, const BenchCheck& c) {
  std::string s = "FER check, " + std::string(c.reference ? "serial reference " : "") +
                  (c.cpu ? "CPU " : "") + config_name(c.type, c.config, c.early_termination) +
                  (c.cpu ? " (" + cpu_decoder(c.type, cpu_options(o)) + ")" : "") + ": ";
  if (!c.crossing.found)
    s += fmt("FER %.0e not bracketed", o.fer_target);
  else if (c.reference)
    s += fmt("FER %.0e at %.3f dB", o.fer_target, c.crossing.ebn0_db);
  else
    s += fmt("FER %.0e at %.3f dB, %+.3f dB: %s", o.fer_target, c.crossing.ebn0_db, c.delta_db,
             c.full_quality ? "ok" : "FAIL");
  s += "  [";
  for (const SimPoint& p : c.crossing.points)
    s += fmt("%s%.3f dB %.2e (%llu/%llu)", &p == c.crossing.points.data() ? "" : ", ", p.ebn0_db,
             p.fer(), static_cast<unsigned long long>(p.frame_errors),
             static_cast<unsigned long long>(p.frames));
  return s + "]\n";
}

std::string bench_header(const BenchOptions& o, const BenchCheck* reference) {
  const auto devices = cuda_devices();
  std::string s =
      fmt("turbo bench: K = %d, %s, LLRs in device memory, timed frames at Eb/N0 %.2f dB "
          "(BPSK/AWGN), early termination %s\n",
          o.K, algorithm_name(o).c_str(), o.ebn0_db,
          o.early_termination ? "on (CRC24B, from iteration 1)" : "off");
  s += fmt("GPU: %s; CPU parallel (P = 1, %d iterations): %s\n",
           o.gpu && !devices.empty() ? devices[0].name.c_str() : "not used", o.iterations,
           o.cpu ? fmt("%u threads", ThreadPool::shared().size()).c_str() : "not used");
  if (o.cpu) {
    const DecoderOptions d = cpu_options(o);
    s += "cpu decoder:";
    for (const LlrType& t : o.types)
      s += fmt("%s %s %s", &t == o.types.data() ? "" : ";", std::string(to_string(t)).c_str(),
               cpu_decoder(t, d).c_str());
    s += "\n";
  }
  if (o.fer_check && !o.gpu && !o.cpu_fer_check)
    s += "quality: not checked (the FER check runs with the GPU, or on the CPU when asked)\n";
  else if (!o.fer_check || !reference)
    s += "quality: not checked (FER check off)\n";
  else if (!reference->crossing.found)
    s += fmt("quality: the serial decoder's FER never crossed %.0e: no row is at full quality\n",
             o.fer_target);
  else
    s +=
        fmt("quality: ok = FER %.0e (K = %d, BPSK/AWGN) within %.2f dB of the serial decoder's "
            "%.3f dB (P = 1, %d iterations, max-log-map 0.75, float); loose mode is not checked; "
            "CPU dB/q: the CPU decoder's own check\n",
            o.fer_target, o.K, o.fer_margin_db, reference->crossing.ebn0_db, o.iterations);
  const bool et = o.early_termination;
  s +=
      fmt("%-6s %6s %5s %3s%s | %9s %9s %9s %7s %-15s | %10s | %9s%s %7s %-6s %7s | %4s | %7s %7s "
          "%s\n",
          "llr", "blocks", "P", "it", et ? " avg it" : "", "strict ms", "min ms", "max ms", "Gbps",
          "kernel", "loose Gbps", "CPU Mbps", et ? " CPU it" : "", "CPU dB", "CPU q", "GPU/CPU",
          "same", "FER dB", "delta", "quality");
  return s;
}

std::string bench_row(const BenchOptions& o, const BenchRow& r) {
  const double bits = double(o.K) * r.blocks;
  const bool gpu = r.strict_median > 0, cpu = r.cpu_median > 0;
  const double strict_bps = gpu ? bits / r.strict_median : 0;
  const double cpu_bps = cpu ? bits / r.cpu_median : 0;
  const bool et = o.early_termination;
  const bool crossed = r.fer_checked && !std::isnan(r.fer_ebn0_db);
  std::string s = fmt("%-6s %6d %5d %3d", std::string(to_string(r.type)).c_str(), r.blocks,
                      r.config.P, r.config.iterations);
  const auto col = [&s](const char* separator, const std::string& text) {
    s += separator;
    s += text;
  };
  if (et) col(" ", cell(gpu, 6, "%*.2f", r.strict_iterations));
  col(" | ", cell(gpu, 9, "%*.3f", r.strict_median * 1e3));
  col(" ", cell(gpu, 9, "%*.3f", r.strict_min * 1e3));
  col(" ", cell(gpu, 9, "%*.3f", r.strict_max * 1e3));
  col(" ", cell(gpu, 7, "%*.3f", strict_bps / 1e9));
  col(" ", fmt("%-15s", gpu ? std::string(r.strict_kernel).c_str() : "-"));
  col(" | ", cell(r.loose_median > 0, 10, "%*.3f", bits / r.loose_median / 1e9));
  col(" | ", cell(cpu, 9, "%*.1f", cpu_bps / 1e6));
  if (et) col(" ", cell(cpu, 6, "%*.2f", r.cpu_iterations));
  col(" ",
      cell(r.cpu_fer_checked && !std::isnan(r.cpu_fer_delta_db), 7, "%+*.3f", r.cpu_fer_delta_db));
  col(" ", fmt("%-6s", quality(r.cpu_fer_checked, r.cpu_full_quality).c_str()));
  col(" ", cell(gpu && cpu, 7, "%*.1f", strict_bps / cpu_bps));
  col(" | ", fmt("%4s", gpu && cpu ? (r.strict_matches_cpu_p ? "yes" : "NO") : "-"));
  col(" | ",
      r.fer_checked && !crossed ? fmt("%7s", "none") : cell(crossed, 7, "%*.3f", r.fer_ebn0_db));
  col(" ", cell(r.fer_checked && !std::isnan(r.fer_delta_db), 7, "%+*.3f", r.fer_delta_db));
  col(" ", quality(r.fer_checked, r.full_quality));
  return s + "\n";
}

std::vector<BenchRow> benchmark_report(const BenchOptions& o,
                                       const std::function<void(std::string_view)>& print) {
  if (o.gpu && o.fer_check)
    print(
        fmt("turbo bench: FER checks first (K = %d, BPSK/AWGN on the GPU, each point until %llu "
            "frame errors or %llu frames)\n",
            o.K, static_cast<unsigned long long>(o.fer_min_errors),
            static_cast<unsigned long long>(o.fer_max_frames)));
  std::optional<BenchCheck> reference;
  bool header = false;
  const auto print_header = [&] {
    if (!header) print(bench_header(o, reference ? &*reference : nullptr));
    header = true;
  };
  auto rows = benchmark(
      o,
      [&](const BenchRow& r) {
        print_header();
        print(bench_row(o, r));
      },
      [&](const BenchCheck& c) {
        if (c.reference) reference = c;
        print(bench_check_line(o, c));
      });
  print_header();
  return rows;
}

}  // namespace sigpu::turbo
