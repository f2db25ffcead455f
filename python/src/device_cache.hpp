// Device memory for the extension's GPU arrays, kept per device for reuse instead of freed.
//
// cudaFree waits for the whole device, so a loader whose decoding threads free batches holds each
// thread's GPU work behind the others'. Memory the last owner lets go goes back to a cache (by
// device and size class) with a CUDA event recorded on every stream noted as using it; the next
// owner's writer makes its own stream wait for those events before its first write. Nothing waits
// on the host or for the device, except a block freed for the budget, or one whose users cannot
// be named (then freed with cudaFree, as before).
//
// Not CUDA's stream-ordered allocator (cudaMallocAsync): its allocation is ordered on one stream
// of the allocator's choosing, while the batch is written on the FLAC engine's stream inside the
// library, so an event would have to be handed over all the same; and its frees go in order on
// one stream, so a block whose consumer is slow would hold back the reuse of every block freed
// after it. Here each block carries exactly its own users' events.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

namespace sigpu::python {

/// A block of device memory from the cache, given back to it when this object is destroyed.
/// Thread-safe: any thread may note users, and the last owner may let go on any thread.
class DeviceMemory {
 public:
  DeviceMemory(void* data, std::size_t bytes, int device, std::vector<void*> after);
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  void* data() const { return data_; }
  int device() const { return device_; }

  /// The CUDA events (cudaEvent_t) of the previous owner's users: the first write must be
  /// queued after them. For a writer that queues its own waits (flac::decode_clips); once it has
  /// finished, call waited().
  std::span<void* const> after() const { return after_; }
  void waited();
  /// Makes `stream` (a cudaStream_t of this device) wait for after() and notes it as a user.
  void wait_on(void* stream);
  /// Notes a stream (cudaStream_t; cudaStreamLegacy for the legacy default stream) whose work
  /// reads or writes this memory: letting go records an event on it, after that work. Null for
  /// users that cannot be named then (another thread's per-thread default stream, a consumer
  /// that took synchronisation upon itself): the memory is then freed, not cached.
  void used_on(void* stream);

 private:
  void* data_;
  std::size_t bytes_;
  int device_;
  std::vector<void*> after_;
  std::mutex mutex_;  ///< guards users_ and unknown_user_
  std::vector<void*> users_;
  bool unknown_user_ = false;
};

/// Device memory of at least `bytes` on `device`: a cached block of its size class when one is
/// idle (its after() then names its previous users' work), else cudaMalloc'd (a failure frees
/// the cache and tries once more). Throws sigpu::Error in builds without CUDA.
std::shared_ptr<DeviceMemory> device_alloc(std::size_t bytes, int device);

struct DeviceCacheInfo {
  std::uint64_t bytes = 0;      ///< held idle on the device
  std::uint64_t blocks = 0;     ///< idle blocks
  std::uint64_t budget = 0;     ///< the most it holds idle
  std::uint64_t reused = 0;     ///< allocations served from the cache
  std::uint64_t allocated = 0;  ///< allocations that called cudaMalloc
};
DeviceCacheInfo device_cache_info(int device);
/// The bytes the cache may hold idle per device (default: an eighth of the device's memory);
/// blocks over it are freed, oldest first. 0 caches nothing.
void set_device_cache_budget(std::uint64_t bytes);
/// Frees every idle block (cudaFree).
void release_device_cache();

}  // namespace sigpu::python
