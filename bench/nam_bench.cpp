// NAM benchmark (issue 8): how many model instances (standard A1 WaveNet by default; any .nam,
// A2 included; mono, each its own input)
// run within the period, at most 0.1% of periods over the deadline, at 32 and 128 frames and
// 48 kHz, on the GPU (one launch per period for all instances, with the host<->device copies
// an audio callback would do) and on the CPU (all cores, instances spread over threads).
//
// Periods run back to back; a period misses when its wall time exceeds frames / 48000 s.
// For each backend and period size the instance count climbs a ladder (--search-periods
// periods per rung) until a rung misses too often; the largest passing count is then
// confirmed over --periods periods (stepping down a rung if it fails there).
//
//   nam_bench [--model PATH]... [--size S] [--periods N] [--search-periods N] [--frames 32,128]
//             [--gpu-counts list] [--cpu-counts list] [--no-cpu] [--no-gpu] [--threads N]
//             [--global-weights]
//
// Several --model: instance i runs model i % count (different models in one launch on the
// GPU). --size: a slimmable model's size (0..1; default 1, the largest).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sigpu/nam.hpp>

namespace nam = sigpu::nam;

namespace {

constexpr double kRate = 48000;

// "32,128" -> {32, 128}
std::vector<int> ints(const char* text) {
  std::vector<int> v;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) v.push_back(std::atoi(item.c_str()));
  return v;
}

struct Stats {
  int instances = 0;
  long periods = 0, misses = 0;
  double mean = 0, p99 = 0, p999 = 0, max = 0;  // seconds
  bool pass = false;
};

// Runs `periods` periods of `step` after a short warm-up and times each.
Stats measure(int instances, int frames, long periods, const std::function<void()>& step) {
  for (int i = 0; i < 100; ++i) step();
  std::vector<double> t(periods);
  const double deadline = frames / kRate;
  Stats s;
  s.instances = instances;
  s.periods = periods;
  for (long p = 0; p < periods; ++p) {
    const auto a = std::chrono::steady_clock::now();
    step();
    t[p] = std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
    if (t[p] > deadline) ++s.misses;
  }
  double sum = 0;
  for (double v : t) sum += v;
  s.mean = sum / periods;
  std::sort(t.begin(), t.end());
  s.p99 = t[std::min<long>(periods - 1, periods * 99 / 100)];
  s.p999 = t[std::min<long>(periods - 1, periods * 999 / 1000)];
  s.max = t.back();
  s.pass = s.misses * 1000 <= periods;  // at most 0.1%
  return s;
}

// Each instance's own input: a decaying tone at its own pitch plus a little noise, looped.
class Inputs {
 public:
  Inputs(int instances, int frames) : frames_(frames), len_(48000 / frames * frames) {
    data_.resize(static_cast<std::size_t>(instances) * len_);
    unsigned seed = 1;
    for (int i = 0; i < instances; ++i)
      for (int n = 0; n < len_; ++n) {
        seed = seed * 1664525u + 1013904223u;
        data_[static_cast<std::size_t>(i) * len_ + n] =
            0.4f * std::exp(-3e-5f * n) * std::sin(0.01f * (1 + i % 17) * n) +
            0.01f * ((seed >> 8) / 16777216.0f - 0.5f);
      }
    in_.resize(instances);
    out_.resize(instances);
    outputs_.resize(static_cast<std::size_t>(instances) * frames);
    for (int i = 0; i < instances; ++i)
      out_[i] = outputs_.data() + static_cast<std::size_t>(i) * frames;
  }
  // The next period's input pointers.
  const float* const* next() {
    for (std::size_t i = 0; i < in_.size(); ++i) in_[i] = data_.data() + i * len_ + at_;
    at_ = (at_ + frames_) % len_;
    return in_.data();
  }
  float* const* out() { return out_.data(); }

 private:
  int frames_, len_, at_ = 0;
  std::vector<float> data_, outputs_;
  std::vector<const float*> in_;
  std::vector<float*> out_;
};

using Runner = std::function<Stats(int instances, int frames, long periods)>;

void print_row(const char* backend, int frames, const Stats& s, const char* note) {
  std::printf("%-5s %6d %9d %9ld %8ld | %9.1f %9.1f %9.1f %9.1f | %5.1f%% %s\n", backend, frames,
              s.instances, s.periods, s.misses, s.mean * 1e6, s.p99 * 1e6, s.p999 * 1e6,
              s.max * 1e6, 100.0 * s.mean / (frames / kRate), note);
  std::fflush(stdout);
}

// The ladder, then the confirmation; returns the confirmed count (0: none passed).
int search(const char* backend, int frames, const std::vector<int>& counts, long search_periods,
           long periods, const Runner& run) {
  std::vector<int> passed;
  for (int n : counts) {
    const Stats s = run(n, frames, search_periods);
    print_row(backend, frames, s, s.pass ? "search: pass" : "search: MISS");
    if (!s.pass) break;
    passed.push_back(n);
  }
  while (!passed.empty()) {
    const Stats s = run(passed.back(), frames, periods);
    print_row(backend, frames, s, s.pass ? "CONFIRMED" : "confirm: MISS");
    if (s.pass) return passed.back();
    passed.pop_back();
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string default_model;
  if (const char* d = std::getenv("SIGPU_SOURCE_DIR"); d && *d) default_model = d;
  default_model +=
      (default_model.empty() ? "" : "/") + std::string("examples/audio/models/a1-wavenet.nam");
  std::vector<std::string> model_paths;
  double size = 1.0;
  long periods = 100000, search_periods = 2000;
  std::vector<int> frames_list{32, 128};
  std::vector<int> gpu_counts{64, 128, 256, 512, 1024, 1536, 2048, 3072, 4096, 6144, 8192};
  std::vector<int> cpu_counts{1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 160, 192, 256};
  bool cpu = true, gpu = true, shared_weights = true;
  unsigned threads = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--model" && has)
      model_paths.push_back(argv[++i]);
    else if (a == "--size" && has)
      size = std::atof(argv[++i]);
    else if (a == "--periods" && has)
      periods = std::atol(argv[++i]);
    else if (a == "--search-periods" && has)
      search_periods = std::atol(argv[++i]);
    else if (a == "--frames" && has)
      frames_list = ints(argv[++i]);
    else if (a == "--gpu-counts" && has)
      gpu_counts = ints(argv[++i]);
    else if (a == "--cpu-counts" && has)
      cpu_counts = ints(argv[++i]);
    else if (a == "--threads" && has)
      threads = static_cast<unsigned>(std::atoi(argv[++i]));
    else if (a == "--no-cpu")
      cpu = false;
    else if (a == "--no-gpu")
      gpu = false;
    else if (a == "--global-weights")
      shared_weights = false;
    else {
      std::fprintf(
          stderr,
          "usage: nam_bench [--model PATH]... [--size S] [--periods N] [--search-periods N] "
          "[--frames list] [--gpu-counts list] [--cpu-counts list] [--no-cpu] "
          "[--no-gpu] [--threads N] [--global-weights]\n");
      return 2;
    }
  }
  if (periods < 1 || search_periods < 1) {
    std::fprintf(stderr, "nam_bench: --periods and --search-periods must be >= 1\n");
    return 2;
  }
  const auto devices = sigpu::cuda_devices();
  if (gpu && devices.empty()) {
    std::printf("no CUDA device: CPU only\n");
    gpu = false;
  }
  try {
    if (model_paths.empty()) model_paths.push_back(default_model);
    std::vector<nam::Model> loaded;
    for (const std::string& path : model_paths) {
      loaded.push_back(nam::load(path));
      const nam::Model& m = loaded.back();
      std::size_t weights = m.weights.size();  // a slimmable model's: every size's
      for (const nam::SizedModel& sized : m.sizes) weights += sized.model->weights.size();
      std::printf("NAM %s (%zu weights%s)\n", path.c_str(), weights,
                  m.sizes.empty() ? "" : ", every size running");
    }
    // Instance i runs model i % count.
    const auto instance_models = [&](int n) {
      std::vector<const nam::Model*> m(n);
      for (int i = 0; i < n; ++i) m[i] = &loaded[static_cast<std::size_t>(i) % loaded.size()];
      return m;
    };
    const unsigned cpu_threads = threads ? threads : std::thread::hardware_concurrency();
    std::printf("48 kHz, size %.2f, deadline = period, pass = <= 0.1%% misses\n", size);
    std::printf("GPU: %s; CPU: %u threads (%u hardware); weights in %s memory\n",
                devices.empty() ? "none" : devices[0].name.c_str(), cpu_threads,
                std::thread::hardware_concurrency(), shared_weights ? "shared" : "global");
    std::printf("%-5s %6s %9s %9s %8s | %9s %9s %9s %9s | %6s\n", "", "frames", "instances",
                "periods", "misses", "mean us", "p99 us", "p99.9 us", "max us", "load");

    const Runner run_gpu = [&](int n, int frames, long p) {
      nam::CudaBatch batch(
          instance_models(n),
          {.sample_rate = kRate, .max_frames = frames, .shared_weights = shared_weights});
      for (int i = 0; i < n; ++i) batch.set_size(i, size);
      batch.reset();
      Inputs io(n, frames);
      return measure(n, frames, p, [&] { batch.process_host(io.next(), io.out(), frames); });
    };
    const Runner run_cpu = [&](int n, int frames, long p) {
      nam::CpuBatch batch(instance_models(n), {.sample_rate = kRate, .max_frames = frames},
                          cpu_threads);
      for (int i = 0; i < n; ++i) batch.set_size(i, size);
      batch.reset();
      Inputs io(n, frames);
      return measure(n, frames, p, [&] { batch.process(io.next(), io.out(), frames); });
    };

    std::vector<std::string> summary;
    for (int frames : frames_list) {
      int g = 0, c = 0;
      if (gpu) g = search("cuda", frames, gpu_counts, search_periods, periods, run_gpu);
      if (cpu) c = search("cpu", frames, cpu_counts, search_periods, periods, run_cpu);
      char line[200];
      std::snprintf(
          line, sizeof line, "%4d frames: cuda %5d instances, cpu %4d instances%s", frames, g, c,
          gpu && cpu && c > 0 ? (", ratio " + std::to_string(static_cast<double>(g) / c)).c_str()
                              : "");
      summary.push_back(line);
    }
    std::printf("\nsummary (confirmed over %ld periods):\n", periods);
    for (const std::string& s : summary) std::printf("  %s\n", s.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "nam_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
