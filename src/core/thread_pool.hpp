// A fixed pool of worker threads with a blocking parallel_for.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sigpu {

class ThreadPool {
 public:
  /// threads == 0 means one per hardware thread.
  explicit ThreadPool(unsigned threads = 0);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }

  /// Calls fn(begin, end) on disjoint chunks covering [0, n), at most `grain` items per chunk
  /// (0: split evenly). The calling thread works too. The first exception thrown by fn is
  /// rethrown after all chunks finish.
  void parallel_for(std::size_t n, const std::function<void(std::size_t, std::size_t)>& fn,
                    std::size_t grain = 0);

  /// A process-wide pool sized to the machine, created on first use.
  static ThreadPool& shared();

 private:
  void worker_loop();
  void run_chunks();

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(std::size_t, std::size_t)>* job_ = nullptr;
  std::size_t n_ = 0, grain_ = 1, next_ = 0, finished_ = 0, generation_ = 0;
  unsigned active_ = 0;
  std::exception_ptr error_;
  bool stop_ = false;
  std::mutex call_mutex_;  // one parallel_for at a time
};

}  // namespace sigpu
