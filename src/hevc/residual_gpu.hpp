// The residual stage on the GPU (docs/design/hevc.md, "The residual stage"): a picture's
// transform block records and coefficients uploaded as they are (structure of arrays, one
// copy), then the kernel of cuda/residual_kernel.cuh. Builds without CUDA refuse it.
#pragma once

#include <memory>

#include "hevc/records.hpp"
#include "hevc/tu_residual.hpp"

namespace sigpu::hevc {

class CudaResidualStage {
 public:
  /// On the current device, queueing on `stream` (a cudaStream_t; null: a stream of its own);
  /// throws UnsupportedError in builds without CUDA.
  explicit CudaResidualStage(void* stream = nullptr);
  ~CudaResidualStage();
  CudaResidualStage(const CudaResidualStage&) = delete;
  CudaResidualStage& operator=(const CudaResidualStage&) = delete;

  /// Queues the residual of every coded transform block of `rec` into `d_out` (device memory,
  /// planes the picture's size): the same samples as residual_stage_cpu. `p` is in host memory
  /// (its scaling factors are uploaded with the records). Returns once the work is queued; the
  /// next run() may start as soon as this returns.
  void run(const PictureRecords& rec, const ResidualParams& p, const ResidualPlanes& d_out);
  /// Waits until the planes hold the residual of the last run().
  void synchronize();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sigpu::hevc
