#include "hevc/work_queue.hpp"

#include <algorithm>

namespace sigpu::hevc {

WorkQueue::WorkQueue(unsigned threads) {
  threads_.reserve(threads);
  for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { loop(); });
}

WorkQueue::~WorkQueue() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkQueue::push(std::function<void()> task) {
  std::lock_guard lock(mutex_);
  queue(kLast, queued_++, std::move(task));
}

void WorkQueue::push_front(std::function<void()> task) {
  std::lock_guard lock(mutex_);
  queue(0, front_--, std::move(task));
}

void WorkQueue::push(std::uint64_t priority, std::function<void()> task) {
  std::lock_guard lock(mutex_);
  queue(std::min(priority, kLast - 2) + 1, queued_++, std::move(task));
}

// Under the mutex. The queue's threads may run the task and the queue go away as soon as the
// mutex is free, so the condition variable is signalled before, not after (ThreadSanitizer found
// a pusher on another queue's thread still in notify_one while the queue was destroyed).
void WorkQueue::queue(std::uint64_t rank, std::uint64_t order, std::function<void()> task) {
  tasks_.push_back(Task{rank, order, std::move(task)});
  std::push_heap(tasks_.begin(), tasks_.end());
  wake_.notify_one();
}

void WorkQueue::loop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, and nothing left to run
      std::pop_heap(tasks_.begin(), tasks_.end());
      task = std::move(tasks_.back().run);
      tasks_.pop_back();
    }
    task();
  }
}

}  // namespace sigpu::hevc
