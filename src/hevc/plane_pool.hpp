// Sample storage for pictures, recycled from one picture to the next. A fresh picture's worth
// of memory costs a page fault per 4 KiB on first touch, and the faults of many picture workers
// contend in the kernel; with the GPU filter the storage is also pinned, so that its copies run
// as DMA at full speed instead of through the driver's pageable staging, and pinning is far too
// slow to do per picture. Pictures reconstructed on the GPU keep a second store in device memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

namespace sigpu::hevc {

/// Page-locked host memory for the GPU's copies, or null when none can be had (no CUDA in this
/// build, no device, or the allocation failed): callers then use ordinary memory.
void* allocate_pinned(std::size_t bytes);
void release_pinned(void* p);
/// Device memory on the current device; throws Error when it cannot be had.
void* allocate_device(std::size_t bytes);
void release_device(void* p);

/// Where a PlaneStore's samples live.
enum class Memory {
  pageable,
  pinned,  ///< page-locked when possible, else pageable (PlaneStore::memory() says which)
  device,
};

/// One picture's samples, all planes in one allocation.
class PlaneStore {
 public:
  PlaneStore(std::size_t samples, Memory want);
  ~PlaneStore();
  PlaneStore(const PlaneStore&) = delete;
  PlaneStore& operator=(const PlaneStore&) = delete;

  std::uint16_t* data() const { return data_; }
  std::size_t size() const { return size_; }
  Memory memory() const { return memory_; }

 private:
  std::uint16_t* data_ = nullptr;
  std::size_t size_ = 0;
  Memory memory_ = Memory::pageable;
};

/// Stores handed back after their picture was output, for the next pictures. Thread-safe.
class PlanePool {
 public:
  /// A store of exactly `samples` samples (contents undefined) in `memory` (pinned when asked
  /// and possible).
  std::unique_ptr<PlaneStore> take(std::size_t samples, Memory memory);
  void give(std::unique_ptr<PlaneStore> store);

 private:
  std::mutex mutex_;
  std::vector<std::unique_ptr<PlaneStore>> free_;
  bool no_pinned_ = false;  ///< a pinned allocation failed: stop asking
};

}  // namespace sigpu::hevc
