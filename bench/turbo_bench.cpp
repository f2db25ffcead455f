// Turbo decoder benchmark: K = 6144, LLRs already in device memory; one block and batches of 8,
// 96 and 1536 blocks, for float, int16 and int8 LLRs, each GPU configuration (P sub-decoders,
// its own iterations) checked for quality against the serial decoder's FER curve; the CPU
// parallel decoder on all cores of the same host for the ratio. Throughput = information bits
// decoded per second. The table is the library's (turbo::benchmark_report), as `sigpu turbo
// bench` prints it.
//
//   turbo_bench [--no-cpu] [--no-gpu] [--reps N] [--batches 1,8,96,1536] [--p 64,128:8,768:16]
//               [--iterations N] [--early-termination] [--ebn0 X] [--no-fer-check]
//               [--cpu-fer-check] [--int8-metrics auto|exact|saturating]
//               [--log-map]   (float LLRs, log-MAP instead of max-log-MAP 0.75)
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <sigpu/turbo.hpp>

namespace turbo = sigpu::turbo;

namespace {

std::vector<int> parse_list(const char* s) {
  std::vector<int> v;
  for (const char* p = s; *p;) {
    v.push_back(std::atoi(p));
    while (*p && *p != ',') ++p;
    if (*p == ',') ++p;
  }
  return v;
}

int usage() {
  std::fprintf(stderr,
               "usage: turbo_bench [--no-cpu] [--no-gpu] [--reps N] [--batches list] [--p "
               "P[:iterations],...] [--iterations N] [--early-termination] [--ebn0 X] "
               "[--no-fer-check] [--cpu-fer-check] [--int8-metrics auto|exact|saturating] "
               "[--log-map]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  turbo::BenchOptions o;
  std::optional<std::string> configs;  // parsed once --iterations is known
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool value = i + 1 < argc;
    if (a == "--no-cpu")
      o.cpu = false;
    else if (a == "--no-gpu")
      o.gpu = false;
    else if (a == "--early-termination")
      o.early_termination = true;
    else if (a == "--no-fer-check")
      o.fer_check = false;
    else if (a == "--cpu-fer-check")
      o.cpu_fer_check = true;
    else if (a == "--int8-metrics" && value) {
      const std::string m = argv[++i];
      if (m == "exact")
        o.int8_metrics = turbo::Int8Metrics::exact;
      else if (m == "saturating")
        o.int8_metrics = turbo::Int8Metrics::saturating;
      else if (m != "auto")
        return usage();
    } else if (a == "--reps" && value)
      o.reps = std::atoi(argv[++i]);
    else if (a == "--batches" && value)
      o.batches = parse_list(argv[++i]);
    else if (a == "--p" && value)
      configs = argv[++i];
    else if (a == "--iterations" && value)
      o.iterations = std::atoi(argv[++i]);
    else if (a == "--ebn0" && value)
      o.ebn0_db = std::atof(argv[++i]);
    else if (a == "--log-map") {
      o.algorithm = turbo::Algorithm::log_map;
      o.types = {turbo::LlrType::f32};  // log-MAP decodes float LLRs
    } else
      return usage();
  }
  try {
    o.configs = turbo::parse_bench_configs(configs.value_or("64,768"), o.iterations);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "turbo_bench: %s\n", e.what());
    return usage();
  }
  if (o.gpu && sigpu::cuda_devices().empty()) {
    std::printf("no CUDA device: CPU only\n");
    o.gpu = false;
  }
  try {
    turbo::benchmark_report(o, [](std::string_view line) {
      std::fwrite(line.data(), 1, line.size(), stdout);
      std::fflush(stdout);
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "turbo_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
