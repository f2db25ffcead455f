#include "hevc/row_scheduler.hpp"

#include <algorithm>

namespace sigpu::hevc {

RowScheduler::RowScheduler(unsigned threads) {
  threads_.reserve(threads);
  for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { loop(); });
}

RowScheduler::~RowScheduler() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& t : threads_) t.join();
}

void RowScheduler::run(std::uint64_t priority, std::function<void()> step) {
  // Signalled under the mutex, as WorkQueue::push does.
  std::lock_guard lock(mutex_);
  steps_.push_back(Step{priority, queued_++, std::move(step)});
  std::push_heap(steps_.begin(), steps_.end());
  wake_.notify_one();
}

void RowScheduler::loop() {
  for (;;) {
    std::function<void()> step;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stop_ || !steps_.empty(); });
      if (steps_.empty()) return;  // stopping, and nothing left to run
      std::pop_heap(steps_.begin(), steps_.end());
      step = std::move(steps_.back().run);
      steps_.pop_back();
    }
    step();
  }
}

}  // namespace sigpu::hevc
