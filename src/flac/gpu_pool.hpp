// The GPU engines the library keeps between calls, per device (decode, decode_batch, the ranges,
// the parts of a multi-device decode, decode_files). Building one costs streams, CRC tables,
// device buffers and pinned staging: milliseconds that a loader cutting one clip per call would
// pay every time. A lease takes an idle engine of its device, or builds one, and gives it back
// when it ends (unless an exception is passing: a decode cut short is not trusted again). Idle
// engines are kept while their device memory stays within the pool's budget per device
// (set_gpu_pool_budget); release_gpu_memory() frees them all.
#pragma once

#include <memory>

#include "flac/gpu_engine.hpp"

namespace sigpu::flac {

class EngineLease {
 public:
  explicit EngineLease(int device);
  ~EngineLease();
  EngineLease(const EngineLease&) = delete;
  EngineLease& operator=(const EngineLease&) = delete;

  GpuEngine& operator*() { return *engine_; }
  GpuEngine* operator->() { return engine_.get(); }

 private:
  int device_;
  int exceptions_;
  std::unique_ptr<GpuEngine> engine_;
};

}  // namespace sigpu::flac
