// Writing on a thread of its own, so that a decoder goes on decoding while the pictures before
// are converted and written: the caller's thread only copies (or swaps) each item into one of a
// few slots. The slots are few so that memory stays bounded and a decoder that outruns the disk
// waits.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace sigpu::cli {

/// Gives the items handed to push() to `write`, in order, on a thread of its own. The first
/// exception `write` throws stops the thread; the next push() or finish() rethrows it on the
/// caller's thread. One thread calls push() and finish().
template <class T>
class WriterThread {
 public:
  /// `depth`: items copied and not yet written at most (at least 1).
  WriterThread(std::size_t depth, std::function<void(const T&)> write)
      : slots_(depth), write_(std::move(write)), thread_([this] { run(); }) {}
  /// Writes what was pushed and joins. Reached without finish() only while the caller's own
  /// exception is on its way, so an error in these writes goes unreported.
  ~WriterThread() { stop(); }
  WriterThread(const WriterThread&) = delete;
  WriterThread& operator=(const WriterThread&) = delete;

  /// Copies `item` into a free slot, waiting while every slot holds an item not yet written.
  void push(const T& item) {
    // Copy assignment keeps the slot's storage, so a steady stream of items of one size
    // allocates nothing.
    fill([&item](T& slot) { slot = item; });
  }

  /// As push(), but swaps `item` with the slot's: the caller gets back an item written before
  /// (or a default one), whose storage it may reuse, and nothing is copied.
  void take(T& item) {
    fill([&item](T& slot) { std::swap(slot, item); });
  }

  /// Waits until everything pushed is written and joins the thread; rethrows the writer's error.
  void finish() {
    stop();
    if (error_) std::rethrow_exception(error_);
  }

 private:
  template <class Put>
  void fill(const Put& put) {
    std::size_t slot = 0;
    {
      std::unique_lock lock(mutex_);
      space_.wait(lock, [&] { return queued_ < slots_.size() || error_; });
      if (error_) std::rethrow_exception(error_);
      slot = (oldest_ + queued_) % slots_.size();
    }
    put(slots_[slot]);  // outside the lock: the writer reads only slots of queued items
    {
      std::lock_guard lock(mutex_);
      ++queued_;
    }
    ready_.notify_one();
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

  void run() {
    for (;;) {
      std::size_t slot = 0;
      {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return queued_ > 0 || stopping_; });
        if (queued_ == 0) return;
        slot = oldest_;
      }
      try {
        write_(slots_[slot]);
      } catch (...) {
        {
          std::lock_guard lock(mutex_);
          error_ = std::current_exception();
        }
        space_.notify_one();
        return;
      }
      {
        std::lock_guard lock(mutex_);
        oldest_ = (oldest_ + 1) % slots_.size();
        --queued_;
      }
      space_.notify_one();
    }
  }

  std::vector<T> slots_;  ///< a ring: queued_ items from oldest_ on
  std::function<void(const T&)> write_;
  std::mutex mutex_;
  std::condition_variable ready_, space_;  ///< an item to write; a free slot (or an error)
  std::size_t oldest_ = 0, queued_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
  std::thread thread_;  ///< last: it starts once the members it uses are built
};

}  // namespace sigpu::cli
