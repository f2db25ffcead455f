// make_realtime(): SCHED_FIFO for the calling thread and the process's memory locked, as far as
// the OS allows, with one line saying what was refused and how to allow it.
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#ifdef __linux__
#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#endif

#include <sigpu/audio.hpp>

#include "audio/realtime.hpp"

namespace sigpu::audio {
namespace {

#ifdef __linux__
/// CAP_IPC_LOCK (bit 14) in the effective set: mlockall ignores RLIMIT_MEMLOCK then.
bool can_lock_any_amount() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("CapEff:", 0) == 0) {
      return (std::stoull(line.substr(7), nullptr, 16) >> 14) & 1;
    }
  }
  return false;
}

/// Touches `bytes` of the calling thread's stack so that later calls do not page-fault on it.
[[gnu::noinline]] void prefault_stack(std::size_t bytes) {
  volatile char* block = static_cast<volatile char*>(__builtin_alloca(bytes));
  for (std::size_t i = 0; i < bytes; i += 4096) block[i] = 0;
}
#endif

}  // namespace

RealtimeStatus make_realtime(int priority) {
  RealtimeStatus s;
  if (priority < 1 || priority > 99) {
    throw Error("real-time priority " + std::to_string(priority) + " is not in [1, 99]");
  }
#ifdef __linux__
  std::string refused;
  sched_param param{};
  param.sched_priority = priority;
  if (const int rc = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param); rc == 0) {
    s.fifo = true;
  } else {
    rlimit rt{};
    getrlimit(RLIMIT_RTPRIO, &rt);
    refused = "SCHED_FIFO " + std::to_string(priority) + " refused (" + std::strerror(rc) +
              "; RLIMIT_RTPRIO " + std::to_string(rt.rlim_cur) +
              "): give the user an rtprio limit (limits.conf: @audio - rtprio 95) or the process "
              "CAP_SYS_NICE";
  }
  // With MCL_FUTURE every later mapping counts against RLIMIT_MEMLOCK: under a finite limit
  // allocations past it would fail, so lock only where the amount is not limited.
  rlimit mem{};
  getrlimit(RLIMIT_MEMLOCK, &mem);
  if (mem.rlim_cur != RLIM_INFINITY && !can_lock_any_amount()) {
    refused += std::string(refused.empty() ? "" : "; ") + "memory not locked (RLIMIT_MEMLOCK " +
               std::to_string(mem.rlim_cur / 1024) +
               " KiB): give the user an unlimited memlock (limits.conf: @audio - memlock "
               "unlimited) or the process CAP_IPC_LOCK";
  } else if (mlockall(MCL_CURRENT | MCL_FUTURE) == 0) {
    s.locked = true;
  } else {
    refused += std::string(refused.empty() ? "" : "; ") +
               "memory not locked: mlockall: " + std::strerror(errno);
  }
  prefault_stack(256 * 1024);
  if (!refused.empty()) s.note = "real-time: " + refused;
#else
  s.note = "real-time: SCHED_FIFO and memory locking are implemented for Linux only";
#endif
  return s;
}

void enter_realtime(int priority, const std::string& pool_note) {
  if (priority == 0) return;
  const RealtimeStatus s = make_realtime(priority);
  std::string note = s.note;
  if (!pool_note.empty())
    note += (note.empty() ? "real-time: pool workers: " : "; pool workers: ") + pool_note;
  static std::atomic<bool> told{false};
  if (!note.empty() && !told.exchange(true)) std::fprintf(stderr, "sigpu: %s\n", note.c_str());
}

}  // namespace sigpu::audio
