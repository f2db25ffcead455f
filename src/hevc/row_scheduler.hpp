// Threads that run the WPP rows of the pictures in flight (wpp_rows.hpp), the oldest picture's
// first. A row runs until it must wait (for the row above, or for the collocated picture's
// parse) and then gives its thread back; whoever gets it going again queues it anew. So a thread
// never sleeps on a row while another row could run, and a picture that later ones wait for
// (an IDR picture, a reference) is not held up by rows of younger pictures that started first.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace sigpu::hevc {

class RowScheduler {
 public:
  explicit RowScheduler(unsigned threads);
  /// Runs every step already queued, then joins the threads.
  ~RowScheduler();
  RowScheduler(const RowScheduler&) = delete;
  RowScheduler& operator=(const RowScheduler&) = delete;

  /// Queues a step; the lowest `priority` runs first, equal ones in the order queued. Any
  /// thread may call it, steps too. A step must not throw.
  void run(std::uint64_t priority, std::function<void()> step);

  /// The priority of row `row` of the picture decoded `decode_index`-th: older pictures first,
  /// then upper rows.
  static std::uint64_t priority(int decode_index, int row) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(decode_index)) << 20) |
           static_cast<std::uint32_t>(row);
  }

 private:
  struct Step {
    std::uint64_t priority, order;
    std::function<void()> run;
    // The heap's front is its greatest.
    bool operator<(const Step& o) const {
      return priority != o.priority ? priority > o.priority : order > o.order;
    }
  };
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<Step> steps_;  ///< a heap
  std::uint64_t queued_ = 0;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace sigpu::hevc
