#include "core/rt_pool.hpp"

#include "core/no_denormals.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include <sigpu/core.hpp>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#endif

namespace sigpu {

namespace {

using Clock = std::chrono::steady_clock;

/// Tells the core that this is a spin-wait (less power, no memory-order mis-speculation when the
/// awaited store lands, and the sibling hyper-thread gets the pipeline).
inline void cpu_pause() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#else
  std::this_thread::yield();
#endif
}

/// Spins until ready() is true: the pause instruction for `pause_only`, then also yields.
/// Returns false, without waiting further, once `limit` has passed.
template <class Ready>
bool spin_until(Ready ready, Clock::duration pause_only, Clock::duration limit) {
  const auto start = Clock::now();
  bool yielding = false;
  for (unsigned i = 1;; ++i) {
    if (ready()) return true;
    if (yielding)
      std::this_thread::yield();
    else
      cpu_pause();
    if (i % 64 == 0) {  // the clock costs more than a pause: look at it now and then
      const auto idle = Clock::now() - start;
      if (idle >= limit) return false;
      yielding = idle >= pause_only;
    }
  }
}

constexpr std::uint64_t kChunkMask = 0xffffffffu;

}  // namespace

RtPool::RtPool(const RtPoolOptions& options)
    : spin_(options.spin), pause_only_(options.pause_only) {
  if (options.fifo_priority < 0 || options.fifo_priority > 99)
    throw Error("RtPool: fifo_priority = " + std::to_string(options.fifo_priority) +
                " is not in [0, 99]");
  if (options.spin.count() < 0 || options.pause_only.count() < 0)
    throw Error("RtPool: spin and pause_only must not be negative");
  const unsigned threads =
      options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  try {
    for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_main(); });
  } catch (...) {
    stop_workers();
    throw;
  }
  apply_options(options);
}

RtPool::~RtPool() {
  stop_workers();
}

void RtPool::stop_workers() {
  stop_.store(true, std::memory_order_relaxed);
  epoch_.fetch_add(1);  // seq_cst, so it also publishes stop_
  epoch_.notify_all();
  for (auto& t : workers_) t.join();
}

void RtPool::apply_options(const RtPoolOptions& options) {
  setup_.workers = static_cast<unsigned>(workers_.size());
  if (!options.pin && options.fifo_priority == 0) return;
#ifdef __linux__
  std::vector<int> cpus;
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  std::string pin_error = options.pin && cpus.empty() ? "pinning: no CPU in the affinity mask" : "";
  std::string fifo_error;
  for (std::size_t w = 0; w < workers_.size(); ++w) {
    const pthread_t handle = workers_[w].native_handle();
    if (options.pin && !cpus.empty()) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpus[(w + 1) % cpus.size()], &one);
      const int rc = pthread_setaffinity_np(handle, sizeof one, &one);
      if (rc == 0)
        ++setup_.pinned;
      else if (pin_error.empty())
        pin_error = "pinning refused: " + std::string(std::strerror(rc));
    }
    if (options.fifo_priority > 0) {
      sched_param param{};
      param.sched_priority = options.fifo_priority;
      const int rc = pthread_setschedparam(handle, SCHED_FIFO, &param);
      if (rc == 0)
        ++setup_.fifo;
      else if (fifo_error.empty())
        fifo_error = "SCHED_FIFO " + std::to_string(options.fifo_priority) +
                     " refused: " + std::strerror(rc);
    }
  }
  setup_.note = pin_error + (pin_error.empty() || fifo_error.empty() ? "" : "; ") + fifo_error;
#else
  setup_.note = "pinning and SCHED_FIFO are implemented for Linux only";
#endif
}

std::uint32_t RtPool::await_job(std::uint32_t seen) {
  std::uint32_t epoch = seen;
  const auto moved = [&] {
    epoch = epoch_.load(std::memory_order_acquire);
    return epoch != seen;
  };
  if (spin_until(moved, pause_only_, spin_)) return epoch;
  // Park. The sleeper count and the epoch are both seq_cst, as in run(): either run() sees this
  // sleeper and notifies, or this thread sees the new epoch and does not sleep.
  sleepers_.fetch_add(1);
  while ((epoch = epoch_.load()) == seen) epoch_.wait(seen);
  sleepers_.fetch_sub(1, std::memory_order_relaxed);
  return epoch;
}

void RtPool::worker_main() {
  const ScopedNoDenormals flush;  // real-time work: for the worker's whole life
  std::uint32_t seen = 0;
  for (;;) {
    seen = await_job(seen);
    if (stop_.load(std::memory_order_relaxed)) return;
    help(seen);
  }
}

void RtPool::help(std::uint32_t epoch) {
  std::uint64_t claim = claim_.load(std::memory_order_acquire);
  for (;;) {
    if (claim >> 32 != epoch || (claim & kChunkMask) == 0) return;
    if (!claim_.compare_exchange_weak(claim, claim - 1, std::memory_order_acq_rel,
                                      std::memory_order_acquire))
      continue;
    // The chunk is ours: the job cannot finish, nor fn_, count_ and grain_ change, before
    // done_ counts it.
    const std::size_t begin = ((claim & kChunkMask) - 1) * grain_;
    try {
      (*fn_)(begin, std::min(count_, begin + grain_));
    } catch (...) {
      if (!failed_.exchange(true, std::memory_order_relaxed)) error_ = std::current_exception();
    }
    done_.fetch_add(1, std::memory_order_release);
    claim = claim_.load(std::memory_order_acquire);
  }
}

void RtPool::run(std::size_t count, RangeFn fn, std::size_t grain) {
  if (busy_.exchange(true, std::memory_order_acquire))
    throw Error(
        "RtPool::run: the pool is already running a job (run() called from inside a job, or "
        "from a second thread); a pool serves one job at a time");
  struct Idle {
    std::atomic<bool>& busy;
    ~Idle() { busy.store(false, std::memory_order_release); }
  } idle{busy_};
  if (count == 0) return;
  const ScopedNoDenormals flush;  // the caller's share, as the workers'
  if (grain == 0) grain = std::max<std::size_t>(1, count / (4 * std::size_t{size()}));
  constexpr std::size_t kMaxChunks = std::numeric_limits<std::uint32_t>::max();
  grain = std::max(grain, (count + kMaxChunks - 1) / kMaxChunks);
  const std::size_t chunks = (count + grain - 1) / grain;

  fn_ = &fn;
  count_ = count;
  grain_ = grain;
  failed_.store(false, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  const std::uint32_t epoch = epoch_.load(std::memory_order_relaxed) + 1;
  claim_.store(std::uint64_t{epoch} << 32 | chunks, std::memory_order_release);
  epoch_.store(epoch);  // seq_cst: pairs with the sleepers' check in await_job
  if (sleepers_.load() != 0) epoch_.notify_all();

  help(epoch);
  // The caller is the real-time thread: it neither parks nor yields (system calls), it spins
  // for the workers' last chunks.
  spin_until([&] { return done_.load(std::memory_order_acquire) == chunks; },
             Clock::duration::max(), Clock::duration::max());
  fn_ = nullptr;
  if (failed_.load(std::memory_order_relaxed)) std::rethrow_exception(std::exchange(error_, {}));
}

}  // namespace sigpu
