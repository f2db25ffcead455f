#include "hevc/work_queue.hpp"

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

// The queue's threads may run the task and the queue go away as soon as the mutex is free, so
// the condition variable is signalled before, not after (ThreadSanitizer found a pusher on
// another queue's thread still in notify_one while the queue was destroyed).
void WorkQueue::push(std::function<void()> task) {
  std::lock_guard lock(mutex_);
  tasks_.push_back(std::move(task));
  wake_.notify_one();
}

void WorkQueue::push_front(std::function<void()> task) {
  std::lock_guard lock(mutex_);
  tasks_.push_front(std::move(task));
  wake_.notify_one();
}

void WorkQueue::loop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, and nothing left to run
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace sigpu::hevc
