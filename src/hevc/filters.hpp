// The bridge to the in-loop filter module (src/hevc_filter), which a build may leave out.
#pragma once

#include <memory>

#include <sigpu/core.hpp>

#include "hevc/picture.hpp"

namespace sigpu::hevc {

/// True when this build has the hevc_filter module.
bool filters_available();

/// Deblocks and applies SAO to pictures in place from their side information. Holds the CUDA
/// filter (device buffers kept between pictures) once the cuda backend is used.
class FilterRunner {
 public:
  FilterRunner();
  ~FilterRunner();
  void apply(DecodedPicture& pic, Backend backend);

 private:
  struct Cuda;
  std::unique_ptr<Cuda> cuda_;
};

}  // namespace sigpu::hevc
