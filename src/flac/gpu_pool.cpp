#include "flac/gpu_pool.hpp"

#include <atomic>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

namespace sigpu::flac {
namespace {

struct Pool {
  std::mutex mutex;
  std::map<int, std::vector<std::unique_ptr<GpuEngine>>> idle;
  std::optional<std::uint64_t> budget;  ///< per device; unset: a quarter of its memory
};

/// Never destroyed: freeing device memory after the CUDA runtime has shut down at exit fails,
/// and the driver reclaims everything with the process anyway.
Pool& pool() {
  static Pool* p = new Pool;
  return *p;
}

std::uint64_t budget_of(int device) {
  if (pool().budget) return *pool().budget;
  static const std::vector<DeviceInfo> devices = cuda_devices();
  for (const DeviceInfo& d : devices)
    if (d.index == device) return d.memory_bytes / 4;
  return 0;
}

}  // namespace

EngineLease::EngineLease(int device) : device_(device), exceptions_(std::uncaught_exceptions()) {
  {
    std::lock_guard lock(pool().mutex);
    auto& list = pool().idle[device];
    if (!list.empty()) {
      engine_ = std::move(list.back());
      list.pop_back();
      return;
    }
  }
  engine_ = GpuEngine::create(device);
}

EngineLease::~EngineLease() {
  if (!engine_ || std::uncaught_exceptions() > exceptions_) return;
  const std::uint64_t mine = engine_->device_bytes();
  std::unique_ptr<GpuEngine> dropped;  // freed outside the lock
  std::lock_guard lock(pool().mutex);
  auto& list = pool().idle[device_];
  std::uint64_t held = mine;
  for (const auto& e : list) held += e->device_bytes();
  if (held <= budget_of(device_))
    list.push_back(std::move(engine_));
  else
    dropped = std::move(engine_);
}

void set_gpu_pool_budget(std::uint64_t bytes_per_device) {
  std::lock_guard lock(pool().mutex);
  pool().budget = bytes_per_device;
}

void release_gpu_memory() {
  std::map<int, std::vector<std::unique_ptr<GpuEngine>>> drop;
  {
    std::lock_guard lock(pool().mutex);
    drop.swap(pool().idle);
  }
}

}  // namespace sigpu::flac
