#include "audio/memory.hpp"

#include <atomic>
#include <cstdlib>

#include <sigpu/audio.hpp>

namespace sigpu::audio {
namespace {

std::atomic<std::int64_t> g_host_bytes{0}, g_host_blocks{0}, g_device_bytes{0}, g_device_blocks{0};

}  // namespace

void count_host(std::int64_t bytes, std::int64_t blocks) noexcept {
  g_host_bytes += bytes;
  g_host_blocks += blocks;
}

void count_device(std::int64_t bytes, std::int64_t blocks) noexcept {
  g_device_bytes += bytes;
  g_device_blocks += blocks;
}

void* host_allocate(std::size_t bytes) {
  void* p = std::malloc(bytes ? bytes : 1);
  if (!p) throw std::bad_alloc();
  count_host(static_cast<std::int64_t>(bytes), 1);
  return p;
}

void host_release(void* p, std::size_t bytes) noexcept {
  if (!p) return;
  std::free(p);
  count_host(-static_cast<std::int64_t>(bytes), -1);
}

MemoryStats memory_stats() {
  return {g_host_bytes.load(), g_host_blocks.load(), g_device_bytes.load(), g_device_blocks.load()};
}

}  // namespace sigpu::audio
