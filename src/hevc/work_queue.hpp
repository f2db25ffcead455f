// A first-in first-out queue of tasks run by the queue's own threads: the decoder's picture
// workers (one per core) and its GPU stage (one thread). Owning the threads, instead of taking
// the shared pool's blocking parallel_for, lets pictures enter while others are in flight, and
// a caller's frame callback that uses the shared pool cannot deadlock with the decoder.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
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

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace sigpu::hevc
