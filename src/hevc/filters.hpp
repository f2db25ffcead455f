// The bridge to the in-loop filter module (src/hevc_filter), which a build may leave out.
#pragma once

#include <memory>

#include <sigpu/core.hpp>

#include "hevc/picture.hpp"

namespace sigpu::hevc {

/// True when this build has the hevc_filter module.
bool filters_available();

/// The GPU filter's side information of `pic` copied into pinned memory ahead of
/// FilterRunner::apply_work, on any thread: filter_side_bytes(pic) bytes at `pinned`.
std::size_t filter_side_bytes(const DecodedPicture& pic);
void stage_filter_side(const DecodedPicture& pic, void* pinned);

/// Deblocks and applies SAO to pictures in place from their side information. Holds the CUDA
/// filter (device buffers kept between pictures) once the cuda backend is used.
class FilterRunner {
 public:
  FilterRunner();
  ~FilterRunner();
  void apply(DecodedPicture& pic, Backend backend);
  /// Filters the work planes of `pic` (record_pipeline.hpp): with Backend::cuda, in device
  /// memory, queued on `stream` (a cudaStream_t; one per runner, the first call's) behind the
  /// work queued there before, returning once queued, from the side information `staged` by
  /// stage_filter_side when given; otherwise in host memory on the CPU.
  void apply_work(DecodedPicture& pic, Backend backend, void* stream = nullptr,
                  const void* staged = nullptr);

 private:
  struct Cuda;
  std::unique_ptr<Cuda> cuda_;
};

}  // namespace sigpu::hevc
