// A fork-join worker pool for period-based real-time work (audio periods, convolution
// partitions): the threads are created once; run() hands one job to the caller and the workers
// through an atomic epoch, without allocating, locking or logging. Between jobs a worker spins
// (pause instruction, then yield) for a configurable time, so a pool fed every period answers
// within microseconds; then it parks on a futex (std::atomic::wait), so an idle pool costs
// nothing. The general ThreadPool (thread_pool.hpp) wakes its workers through a condition
// variable on every call, which is the scheduler latency a period cannot afford.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

namespace sigpu {

/// A non-owning reference to a callable `void(std::size_t begin, std::size_t end)`: two
/// pointers, no allocation. It must not outlive the callable (run() uses it only during the
/// call, so passing a lambda temporary is fine).
class RangeFn {
 public:
  template <class F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, RangeFn> &&
           std::is_invocable_v<F&, std::size_t, std::size_t>) RangeFn(F&& f)
  noexcept  // NOLINT(google-explicit-constructor): passed like a lambda
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* o, std::size_t b, std::size_t e) {
          (*static_cast<std::remove_reference_t<F>*>(o))(b, e);
        }) {}
  void operator()(std::size_t begin, std::size_t end) const { call_(object_, begin, end); }

 private:
  void* object_;
  void (*call_)(void*, std::size_t, std::size_t);
};

struct RtPoolOptions {
  /// Threads that share a job, the caller of run() included; 0: one per hardware thread.
  unsigned threads = 0;
  /// After a job, a worker spins this long for the next one before it parks. Make it longer
  /// than the gap between jobs (a period) or every period pays a futex wake-up.
  std::chrono::microseconds spin{4000};
  /// The first part of the spin uses only the pause instruction; after it, the worker also
  /// yields between checks, so that other threads of a busy machine can run.
  std::chrono::microseconds pause_only{200};
  /// Pins worker w (1 ... threads - 1) to the w-th CPU of the process's affinity mask (modulo
  /// its size), leaving the first CPU to the caller, whose own pinning is the caller's business.
  bool pin = false;
  /// > 0: asks SCHED_FIFO at this priority (1 ... 99) for the workers. Best effort: without
  /// the privilege (CAP_SYS_NICE or an rtprio limit) the workers stay as they are.
  int fifo_priority = 0;
};

/// What the constructor obtained of RtPoolOptions::pin and fifo_priority.
struct RtPoolSetup {
  unsigned workers = 0, pinned = 0, fifo = 0;
  std::string note;  ///< empty, or why pinning or SCHED_FIFO was refused (the OS's words)
};

/// Threads: construct and destroy off the real-time thread (they create and join threads), and
/// never while a run() is in progress. run() from one thread at a time.
class RtPool {
 public:
  explicit RtPool(const RtPoolOptions& options = {});
  ~RtPool();
  RtPool(const RtPool&) = delete;
  RtPool& operator=(const RtPool&) = delete;

  /// Threads that share a job, the caller included.
  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }
  const RtPoolSetup& setup() const { return setup_; }

  /// Calls fn(begin, end) on disjoint chunks that cover [0, count), on the calling thread and
  /// the workers, and returns when every chunk is done. Chunks hold `grain` indices (0: about
  /// count / (4 * size()), so a late or preempted thread leaves its share to the others). Jobs
  /// run with denormals flushed to zero (core/no_denormals.hpp), on the caller too. Every
  /// chunk runs even when one throws; the first exception is then rethrown here. Allocates and
  /// locks nothing (unless fn throws). Calling run() from inside fn, or from a second thread
  /// while a run is in progress, throws sigpu::Error: a pool serves one job at a time.
  void run(std::size_t count, RangeFn fn, std::size_t grain = 0);

 private:
  void worker_main();
  /// Returns the epoch of the next job (or of the stop request): spins, then parks.
  std::uint32_t await_job(std::uint32_t seen);
  /// Claims and runs chunks of job `epoch` until none are left.
  void help(std::uint32_t epoch);
  /// Pinning and SCHED_FIFO for the workers, as far as the OS allows; fills setup_.
  void apply_options(const RtPoolOptions& options);
  void stop_workers();

  // The job; written by run() before it publishes the job, read by a thread only after it has
  // claimed a chunk, which keeps the job from finishing (and these from changing) meanwhile.
  const RangeFn* fn_ = nullptr;  ///< run()'s argument, on the caller's stack
  std::size_t count_ = 0, grain_ = 1;
  std::exception_ptr error_;  ///< written by the one thread that sets failed_

  /// High 32 bits: the epoch of the job being handed out; low 32: chunks not yet claimed
  /// (chunk k = the count before the claim, minus one). One word, so that a thread that was
  /// late for a job can never claim a chunk of the next one.
  alignas(64) std::atomic<std::uint64_t> claim_{0};
  alignas(64) std::atomic<std::uint32_t> done_{0};  ///< chunks of the current job finished
  std::atomic<bool> failed_{false};
  alignas(64) std::atomic<std::uint32_t> epoch_{0};  ///< what idle workers watch (a futex word)
  std::atomic<std::uint32_t> sleepers_{0};           ///< workers parked or about to
  std::atomic<bool> stop_{false};
  alignas(64) std::atomic<bool> busy_{false};  ///< a run() is in progress
  std::chrono::microseconds spin_, pause_only_;
  RtPoolSetup setup_;
  std::vector<std::thread> workers_;
};

}  // namespace sigpu
