// The intra stage on the GPU (docs/design/hevc.md, "The intra stage"): the TU records intra
// prediction reads and the level order uploaded in one copy, then one launch of the kernel of
// cuda/intra_kernel.cuh per level, all on the caller's stream. Builds without CUDA refuse it.
#pragma once

#include <memory>

#include "hevc/intra_stage.hpp"

namespace sigpu::hevc {

class CudaIntraStage {
 public:
  /// Enqueues on `stream` (a cudaStream_t; null: the default stream), which the caller keeps
  /// alive, so that the picture's other stages on that stream order with it. Throws
  /// UnsupportedError in builds without CUDA.
  explicit CudaIntraStage(void* stream);
  ~CudaIntraStage();
  CudaIntraStage(const CudaIntraStage&) = delete;
  CudaIntraStage& operator=(const CudaIntraStage&) = delete;

  /// Queues the reconstruction of every intra block of `order` (order_intra_tus of `tu`):
  /// the same samples as intra_stage_cpu. `d_residual` (the residual stage's planes) and
  /// `d_planes` (the picture, holding every other block's final samples by the time the work
  /// runs) are in device memory. Returns once the work is queued; the records may change as
  /// soon as it returns.
  void run(const TuRecords& tu, const IntraOrder& order, const IntraStageParams& p,
           const ResidualPlanes& d_residual, const InterPlanes& d_planes);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sigpu::hevc
