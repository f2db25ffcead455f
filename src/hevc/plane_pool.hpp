// Sample storage for pictures, recycled from one picture to the next. A fresh picture's worth
// of memory costs a page fault per 4 KiB on first touch, and the faults of many picture workers
// contend in the kernel; with the GPU filter the storage is also pinned, so that its copies run
// as DMA at full speed instead of through the driver's pageable staging, and pinning is far too
// slow to do per picture. Pictures reconstructed on the GPU keep a second store in device memory.
// A store goes back to its pool whenever its owner drops it (the last reference to a picture
// may be a later picture's reference list): freeing pinned or device memory holds the CUDA
// driver's lock for milliseconds, and every thread that queues GPU work waits for it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace sigpu::hevc {

/// Page-locked host memory for the GPU's copies, or null when none can be had (no CUDA in this
/// build, no device, or the allocation failed): callers then use ordinary memory.
void* allocate_pinned(std::size_t bytes);
void release_pinned(void* p);
/// Device memory on the current device; throws Error when it cannot be had.
void* allocate_device(std::size_t bytes);
void release_device(void* p);
/// Copies `rows` rows of `width` samples from device memory (rows `src_pitch` samples apart)
/// to the host (rows `width` apart); throws Error when it fails.
void copy_to_host(std::uint16_t* dst, const std::uint16_t* src, std::size_t src_pitch,
                  std::size_t width, std::size_t rows);

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

/// A PooledStore's deleter: gives the store back to the pool it came from while that pool
/// exists, else frees it.
class PlaneRecycler {
 public:
  struct Shelf;               ///< a pool's free stores
  PlaneRecycler() = default;  ///< frees: a store of no pool
  explicit PlaneRecycler(std::weak_ptr<Shelf> shelf) : shelf_(std::move(shelf)) {}
  void operator()(PlaneStore* store) const;

 private:
  std::weak_ptr<Shelf> shelf_;
};

using PooledStore = std::unique_ptr<PlaneStore, PlaneRecycler>;

/// Stores dropped by their pictures, for the next pictures. Thread-safe; its stores may outlive
/// it.
class PlanePool {
 public:
  PlanePool();
  /// A store of exactly `samples` samples (contents undefined) in `memory` (pinned when asked
  /// and possible), back in this pool when dropped.
  PooledStore take(std::size_t samples, Memory memory);

 private:
  std::shared_ptr<PlaneRecycler::Shelf> shelf_;
};

}  // namespace sigpu::hevc
