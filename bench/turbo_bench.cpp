// Turbo decoder benchmark (issue 3 item 7): K = 6144, LLRs already in device memory, 6
// iterations, no early termination; one block and batches of 8, 96 and 1536 blocks, for
// float, int16 and int8 LLRs; the CPU parallel decoder on all cores of the same host for the
// ratio. Throughput = information bits decoded per second.
//
//   turbo_bench [--no-cpu] [--no-gpu] [--reps N] [--batches 1,8,96,1536] [--p 64,768]
//               [--log-map]   (float LLRs, log-MAP instead of max-log-MAP 0.75)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
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

}  // namespace

int main(int argc, char** argv) {
  turbo::BenchOptions o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--no-cpu")
      o.cpu = false;
    else if (a == "--no-gpu")
      o.gpu = false;
    else if (a == "--reps" && i + 1 < argc)
      o.reps = std::atoi(argv[++i]);
    else if (a == "--batches" && i + 1 < argc)
      o.batches = parse_list(argv[++i]);
    else if (a == "--p" && i + 1 < argc)
      o.subdecoders = parse_list(argv[++i]);
    else if (a == "--iterations" && i + 1 < argc)
      o.iterations = std::atoi(argv[++i]);
    else if (a == "--log-map") {
      o.algorithm = turbo::Algorithm::log_map;
      o.types = {turbo::LlrType::f32};  // log-MAP decodes float LLRs
    } else {
      std::fprintf(stderr,
                   "usage: turbo_bench [--no-cpu] [--no-gpu] [--reps N] [--batches list] [--p "
                   "list] [--iterations N] [--log-map]\n");
      return 2;
    }
  }
  if (o.gpu && sigpu::cuda_devices().empty()) {
    std::printf("no CUDA device: CPU only\n");
    o.gpu = false;
  }
  if (!o.gpu) o.subdecoders = {1};
  const auto devices = sigpu::cuda_devices();
  std::printf("turbo decoder, K = %d, %d iterations, %s, Eb/N0 %.2f dB, BPSK\n", o.K, o.iterations,
              o.algorithm == turbo::Algorithm::log_map ? "log-map" : "max-log-map scaling 0.75",
              o.ebn0_db);
  std::printf("GPU: %s; CPU parallel: %u hardware threads, P = 1\n",
              devices.empty() ? "none" : devices[0].name.c_str(),
              std::thread::hardware_concurrency());
  std::printf("%-6s %6s %5s | %10s %10s %10s %9s %-15s | %9s | %9s %7s | %5s %9s %9s\n", "llr",
              "blocks", "P", "strict ms", "min ms", "max ms", "Mbps", "kernel", "loose Mbps",
              "CPU Mbps", "GPU/CPU", "same", "BER gpu", "BER cpu");
  const double bits_per_block = o.K;
  try {
    turbo::benchmark(o, [&](const turbo::BenchRow& r) {
      const double bits = bits_per_block * r.blocks;
      const double strict_mbps = r.strict_median > 0 ? bits / r.strict_median / 1e6 : 0;
      const double loose_mbps = r.loose_median > 0 ? bits / r.loose_median / 1e6 : 0;
      const double cpu_mbps = r.cpu_median > 0 ? bits / r.cpu_median / 1e6 : 0;
      std::printf(
          "%-6s %6d %5d | %10.3f %10.3f %10.3f %9.1f %-15s | %9.1f | %9.1f %7.1f | %5s %9.2e "
          "%9.2e\n",
          std::string(turbo::to_string(r.type)).c_str(), r.blocks, r.P, r.strict_median * 1e3,
          r.strict_min * 1e3, r.strict_max * 1e3, strict_mbps, std::string(r.strict_kernel).c_str(),
          loose_mbps, cpu_mbps, cpu_mbps > 0 ? strict_mbps / cpu_mbps : 0.0,
          o.gpu && o.cpu ? (r.strict_matches_cpu_p ? "yes" : "NO") : "-", r.ber_strict, r.ber_cpu);
      std::fflush(stdout);
    });
  } catch (const std::exception& e) {
    std::fprintf(stderr, "turbo_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
