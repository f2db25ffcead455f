#include "core/rt_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <sigpu/core.hpp>

namespace sigpu {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

void busy_for(std::chrono::nanoseconds t) {
  const auto until = std::chrono::steady_clock::now() + t;
  while (std::chrono::steady_clock::now() < until) {
  }
}

/// Runs one job and checks that it covered [0, count) exactly once.
void expect_each_index_once(RtPool& pool, std::size_t count, std::size_t grain) {
  std::vector<std::atomic<int>> hits(count);
  pool.run(
      count,
      [&](std::size_t b, std::size_t e) {
        ASSERT_LE(b, e);
        ASSERT_LE(e, count);
        if (grain) {
          ASSERT_LE(e - b, grain);
        }
        for (std::size_t i = b; i < e; ++i) hits[i].fetch_add(1, std::memory_order_relaxed);
      },
      grain);
  for (std::size_t i = 0; i < count; ++i)
    ASSERT_EQ(hits[i].load(), 1) << "count " << count << " grain " << grain << " index " << i;
}

TEST(RtPool, CoversEveryIndexExactlyOnce) {
  for (unsigned threads : {1u, 2u, 4u}) {
    RtPool pool({.threads = threads});
    EXPECT_EQ(pool.size(), threads);
    for (std::size_t count : {1u, 2u, 7u, 64u, 1000u, 100003u})
      for (std::size_t grain : {0u, 1u, 3u, 1000000u}) expect_each_index_once(pool, count, grain);
  }
}

TEST(RtPool, ZeroItemsCallNothingAndOneItemIsOneCall) {
  RtPool pool({.threads = 3});
  std::atomic<int> calls{0};
  pool.run(0, [&](std::size_t, std::size_t) { ++calls; });
  EXPECT_EQ(calls.load(), 0);
  std::size_t begin = 99, end = 99;
  pool.run(1, [&](std::size_t b, std::size_t e) {
    ++calls;
    begin = b;
    end = e;
  });
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(begin, 0u);
  EXPECT_EQ(end, 1u);
}

// Many small jobs back to back: the hand-off between jobs is where a late worker could take a
// chunk of the wrong job, run one twice, or let run() return before a chunk is done.
TEST(RtPool, AMillionSmallJobsEachCoverTheirIndicesOnce) {
  RtPool pool({.threads = 2});
  constexpr std::size_t kMax = 6;
  std::atomic<int> hits[kMax] = {};
  std::atomic<std::size_t> by_workers{0};
  const auto caller = std::this_thread::get_id();
  std::size_t total = 0, expected = 0;
  for (std::size_t job = 0; job < 1000000; ++job) {
    const std::size_t count = 1 + job % kMax;
    expected += count;
    pool.run(
        count,
        [&](std::size_t b, std::size_t e) {
          busy_for(std::chrono::nanoseconds(300));  // time for workers to take a share
          for (std::size_t i = b; i < e; ++i) hits[i].fetch_add(1, std::memory_order_relaxed);
          if (std::this_thread::get_id() != caller) by_workers.fetch_add(1);
        },
        1);
    // run() returned, so every chunk has finished and published its writes.
    for (std::size_t i = 0; i < count; ++i) {
      if (hits[i].load(std::memory_order_relaxed) != 1)
        FAIL() << "job " << job << " index " << i << " ran " << hits[i].load() << " times";
      hits[i].store(0, std::memory_order_relaxed);
      ++total;
    }
  }
  EXPECT_EQ(total, expected);
  EXPECT_GT(by_workers.load(), 0u) << "the workers never took a chunk";
  RecordProperty("chunks_run_by_workers", std::to_string(by_workers.load()));
}

// spin = 0: workers park after every job, so every job goes through the futex wake-up (and the
// race between a worker going to sleep and the next job being published).
TEST(RtPool, ParkedWorkersWakeForEveryJob) {
  RtPool pool({.threads = 3, .spin = microseconds(0)});
  std::atomic<std::size_t> by_workers{0};
  const auto caller = std::this_thread::get_id();
  for (int job = 0; job < 20000; ++job) {
    const std::size_t count = 1 + job % 4;
    std::vector<std::atomic<int>> hits(count);
    pool.run(
        count,
        [&](std::size_t b, std::size_t) {
          busy_for(microseconds(3));  // so that woken workers arrive while chunks are left
          hits[b].fetch_add(1, std::memory_order_relaxed);
          if (std::this_thread::get_id() != caller) by_workers.fetch_add(1);
        },
        1);
    for (std::size_t i = 0; i < count; ++i) ASSERT_EQ(hits[i].load(), 1) << "job " << job;
  }
  EXPECT_GT(by_workers.load(), 0u) << "no parked worker ever woke in time for a chunk";
  RecordProperty("chunks_run_by_workers", std::to_string(by_workers.load()));
}

// Two chunks that each wait for the other: only two threads running them at once can finish.
TEST(RtPool, CallerAndWorkerRunChunksConcurrently) {
  for (auto spin : {microseconds(4000), microseconds(0)}) {
    RtPool pool({.threads = 2, .spin = spin});
    std::this_thread::sleep_for(milliseconds(20));  // the worker has parked (or is spinning)
    std::atomic<int> arrived{0};
    std::atomic<bool> met{true};
    pool.run(
        2,
        [&](std::size_t, std::size_t) {
          ++arrived;
          const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
          while (arrived.load() < 2)
            if (std::chrono::steady_clock::now() > limit) {
              met = false;  // the other chunk never started: no parallelism
              return;
            }
        },
        1);
    EXPECT_TRUE(met.load()) << "spin " << spin.count() << " us";
  }
}

TEST(RtPool, RunInsideAJobIsRefused) {
  RtPool pool({.threads = 2});
  try {
    pool.run(4, [&](std::size_t, std::size_t) { pool.run(1, [](std::size_t, std::size_t) {}); });
    FAIL() << "nested run() was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("already running a job"), std::string::npos) << e.what();
  }
  expect_each_index_once(pool, 100, 0);  // still usable
}

TEST(RtPool, RunFromASecondThreadDuringAJobIsRefused) {
  RtPool pool({.threads = 2});
  bool refused = false;
  pool.run(1, [&](std::size_t, std::size_t) {
    std::thread other([&] {
      try {
        pool.run(1, [](std::size_t, std::size_t) {});
      } catch (const Error&) {
        refused = true;
      }
    });
    other.join();
  });
  EXPECT_TRUE(refused);
}

TEST(RtPool, RethrowsTheFirstExceptionAfterEveryChunkRan) {
  RtPool pool({.threads = 3});
  std::atomic<int> ran{0};
  try {
    pool.run(
        100,
        [&](std::size_t b, std::size_t e) {
          ran += static_cast<int>(e - b);
          if (b == 10 || b == 20) throw std::runtime_error("chunk " + std::to_string(b));
        },
        1);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_TRUE(what == "chunk 10" || what == "chunk 20") << what;
  }
  EXPECT_EQ(ran.load(), 100);
  expect_each_index_once(pool, 1000, 0);  // no stale error, still usable
}

TEST(RtPool, ExceptionWithoutWorkers) {
  RtPool pool({.threads = 1});
  EXPECT_THROW(pool.run(3, [](std::size_t, std::size_t) { throw std::logic_error("x"); }),
               std::logic_error);
  expect_each_index_once(pool, 10, 0);
}

TEST(RtPool, DestroysWhileStartingSpinningOrParked) {
  for (int i = 0; i < 20; ++i) RtPool pool({.threads = 4});  // workers may not have started
  {
    RtPool pool({.threads = 4});
    expect_each_index_once(pool, 100, 1);
  }  // workers spinning
  const auto start = std::chrono::steady_clock::now();
  {
    RtPool pool({.threads = 4, .spin = microseconds(1000)});
    expect_each_index_once(pool, 100, 1);
    std::this_thread::sleep_for(milliseconds(50));  // workers parked
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(RtPool, ReportsPinningAndRealtimeOrWhyNot) {
  // A short spin: SCHED_FIFO workers that spin would starve the test's thread on their CPU.
  RtPool pool({.threads = 3, .spin = microseconds(100), .pin = true, .fifo_priority = 10});
  const RtPoolSetup& s = pool.setup();
  EXPECT_EQ(s.workers, 2u);
  EXPECT_LE(s.pinned, 2u);
  EXPECT_LE(s.fifo, 2u);
  if (s.pinned < 2 || s.fifo < 2) {
    EXPECT_FALSE(s.note.empty());
  }
  expect_each_index_once(pool, 1000, 0);  // works either way

  RtPool plain({.threads = 3});
  EXPECT_EQ(plain.setup().pinned, 0u);
  EXPECT_EQ(plain.setup().fifo, 0u);
  EXPECT_TRUE(plain.setup().note.empty());
}

TEST(RtPool, RefusesBadOptions) {
  EXPECT_THROW(RtPool({.fifo_priority = 100}), Error);
  EXPECT_THROW(RtPool({.fifo_priority = -1}), Error);
  EXPECT_THROW(RtPool({.spin = microseconds(-1)}), Error);
}

}  // namespace
}  // namespace sigpu
