#include "device_cache.hpp"

#include <sigpu/core.hpp>

#include <algorithm>
#include <bit>
#include <list>
#include <map>
#include <optional>

#include "cuda_check.hpp"

namespace sigpu::python {

#if SIGPU_HAVE_CUDA
namespace {

/// The size a request is rounded up to: four classes per power of two, so that a block is
/// reused for requests of nearby sizes (a sweep's shorter last batch) and wastes under a quarter.
std::size_t size_class(std::size_t bytes) {
  constexpr std::size_t kMin = 512;
  if (bytes <= kMin) return kMin;
  const std::size_t step = std::bit_floor(bytes) / 4;
  return (bytes + step - 1) / step * step;
}

/// Makes `device` current and gives the calling thread its own back: memory may be let go on a
/// consumer's thread, whose current device is its own business.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) previous_ = -1;
    cudaSetDevice(device);
  }
  ~DeviceScope() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }

 private:
  int previous_ = -1;
};

void destroy_events(const std::vector<void*>& events) {
  for (void* e : events) cudaEventDestroy(static_cast<cudaEvent_t>(e));
}

struct Idle {
  void* data = nullptr;
  std::size_t bytes = 0;
  int device = 0;
  std::vector<void*> events;  ///< recorded after its last users' work
};

/// cudaFree waits for the device, so whatever still used the block has finished. Errors are
/// dropped (at exit the runtime may be going), and cleared so that no later check sees them.
void free_block(const Idle& b) noexcept {
  DeviceScope on(b.device);
  cudaFree(b.data);
  destroy_events(b.events);
  cudaGetLastError();
}

class Cache {
 public:
  std::optional<Idle> take(int device, std::size_t bytes) {
    std::lock_guard lock(mutex_);
    DeviceCacheInfo& s = stats_[device];
    // The oldest first: its users' work is the likeliest to be done, so the wait costs nothing.
    for (auto it = idle_.begin(); it != idle_.end(); ++it) {
      if (it->device != device || it->bytes != bytes) continue;
      Idle b = std::move(*it);
      idle_.erase(it);
      s.bytes -= b.bytes;
      --s.blocks;
      ++s.reused;
      return b;
    }
    ++s.allocated;
    return std::nullopt;
  }

  void put(Idle b) {
    std::vector<Idle> drop;
    {
      std::lock_guard lock(mutex_);
      DeviceCacheInfo& s = stats_[b.device];
      if (b.bytes > budget(b.device)) {
        drop.push_back(std::move(b));
      } else {
        s.bytes += b.bytes;
        ++s.blocks;
        idle_.push_back(std::move(b));
        trim(drop);
      }
    }
    for (const Idle& d : drop) free_block(d);
  }

  void set_budget(std::uint64_t bytes) {
    std::vector<Idle> drop;
    {
      std::lock_guard lock(mutex_);
      budget_ = bytes;
      trim(drop);
    }
    for (const Idle& d : drop) free_block(d);
  }

  void release() {
    std::list<Idle> drop;
    {
      std::lock_guard lock(mutex_);
      drop.swap(idle_);
      for (auto& [device, s] : stats_) s.bytes = s.blocks = 0;
    }
    for (const Idle& d : drop) free_block(d);
  }

  DeviceCacheInfo info(int device) {
    std::lock_guard lock(mutex_);
    DeviceCacheInfo i = stats_[device];
    i.budget = budget(device);
    return i;
  }

 private:
  /// The budget of `device` (mutex_ held).
  std::uint64_t budget(int device) {
    if (budget_) return *budget_;
    auto [it, added] = device_default_.try_emplace(device, 0);
    if (added) {
      cudaDeviceProp p{};
      if (cudaGetDeviceProperties(&p, device) == cudaSuccess) it->second = p.totalGlobalMem / 8;
      cudaGetLastError();
    }
    return it->second;
  }

  /// Moves the oldest blocks of every device over its budget into `drop` (mutex_ held).
  void trim(std::vector<Idle>& drop) {
    for (auto it = idle_.begin(); it != idle_.end();) {
      DeviceCacheInfo& s = stats_[it->device];
      if (s.bytes <= budget(it->device)) {
        ++it;
        continue;
      }
      s.bytes -= it->bytes;
      --s.blocks;
      drop.push_back(std::move(*it));
      it = idle_.erase(it);
    }
  }

  std::mutex mutex_;
  std::list<Idle> idle_;  ///< in the order they were let go
  std::map<int, DeviceCacheInfo> stats_;
  std::optional<std::uint64_t> budget_;
  std::map<int, std::uint64_t> device_default_;
};

Cache& cache() {
  // Never destroyed: memory let go while the process exits must not meet a destroyed cache.
  static auto* c = new Cache;
  return *c;
}

}  // namespace

DeviceMemory::DeviceMemory(void* data, std::size_t bytes, int device, std::vector<void*> after)
    : data_(data), bytes_(bytes), device_(device), after_(std::move(after)) {}

DeviceMemory::~DeviceMemory() {
  Idle b{data_, bytes_, device_, std::move(after_)};
  bool cacheable = !unknown_user_;
  if (cacheable && !users_.empty()) {
    DeviceScope on(device_);
    for (void* stream : users_) {
      cudaEvent_t e = nullptr;
      cacheable = cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess;
      if (!cacheable) break;
      b.events.push_back(e);
      // Fails on a stream destroyed meanwhile: cudaFree then waits for what it had queued.
      cacheable = cudaEventRecord(e, static_cast<cudaStream_t>(stream)) == cudaSuccess;
      if (!cacheable) break;
    }
  }
  if (cacheable)
    cache().put(std::move(b));
  else
    free_block(b);
}

void DeviceMemory::waited() {
  destroy_events(after_);
  after_.clear();
}

void DeviceMemory::wait_on(void* stream) {
  for (void* e : after_)
    PY_CUDA_CHECK(
        cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(e), 0));
  // The event its release records on `stream` follows these waits: they are no longer needed.
  used_on(stream);
  waited();
}

void DeviceMemory::used_on(void* stream) {
  std::lock_guard lock(mutex_);
  if (!stream)
    unknown_user_ = true;
  else if (std::find(users_.begin(), users_.end(), stream) == users_.end())
    users_.push_back(stream);
}

std::shared_ptr<DeviceMemory> device_alloc(std::size_t bytes, int device) {
  PY_CUDA_CHECK(cudaSetDevice(device));
  const std::size_t size = size_class(bytes);
  if (std::optional<Idle> b = cache().take(device, size))
    return std::make_shared<DeviceMemory>(b->data, size, device, std::move(b->events));
  void* p = nullptr;
  cudaError_t e = cudaMalloc(&p, size);
  if (e == cudaErrorMemoryAllocation) {  // idle blocks of other sizes may be what is missing
    cudaGetLastError();
    release_device_cache();
    e = cudaMalloc(&p, size);
  }
  cuda_check(e, "cudaMalloc");
  return std::make_shared<DeviceMemory>(p, size, device, std::vector<void*>{});
}

DeviceCacheInfo device_cache_info(int device) {
  return cache().info(device);
}

void set_device_cache_budget(std::uint64_t bytes) {
  cache().set_budget(bytes);
}

void release_device_cache() {
  cache().release();
}

#else

DeviceMemory::DeviceMemory(void* data, std::size_t bytes, int device, std::vector<void*> after)
    : data_(data), bytes_(bytes), device_(device), after_(std::move(after)) {}
DeviceMemory::~DeviceMemory() = default;
void DeviceMemory::waited() {}
void DeviceMemory::wait_on(void*) {}
void DeviceMemory::used_on(void*) {}

std::shared_ptr<DeviceMemory> device_alloc(std::size_t, int) {
  throw Error("the cuda backend is not available: sigpu was built without CUDA");
}

namespace {
std::uint64_t budget_without_cuda = 0;
}

DeviceCacheInfo device_cache_info(int) {
  return {.budget = budget_without_cuda};
}

void set_device_cache_budget(std::uint64_t bytes) {
  budget_without_cuda = bytes;
}

void release_device_cache() {}

#endif

}  // namespace sigpu::python
