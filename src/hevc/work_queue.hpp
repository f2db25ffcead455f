// A queue of tasks run by the queue's own threads: the decoder's picture workers (one per core),
// its GPU lanes (one thread each) and the threads parsing WPP rows (wpp_rows.hpp). Owning the
// threads, instead of taking the shared pool's blocking parallel_for, lets pictures enter while
// others are in flight, and a caller's frame callback that uses the shared pool cannot deadlock
// with the decoder. Tasks run first in first out, except those pushed to the front and those
// given a priority, which run before the others.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

namespace sigpu::hevc {

class WorkQueue {
 public:
  explicit WorkQueue(unsigned threads);
  /// Runs every task already queued, then joins the threads.
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  /// Queues a task; any thread may call it, tasks too. A task must not throw.
  void push(std::function<void()> task);
  /// Queues a task ahead of those waiting (work that finishes something already started).
  void push_front(std::function<void()> task);
  /// Queues a task ahead of those pushed without a priority and behind those pushed to the
  /// front: the lowest `priority` first, equal ones in the order queued.
  void push(std::uint64_t priority, std::function<void()> task);

 private:
  struct Task {
    std::uint64_t rank, order;
    std::function<void()> run;
    bool operator<(const Task& o) const {  // the heap's front is its greatest
      return rank != o.rank ? rank > o.rank : order > o.order;
    }
  };
  static constexpr std::uint64_t kLast = std::numeric_limits<std::uint64_t>::max();
  void queue(std::uint64_t rank, std::uint64_t order, std::function<void()> task);
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Task> tasks_;  ///< a heap
  std::uint64_t queued_ = 0;
  std::uint64_t front_ = kLast;  ///< counts down: the task pushed to the front last runs first
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace sigpu::hevc
