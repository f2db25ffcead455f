#include "core/thread_pool.hpp"

#include <algorithm>

namespace sigpu {

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

ThreadPool& ThreadPool::shared() {
  static ThreadPool pool;
  return pool;
}

void ThreadPool::run_chunks() {
  for (;;) {
    std::size_t begin;
    {
      std::lock_guard lock(mutex_);
      if (next_ >= n_) return;
      begin = next_;
      next_ = std::min(n_, next_ + grain_);
    }
    std::size_t end = std::min(n_, begin + grain_);
    try {
      (*job_)(begin, end);
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    std::lock_guard lock(mutex_);
    finished_ += end - begin;
    if (finished_ == n_) done_.notify_all();
  }
}

void ThreadPool::worker_loop() {
  std::size_t seen = 0;
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      ++active_;
    }
    run_chunks();
    std::lock_guard lock(mutex_);
    if (--active_ == 0) done_.notify_all();
  }
}

void ThreadPool::parallel_for(std::size_t n,
                              const std::function<void(std::size_t, std::size_t)>& fn,
                              std::size_t grain) {
  if (n == 0) return;
  std::lock_guard call(call_mutex_);
  {
    std::lock_guard lock(mutex_);
    job_ = &fn;
    n_ = n;
    grain_ = grain ? grain : std::max<std::size_t>(1, (n + size() * 4 - 1) / (size() * 4));
    next_ = 0;
    finished_ = 0;
    error_ = nullptr;
    ++generation_;
  }
  wake_.notify_all();
  run_chunks();
  std::unique_lock lock(mutex_);
  // Wait for every chunk and for every worker to leave run_chunks, so job_ stays valid.
  done_.wait(lock, [&] { return finished_ == n_ && active_ == 0; });
  job_ = nullptr;
  if (error_) std::rethrow_exception(error_);
}

}  // namespace sigpu
