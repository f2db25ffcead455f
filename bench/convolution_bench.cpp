// Real-time convolution benchmark (issue 4 item 7, convolution scenarios), 48 kHz:
//   a) N parallel mono 4096-tap convolutions at 32 frames (N inputs, N outputs, N paths)
//   b) N true-stereo 65536-tap reverbs at 128 frames (2N inputs, 2N outputs, 4N paths)
// Every path has its own IR (distinct data, so no cache holds what another path reads).
// Periods run back to back; the time of one period is what a real-time thread sees: CPU,
// process() on all cores; CUDA, one CUDA-graph launch (H2D input, the convolution, D2H output,
// pinned host buffers) plus the wait for it. A period misses when it takes longer than its
// duration. For each backend the largest N with <= 0.1% misses is searched (doubling, then
// bisection, short runs), then confirmed with a full-length run.
//
//   convolution_bench [--scenario a|b|all] [--backend cpu,cpu1,cuda] [--periods 100000]
//                     [--cpu-periods N] [--search-periods 2000] [--wait sync|event|flag]
//                     [--n N] [--max-n N] [--threads N] [--paced]
// Backends: cpu (all cores, or --threads; workers of the real-time pool, core/rt_pool.hpp), cpu1
// (the serial reference, one core), cuda; default cpu,cuda.
// --n skips the search; --cpu-periods sets the CPU's confirm length (default --periods).
// --paced: CPU periods start one period apart, the thread sleeping in between (as under an audio
// callback: the pool's workers see the gap), instead of back to back.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <sigpu/convolution.hpp>

#ifdef SIGPU_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace cv = sigpu::convolution;

namespace {

constexpr double kRate = 48000;
constexpr double kMaxMissRate = 0.001;

struct Scenario {
  const char* name;
  const char* what;
  std::uint32_t partition;
  std::size_t taps;
  bool stereo;
  std::uint32_t cpu_start_n, cuda_start_n, max_n;  // search starts; N never exceeds max_n
};

const Scenario kScenarios[] = {
    {"a", "mono 4096-tap, 32 frames", 32, 4096, false, 1024, 4096, 65536},
    {"b", "true-stereo 65536-tap, 128 frames", 128, 65536, true, 16, 512, 8192},
};

struct Options {
  std::string scenario = "all", backends = "cpu,cuda", wait = "event";
  std::size_t periods = 100000, cpu_periods = 0, search_periods = 2000;  // cpu_periods 0: periods
  std::uint32_t n = 0, max_n = 0;
  unsigned threads = 0;  // the cpu backend's threads, the caller included; 0: all
  bool paced = false;    // CPU periods start every period instead of back to back
};

std::uint64_t splitmix(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

float noise(std::uint64_t& s) {
  return static_cast<float>(static_cast<std::int64_t>(splitmix(s)) >> 40) / 8388608.0f;
}

// A decaying noise IR, -60 dB at its end (no denormals anywhere).
std::vector<float> make_ir(std::size_t taps, std::uint64_t seed) {
  std::vector<float> h(taps);
  const float scale = 1.0f / std::sqrt(static_cast<float>(taps));
  const double decay = std::log(1000.0) / static_cast<double>(taps);
  for (std::size_t k = 0; k < taps; ++k)
    h[k] = noise(seed) * scale * static_cast<float>(std::exp(-decay * static_cast<double>(k)));
  return h;
}

cv::Config make_config(const Scenario& s, std::uint32_t n) {
  cv::Config c{.partition = s.partition};
  const std::uint32_t channels = s.stereo ? 2 * n : n;
  c.inputs = c.outputs = channels;
  const std::uint32_t paths = s.stereo ? 4 * n : n;
  c.irs.resize(paths);
  // Gigabytes of IRs for the largest N: generated on every core.
  std::vector<std::thread> workers;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned t = 0; t < threads; ++t)
    workers.emplace_back([&, t] {
      for (std::uint32_t p = t; p < paths; p += threads) c.irs[p] = make_ir(s.taps, p + 1);
    });
  for (auto& w : workers) w.join();
  for (std::uint32_t i = 0; i < n; ++i) {
    if (s.stereo) {  // in L -> out L, in L -> out R, in R -> out L, in R -> out R
      c.paths.push_back({2 * i, 4 * i, 2 * i});
      c.paths.push_back({2 * i, 4 * i + 1, 2 * i + 1});
      c.paths.push_back({2 * i + 1, 4 * i + 2, 2 * i});
      c.paths.push_back({2 * i + 1, 4 * i + 3, 2 * i + 1});
    } else {
      c.paths.push_back({i, i, i});
    }
  }
  return c;
}

std::vector<float> make_input(std::size_t n) {
  std::vector<float> v(n);
  std::uint64_t s = 42;
  for (auto& x : v) x = 0.5f * noise(s);
  return v;
}

struct Stats {
  std::size_t periods = 0, misses = 0;
  double mean = 0, p99 = 0, p999 = 0, max = 0;  // seconds
  double miss_rate() const { return periods ? double(misses) / double(periods) : 1.0; }
  bool ok() const { return miss_rate() <= kMaxMissRate; }
};

Stats summarise(std::vector<double>& t, double period) {
  Stats s;
  s.periods = t.size();
  for (double v : t) {
    s.mean += v;
    s.misses += v > period;
  }
  s.mean /= static_cast<double>(t.size());
  std::sort(t.begin(), t.end());
  auto pct = [&](double q) {
    return t[std::min(t.size() - 1, static_cast<std::size_t>(std::ceil(q * t.size())) - 1)];
  };
  s.p99 = pct(0.99);
  s.p999 = pct(0.999);
  s.max = t.back();
  return s;
}

using Clock = std::chrono::steady_clock;

/// Times `periods` calls of one_period() after a warm-up. Paced: a call starts every `period`
/// (or at once when the last one overran), the thread sleeping in between as an audio callback's
/// thread does; otherwise back to back.
Stats time_periods(const std::function<void()>& one_period, std::size_t periods, double period,
                   bool paced = false) {
  for (int i = 0; i < 200; ++i) one_period();
  std::vector<double> t(periods);
  const auto step =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(period));
  auto start = Clock::now();
  for (auto& v : t) {
    if (paced) {
      std::this_thread::sleep_until(start);
      start = std::max(start + step, Clock::now());
    }
    const auto t0 = Clock::now();
    one_period();
    v = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  return summarise(t, period);
}

/// One backend at one N: constructs, then times runs of the given lengths (one per wait mode
/// for CUDA).
class Runner {
 public:
  virtual ~Runner() = default;
  virtual Stats run(std::size_t periods, const std::string& wait) = 0;
};

class CpuRunner : public Runner {
 public:
  CpuRunner(const cv::Config& c, unsigned threads, double period, bool paced)
      : conv_(c, threads),
        in_(make_input(std::size_t{c.inputs} * c.partition)),
        out_(std::size_t{c.outputs} * c.partition),
        period_(period),
        paced_(paced) {}
  Stats run(std::size_t periods, const std::string&) override {
    return time_periods([&] { conv_.process(in_, out_); }, periods, period_, paced_);
  }

 private:
  cv::CpuConvolver conv_;
  std::vector<float> in_, out_;
  double period_;
  bool paced_;
};

#ifdef SIGPU_HAVE_CUDA
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw sigpu::CudaError(std::string(what) + ": " + cudaGetErrorString(e));
}

class CudaRunner : public Runner {
 public:
  CudaRunner(const cv::Config& c, double period) : conv_(c), period_(period) {
    const std::size_t in_bytes = std::size_t{c.inputs} * c.partition * 4;
    const std::size_t out_bytes = std::size_t{c.outputs} * c.partition * 4;
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "stream");
    check(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming), "event");
    check(cudaMalloc(&d_in_, in_bytes), "cudaMalloc");
    check(cudaMalloc(&d_out_, out_bytes), "cudaMalloc");
    check(cudaMalloc(&d_one_, 4), "cudaMalloc");
    check(cudaMallocHost(&h_in_, in_bytes), "cudaMallocHost");
    check(cudaMallocHost(&h_out_, out_bytes), "cudaMallocHost");
    check(cudaMallocHost(&h_flag_, 4), "cudaMallocHost");
    flag_ = h_flag_;
    const auto in = make_input(std::size_t{c.inputs} * c.partition);
    std::memcpy(h_in_, in.data(), in_bytes);
    const std::uint32_t one = 1;
    check(cudaMemcpy(d_one_, &one, 4, cudaMemcpyHostToDevice), "cudaMemcpy");
    // The period as a graph: input in, convolution, output out, then the completion flag.
    check(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal), "capture");
    check(cudaMemcpyAsync(d_in_, h_in_, in_bytes, cudaMemcpyHostToDevice, stream_), "H2D");
    conv_.process(d_in_, d_out_, stream_);
    check(cudaMemcpyAsync(h_out_, d_out_, out_bytes, cudaMemcpyDeviceToHost, stream_), "D2H");
    check(cudaMemcpyAsync(h_flag_, d_one_, 4, cudaMemcpyDeviceToHost, stream_), "flag");
    check(cudaStreamEndCapture(stream_, &graph_), "end capture");
    check(cudaGraphInstantiate(&exec_, graph_, 0), "instantiate");
  }
  ~CudaRunner() override {
    cudaStreamSynchronize(stream_);
    cudaGraphExecDestroy(exec_);
    cudaGraphDestroy(graph_);
    cudaFree(d_in_);
    cudaFree(d_out_);
    cudaFree(d_one_);
    cudaFreeHost(h_in_);
    cudaFreeHost(h_out_);
    cudaFreeHost(h_flag_);
    cudaEventDestroy(done_);
    cudaStreamDestroy(stream_);
  }
  Stats run(std::size_t periods, const std::string& wait) override {
    std::function<void()> f;
    if (wait == "sync") {
      f = [&] {
        check(cudaGraphLaunch(exec_, stream_), "launch");
        check(cudaStreamSynchronize(stream_), "sync");
      };
    } else if (wait == "event") {
      f = [&] {
        check(cudaGraphLaunch(exec_, stream_), "launch");
        check(cudaEventRecord(done_, stream_), "record");
        cudaError_t e;
        while ((e = cudaEventQuery(done_)) == cudaErrorNotReady) {
        }
        check(e, "event query");
      };
    } else {
      f = [&] {
        *flag_ = 0;
        check(cudaGraphLaunch(exec_, stream_), "launch");
        while (*flag_ == 0) {
        }
      };
    }
    Stats s = time_periods(f, periods, period_);
    check(cudaStreamSynchronize(stream_), "sync");
    return s;
  }
  std::size_t device_bytes() const { return conv_.device_bytes(); }

 private:
  cv::CudaConvolver conv_;
  double period_;
  cudaStream_t stream_{};
  cudaEvent_t done_{};
  cudaGraph_t graph_{};
  cudaGraphExec_t exec_{};
  float *d_in_ = nullptr, *d_out_ = nullptr, *h_in_ = nullptr, *h_out_ = nullptr;
  std::uint32_t *d_one_ = nullptr, *h_flag_ = nullptr;
  volatile std::uint32_t* flag_ = nullptr;  // h_flag_, read by the spinning host thread
};
#endif

std::unique_ptr<Runner> make_runner(const std::string& backend, const cv::Config& c, double period,
                                    const Options& o) {
#ifdef SIGPU_HAVE_CUDA
  if (backend == "cuda") return std::make_unique<CudaRunner>(c, period);
#endif
  return std::make_unique<CpuRunner>(c, backend == "cpu1" ? 1 : o.threads, period, o.paced);
}

void print_row(const Scenario& s, const std::string& backend, const std::string& wait,
               std::uint32_t n, const Stats& st, const char* note) {
  std::printf("%-3s %-5s %-6s %6u %8zu | %9.1f %9.1f %9.1f %9.1f | %8.4f%% %s\n", s.name,
              backend.c_str(), backend != "cuda" ? "-" : wait.c_str(), n, st.periods, st.mean * 1e6,
              st.p99 * 1e6, st.p999 * 1e6, st.max * 1e6, 100 * st.miss_rate(), note);
  std::fflush(stdout);
}

Stats trial(const Scenario& s, const std::string& backend, const Options& o, std::uint32_t n,
            std::size_t periods, double period) {
  const auto runner = make_runner(backend, make_config(s, n), period, o);
  const Stats st = runner->run(periods, o.wait);
  print_row(s, backend, o.wait, n, st, st.ok() ? "search ok" : "search miss");
  return st;
}

/// Largest N with <= 0.1% misses: doubling (halving when the start misses), then bisection to
/// 1/16, then a full-length run (stepping down by 1/16 while it misses).
void search(const Scenario& s, const std::string& backend, const Options& o) {
  const double period = s.partition / kRate;
  const bool cpu = backend != "cuda";
  const std::size_t periods = cpu && o.cpu_periods ? o.cpu_periods : o.periods;
  std::uint32_t good = 0, bad = 0;
  const std::uint32_t max_n = o.max_n ? o.max_n : s.max_n;
  const std::uint32_t start = std::min(max_n, cpu ? s.cpu_start_n : s.cuda_start_n);
  if (o.n) {
    good = o.n;
  } else {
    auto passes = [&](std::uint32_t n) {
      return trial(s, backend, o, n, o.search_periods, period).ok();
    };
    for (std::uint32_t n = start; n >= 1; n /= 2) {  // halve until one passes
      if (passes(n)) {
        good = n;
        break;
      }
      bad = n;
    }
    if (good == start)  // double while they pass
      for (std::uint32_t n = 2 * start; n <= max_n; n *= 2) {
        if (!passes(n)) {
          bad = n;
          break;
        }
        good = n;
      }
    while (bad && good && bad - good > std::max(1u, good / 16)) {
      const std::uint32_t mid = good + (bad - good) / 2;
      (passes(mid) ? good : bad) = mid;
    }
    if (!good) {
      std::printf("%-3s %-5s: even N = 1 misses deadlines\n", s.name, backend.c_str());
      return;
    }
  }
  for (int attempt = 0; attempt < 4; ++attempt) {
    const auto runner = make_runner(backend, make_config(s, good), period, o);
    const Stats st = runner->run(periods, o.wait);
    print_row(s, backend, o.wait, good, st, st.ok() ? "CONFIRMED" : "confirm failed");
#ifdef SIGPU_HAVE_CUDA
    if (backend == "cuda") {
      auto* cuda = static_cast<CudaRunner*>(runner.get());
      const std::size_t paths = s.stereo ? 4u * good : good;
      const double bytes =
          2.0 * paths * cv::partitions(s.taps, s.partition) * (s.partition + 1) * 8.0;
      std::printf(
          "    device memory %.2f GB; spectra read per period %.1f MB (%.0f GB/s at the "
          "mean)\n",
          cuda->device_bytes() / 1e9, bytes / 1e6, bytes / st.mean / 1e9);
      for (const char* w : {"sync", "event", "flag"})
        if (w != o.wait)
          print_row(s, backend, w, good, runner->run(o.search_periods * 2, w), "wait mode");
    }
#endif
    if (st.ok() || o.n) return;
    good -= std::max(1u, good / 16);
  }
}

#ifdef SIGPU_HAVE_CUDA
/// A fast wrong answer is a failure: CUDA vs CPU on a small instance of the scenario.
void check_agreement(const Scenario& s) {
  const cv::Config c = make_config(s, 2);
  cv::CpuConvolver cpu(c);
  cv::CudaConvolver gpu(c);
  const std::size_t in_n = std::size_t{c.inputs} * c.partition;
  const std::size_t out_n = std::size_t{c.outputs} * c.partition;
  float *d_in = nullptr, *d_out = nullptr;
  check(cudaMalloc(&d_in, in_n * 4), "cudaMalloc");
  check(cudaMalloc(&d_out, out_n * 4), "cudaMalloc");
  std::vector<float> out(out_n), got(out_n);
  std::uint64_t seed = 7;
  double err = 0;
  for (int p = 0; p < 600; ++p) {
    std::vector<float> in(in_n);
    for (auto& x : in) x = 0.5f * noise(seed);
    cpu.process(in, out);
    check(cudaMemcpy(d_in, in.data(), in_n * 4, cudaMemcpyHostToDevice), "H2D");
    gpu.process(d_in, d_out, nullptr);
    check(cudaMemcpy(got.data(), d_out, out_n * 4, cudaMemcpyDeviceToHost), "D2H");
    for (std::size_t i = 0; i < out_n; ++i)
      err = std::max(err, static_cast<double>(std::abs(out[i] - got[i])));
  }
  cudaFree(d_in);
  cudaFree(d_out);
  std::printf("%-3s cuda vs cpu, N = 2, 600 periods: max error %.1f dBFS %s\n", s.name,
              20 * std::log10(std::max(err, 1e-30)), err <= 1e-5 ? "(ok)" : "(TOO LARGE)");
}
#endif

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--scenario" && has)
      o.scenario = argv[++i];
    else if (a == "--backend" && has)
      o.backends = argv[++i];
    else if (a == "--wait" && has)
      o.wait = argv[++i];
    else if (a == "--periods" && has)
      o.periods = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--cpu-periods" && has)
      o.cpu_periods = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--search-periods" && has)
      o.search_periods = std::strtoull(argv[++i], nullptr, 10);
    else if (a == "--n" && has)
      o.n = static_cast<std::uint32_t>(std::atoi(argv[++i]));
    else if (a == "--max-n" && has)
      o.max_n = static_cast<std::uint32_t>(std::atoi(argv[++i]));
    else if (a == "--threads" && has)
      o.threads = static_cast<unsigned>(std::atoi(argv[++i]));
    else if (a == "--paced")
      o.paced = true;
    else {
      std::fprintf(
          stderr,
          "usage: convolution_bench [--scenario a|b|all] [--backend cpu,cpu1,cuda] "
          "[--periods N] [--cpu-periods N] [--search-periods N] [--wait sync|event|flag] [--n N] "
          "[--max-n N] [--threads N] [--paced]\n");
      return 2;
    }
  }
  if (o.periods < 1000 || o.search_periods < 1000 || (o.cpu_periods && o.cpu_periods < 1000)) {
    std::fprintf(stderr, "convolution_bench: period counts must be >= 1000\n");
    return 2;
  }
  const auto devices = sigpu::cuda_devices();
  std::vector<std::string> backends;
  for (std::size_t b = 0; b < o.backends.size();) {
    const std::size_t e = std::min(o.backends.find(',', b), o.backends.size());
    backends.push_back(o.backends.substr(b, e - b));
    b = e + 1;
  }
  for (const auto& b : backends) {
    if (b != "cpu" && b != "cpu1" && b != "cuda") {
      std::fprintf(stderr, "convolution_bench: unknown backend '%s'\n", b.c_str());
      return 2;
    }
    if (b == "cuda" && devices.empty()) {
      std::fprintf(stderr, "convolution_bench: no CUDA device for the cuda backend\n");
      return 1;
    }
  }
  std::printf(
      "convolution bench, 48 kHz; GPU: %s; CPU: %u hardware threads (cpu uses %u, cpu1 one); "
      "CUDA wait: %s\n",
      devices.empty() ? "none" : devices[0].name.c_str(), std::thread::hardware_concurrency(),
      o.threads ? o.threads : std::max(1u, std::thread::hardware_concurrency()), o.wait.c_str());
  std::printf("%-3s %-5s %-6s %6s %8s | %9s %9s %9s %9s | %9s\n", "sc", "back", "wait", "N",
              "periods", "mean us", "p99 us", "p99.9 us", "max us", "misses");
  try {
    for (const Scenario& s : kScenarios) {
      if (o.scenario != "all" && o.scenario != s.name) continue;
      std::printf("-- %s) %s: period %.1f us\n", s.name, s.what, s.partition / kRate * 1e6);
#ifdef SIGPU_HAVE_CUDA
      if (!devices.empty()) check_agreement(s);
#endif
      for (const auto& b : backends) search(s, b, o);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "convolution_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
