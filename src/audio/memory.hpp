// The audio module's allocator hooks: every host and device array an Engine owns is counted
// here, so a test can prove that teardown() returns all of it (memory_stats()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

namespace sigpu::audio {

void* host_allocate(std::size_t bytes);
void host_release(void* p, std::size_t bytes) noexcept;
/// For the CUDA backend: counts device (or pinned host) memory it allocated / freed.
void count_device(std::int64_t bytes, std::int64_t blocks) noexcept;
void count_host(std::int64_t bytes, std::int64_t blocks) noexcept;

template <typename T>
struct CountingAllocator {
  using value_type = T;
  CountingAllocator() = default;
  template <typename U>
  CountingAllocator(const CountingAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(host_allocate(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { host_release(p, n * sizeof(T)); }
  template <typename U>
  bool operator==(const CountingAllocator<U>&) const noexcept {
    return true;
  }
};

/// Host arrays of an Engine (plan, state, parameters, buffers).
template <typename T>
using HostVector = std::vector<T, CountingAllocator<T>>;

}  // namespace sigpu::audio
