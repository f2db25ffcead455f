// What every record pipeline computes on the host for a picture before its stages run: the
// tables the inter stage reads (slices, reference planes), the stages' parameters and the
// assembly's jobs. Shared by the CPU pipeline and the GPU's (record_pipeline.hpp).
#pragma once

#include <vector>

#include "hevc/assemble_stage.hpp"
#include "hevc/inter_sample.hpp"
#include "hevc/intra_stage.hpp"
#include "hevc/record_pipeline.hpp"
#include "hevc/tu_residual.hpp"

namespace sigpu::hevc {

struct RecordPlan {
  std::vector<InterSlice> slices;  ///< by PuRecords::slice
  std::vector<RefPicture> refs;    ///< the reference pictures' work planes
  InterParams inter;
  ScalingFactors scaling;  ///< what residual.scaling points to, when scaling lists are on
  ResidualParams residual;
  AssembleOrder assembly;
  AssembleParams assemble;
  IntraStageParams intra_params;
  IntraOrder intra;
  InterPlanes work;  ///< the picture's work planes

  /// The plan of `w`; throws DecodeError when its records name slices or references it lacks
  /// or lie outside the picture.
  void make(const RecordWork& w);
};

/// The GPU's pipeline (cuda/record_pipeline.cu; UnsupportedError in builds without CUDA).
std::unique_ptr<RecordPipeline> make_cuda_record_pipeline();

}  // namespace sigpu::hevc
