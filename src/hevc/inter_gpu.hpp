// The inter prediction stage on the GPU (docs/design/hevc.md, "The inter prediction stage"): a
// picture's PU records, slice table and reference table uploaded in one copy, then the kernel
// of cuda/inter_kernel.cuh. Builds without CUDA refuse it.
#pragma once

#include <memory>
#include <span>

#include "hevc/inter_sample.hpp"
#include "hevc/records.hpp"

namespace sigpu::hevc {

class CudaInterStage {
 public:
  /// On the current device, queueing on `stream` (a cudaStream_t; null: a stream of its own);
  /// throws UnsupportedError in builds without CUDA.
  explicit CudaInterStage(void* stream = nullptr);
  ~CudaInterStage();
  CudaInterStage(const CudaInterStage&) = delete;
  CudaInterStage& operator=(const CudaInterStage&) = delete;

  /// Queues the prediction of every PU of `pu` into `d_out` (device memory, planes of a picture
  /// of luma size width x height): the same samples as inter_stage_cpu. `slices` and `refs` are
  /// in host memory, the planes `refs` points to in device memory. Checks the records first
  /// (check_inter_records). Returns once the work is queued.
  void run(const PuRecords& pu, std::span<const InterSlice> slices,
           std::span<const RefPicture> refs, const InterParams& p, int width, int height,
           const InterPlanes& d_out);
  /// Waits until the planes hold the prediction of the last run().
  void synchronize();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sigpu::hevc
