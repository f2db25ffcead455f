// The real-time contract of Engine::process(): in steady state a period allocates nothing, takes
// no lock and makes no system call. The C library's allocator, lock and wait entry points are
// wrapped here (this binary's definitions take precedence over libc's for every caller) and
// count while a window is open: allocations and locks on any thread (the caller and the engine's
// pool workers, the only threads running then), system calls and blocking on the thread that
// calls process(). Parameter updates are queued between periods, outside the window, so that
// their application at the period boundary is inside it.
#include <dlfcn.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include <sigpu/audio.hpp>
#include <sigpu/audio_bench.hpp>

#include "core/rt_pool.hpp"

namespace {

std::atomic<bool> g_window{false};      // counting allocations and locks, on every thread
thread_local bool t_real_time = false;  // counting system calls: the thread calling process()
std::atomic<long> g_allocations{0}, g_locks{0}, g_syscalls{0};

void count_allocation() {
  if (g_window.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
}
void count_lock() {
  if (g_window.load(std::memory_order_relaxed)) g_locks.fetch_add(1);
}
void count_syscall() {
  if (t_real_time) g_syscalls.fetch_add(1);
}

/// libc's own definition of `name` (the next one after this binary's).
template <class F>
F next(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);
int __sched_yield();

void* malloc(std::size_t n) {
  count_allocation();
  return __libc_malloc(n);
}
void* calloc(std::size_t n, std::size_t size) {
  count_allocation();
  return __libc_calloc(n, size);
}
void* realloc(void* p, std::size_t n) {
  count_allocation();
  return __libc_realloc(p, n);
}
void* aligned_alloc(std::size_t alignment, std::size_t n) {
  count_allocation();
  return __libc_memalign(alignment, n);
}
void* memalign(std::size_t alignment, std::size_t n) {
  count_allocation();
  return __libc_memalign(alignment, n);
}
int posix_memalign(void** p, std::size_t alignment, std::size_t n) {
  count_allocation();
  if (alignment % sizeof(void*) || (alignment & (alignment - 1))) return EINVAL;
  *p = __libc_memalign(alignment, n);
  return *p || n == 0 ? 0 : ENOMEM;
}
void free(void* p) {
  count_allocation();
  __libc_free(p);
}

int pthread_mutex_lock(pthread_mutex_t* m) {
  count_lock();
  static const auto f = next<int (*)(pthread_mutex_t*)>("pthread_mutex_lock");
  return f(m);
}
int pthread_mutex_trylock(pthread_mutex_t* m) {
  count_lock();
  static const auto f = next<int (*)(pthread_mutex_t*)>("pthread_mutex_trylock");
  return f(m);
}
int pthread_rwlock_rdlock(pthread_rwlock_t* l) {
  count_lock();
  static const auto f = next<int (*)(pthread_rwlock_t*)>("pthread_rwlock_rdlock");
  return f(l);
}
int pthread_rwlock_wrlock(pthread_rwlock_t* l) {
  count_lock();
  static const auto f = next<int (*)(pthread_rwlock_t*)>("pthread_rwlock_wrlock");
  return f(l);
}
int sem_wait(sem_t* s) {
  count_lock();
  static const auto f = next<int (*)(sem_t*)>("sem_wait");
  return f(s);
}
int sem_timedwait(sem_t* s, const timespec* t) {
  count_lock();
  static const auto f = next<int (*)(sem_t*, const timespec*)>("sem_timedwait");
  return f(s, t);
}

int sched_yield() {
  count_syscall();
  return __sched_yield();
}
// std::atomic::wait/notify (futex) go through syscall(). A futex wake is the one call the
// real-time thread may make: it never blocks, and process() makes it only to wake pool workers
// that parked (more than 4 ms without a period: a loaded machine, or periods that long); waits and
// every other call count.
long syscall(long number, ...) {
  va_list args;
  va_start(args, number);
  long a[6];
  for (long& x : a) x = va_arg(args, long);
  va_end(args);
  if (number != SYS_futex || (a[1] & FUTEX_CMD_MASK) != FUTEX_WAKE) count_syscall();
  static const auto f = next<long (*)(long, ...)>("syscall");
  return f(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
int nanosleep(const timespec* t, timespec* left) {
  count_syscall();
  static const auto f = next<int (*)(const timespec*, timespec*)>("nanosleep");
  return f(t, left);
}
int clock_nanosleep(clockid_t c, int flags, const timespec* t, timespec* left) {
  count_syscall();
  static const auto f =
      next<int (*)(clockid_t, int, const timespec*, timespec*)>("clock_nanosleep");
  return f(c, flags, t, left);
}
}  // extern "C"

// operator new and delete (test_engine.cpp replaces them, the C++ library's aligned ones) end
// in the functions above.

namespace sigpu::audio {
namespace {

struct Counts {
  long allocations = 0, locks = 0, syscalls = 0, blocked = 0;
};

long voluntary_switches() {
  rusage u{};
  getrusage(RUSAGE_THREAD, &u);
  return u.ru_nvcsw;
}

/// Runs `body` with the counters on, as the real-time thread.
Counts watch(const std::function<void()>& body) {
  g_allocations = g_locks = g_syscalls = 0;
  const long switches = voluntary_switches();
  t_real_time = true;
  g_window.store(true);
  body();
  g_window.store(false);
  t_real_time = false;
  return {g_allocations.load(), g_locks.load(), g_syscalls.load(), voluntary_switches() - switches};
}

/// `periods` periods after a warm-up, with `update` (may be empty) called between periods,
/// outside the window, so its queued change is applied inside it.
Counts steady_state(Engine& e, int periods, const std::function<void(int)>& update) {
  const int n = e.period();
  std::vector<std::vector<float>> in(e.inputs(), std::vector<float>(n)),
      out(e.outputs(), std::vector<float>(n));
  std::vector<const float*> ip;
  std::vector<float*> op;
  for (auto& c : in) ip.push_back(c.data());
  for (auto& c : out) op.push_back(c.data());
  std::uint32_t noise = 1;
  const auto fill = [&] {
    for (auto& c : in) {
      for (float& x : c) x = float(int32_t(noise = noise * 1664525u + 1013904223u)) * 2e-10f;
    }
  };
  for (int p = 0; p < 200; ++p) {  // warm-up: first touches, ramps, the pool's threads
    fill();
    e.process(ip.data(), op.data());
  }
  Counts total;
  for (int p = 0; p < periods; ++p) {
    fill();
    if (update) update(p);
    const Counts c = watch([&] { e.process(ip.data(), op.data()); });
    total.allocations += c.allocations;
    total.locks += c.locks;
    total.syscalls += c.syscalls;
    total.blocked += c.blocked;
  }
  return total;
}

void expect_clean(const Counts& c, const std::string& what) {
  EXPECT_EQ(c.allocations, 0) << what << ": allocations or frees";
  EXPECT_EQ(c.locks, 0) << what << ": locks or semaphore waits";
  EXPECT_EQ(c.syscalls, 0) << what << ": system calls on the real-time thread";
  EXPECT_EQ(c.blocked, 0) << what << ": voluntary context switches (blocking)";
}

std::string source(const char* path) {
  return std::string(SIGPU_SOURCE_DIR) + "/" + path;
}

// The instrument itself: what it must catch, it catches.
TEST(AudioRealtime, CountersSeeAllocationsLocksAndSystemCalls) {
  std::mutex m;
  const Counts c = watch([&] {
    auto* p = new std::vector<int>(3);
    delete p;
    { const std::lock_guard lock(m); }
    sched_yield();
  });
  EXPECT_GE(c.allocations, 2);
  EXPECT_EQ(c.locks, 1);
  EXPECT_GE(c.syscalls, 1);
  const Counts quiet = watch([] {});
  EXPECT_EQ(quiet.allocations + quiet.locks + quiet.syscalls, 0);
}

// The thread that calls RtPool::run() waits for a slow worker's chunk without a system call
// (no yield, no park), however long the wait.
TEST(AudioRealtime, PoolCallerWaitsWithoutSystemCalls) {
  RtPool pool({.threads = 2});
  const auto caller = std::this_thread::get_id();
  std::atomic<bool> started{false};
  // Two chunks: the caller's waits until the worker has taken the other, which takes 2 ms.
  const auto job = [&](std::size_t, std::size_t) {
    if (std::this_thread::get_id() == caller) {
      while (!started.load()) {
      }
      return;
    }
    started.store(true);
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
    while (std::chrono::steady_clock::now() < end) {
    }
  };
  const auto run = [&] {
    started.store(false);
    pool.run(2, job, 1);
  };
  for (int i = 0; i < 5; ++i) run();
  const auto start = std::chrono::steady_clock::now();
  const Counts c = watch([&] {
    for (int i = 0; i < 5; ++i) run();
  });
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(10));
  EXPECT_EQ(c.syscalls, 0);
  EXPECT_EQ(c.allocations + c.locks, 0);
}

class RealtimePath : public ::testing::TestWithParam<Backend> {
 protected:
  EngineOptions options(int period) const {
    return {.backend = GetParam(), .period = period, .threads = 2};
  }
};

TEST_P(RealtimePath, ConsoleWithUpdates) {
  Engine e(console_graph(8), options(64));
  e.setup();
  expect_clean(steady_state(e, 300,
                            [&](int p) {
                              e.update("input_eq", "band.1.gain_db", (p % 24) - 12);
                              e.update("bus_mix", "gain_db", -(p % 10));
                              e.update("input_gate", "threshold_db", -60 + (p % 20));
                            }),
               "console");
}

// Bus meters on: the period also measures every node's output; a control thread's reads (here
// between periods, outside the window) allocate, the periods do not.
TEST_P(RealtimePath, ConsoleWithBusMeters) {
  EngineOptions o = options(64);
  o.meters = true;
  Engine e(console_graph(8), o);
  e.setup();
  std::vector<BusMeter> read;
  expect_clean(steady_state(e, 300,
                            [&](int p) {
                              if (p % 10 == 0) read = e.meters();
                            }),
               "console with bus meters");
  float loudest = 0;
  for (const BusMeter& m : e.meters()) {
    for (float r : m.rms) loudest = std::max(loudest, r);
  }
  EXPECT_GT(loudest, 0);
}

TEST_P(RealtimePath, Convolution) {
  const auto& s = scenario("conv4096");
  if (!unavailable(s).empty()) GTEST_SKIP() << unavailable(s);
  Engine e(scenario_graph(s, 8, 48000, 2), options(64));
  e.setup();
  expect_clean(steady_state(e, 300, {}), "conv4096");
}

TEST_P(RealtimePath, NamAndConvolutionChainWithUpdates) {
  const auto& s = scenario("nam");
  if (!unavailable(s).empty()) GTEST_SKIP() << unavailable(s);
  Engine nam(scenario_graph(s, 2, 48000, 0, source("examples/audio/models/tiny-wavenet.nam")),
             options(64));
  nam.setup();
  expect_clean(steady_state(nam, 300, {}), "nam");
  if (!unavailable(scenario("conv4096")).empty()) return;
  Engine chain(Graph::load(source("examples/audio/guitar-nam.json")), options(128));
  chain.setup();
  expect_clean(steady_state(chain, 200,
                            [&](int p) {
                              chain.update("eq", "band.1.gain_db", (p % 12) - 6);
                              chain.update("gate", "threshold_db", -70 + (p % 20));
                            }),
               "gate, nam, convolution, eq");
}

INSTANTIATE_TEST_SUITE_P(Cpu, RealtimePath, ::testing::Values(Backend::cpu, Backend::cpu_parallel),
                         [](const auto& info) {
                           return info.param == Backend::cpu ? std::string("Serial")
                                                             : std::string("Parallel");
                         });

TEST(AudioRealtime, MakeRealtimeGrantsOrSaysWhy) {
  EXPECT_THROW(make_realtime(0), Error);
  EXPECT_THROW(make_realtime(100), Error);
  // On a thread of its own: SCHED_FIFO is per thread, and the note must name what was refused.
  RealtimeStatus s;
  std::thread t([&] { s = make_realtime(10); });
  t.join();
  if (!s.fifo) {
    EXPECT_NE(s.note.find("SCHED_FIFO"), std::string::npos) << s.note;
  }
  if (!s.locked) {
    EXPECT_NE(s.note.find("memory"), std::string::npos) << s.note;
  }
  if (s.fifo && s.locked) {
    EXPECT_TRUE(s.note.empty()) << s.note;
  }
}

}  // namespace
}  // namespace sigpu::audio
