#include "flac/decoder_pool.hpp"

#include <exception>
#include <map>
#include <mutex>
#include <vector>

namespace sigpu::flac {
namespace {

/// Idle decoders kept per device: enough for the parts of a multi-device decode that share a
/// GPU, few enough that a burst of concurrent callers does not pin memory for good.
constexpr std::size_t kIdlePerDevice = 4;

struct Pool {
  std::mutex mutex;
  std::map<int, std::vector<std::unique_ptr<CudaDecoder>>> idle;
};

/// Never destroyed: freeing device memory after the CUDA runtime has shut down at exit fails,
/// and the driver reclaims everything with the process anyway.
Pool& pool() {
  static Pool* p = new Pool;
  return *p;
}

}  // namespace

DecoderLease::DecoderLease(int device) : device_(device), exceptions_(std::uncaught_exceptions()) {
  {
    std::lock_guard lock(pool().mutex);
    auto& list = pool().idle[device];
    if (!list.empty()) {
      decoder_ = std::move(list.back());
      list.pop_back();
      return;
    }
  }
  decoder_ = std::make_unique<CudaDecoder>(device);
}

DecoderLease::~DecoderLease() {
  if (!decoder_ || std::uncaught_exceptions() > exceptions_) return;
  std::lock_guard lock(pool().mutex);
  auto& list = pool().idle[device_];
  if (list.size() < kIdlePerDevice) list.push_back(std::move(decoder_));
}

void release_gpu_memory() {
  std::map<int, std::vector<std::unique_ptr<CudaDecoder>>> drop;
  {
    std::lock_guard lock(pool().mutex);
    drop.swap(pool().idle);
  }
}

}  // namespace sigpu::flac
