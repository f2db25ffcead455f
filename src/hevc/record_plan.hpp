// What every record pipeline computes on the host for a picture before its stages run: the
// tables the inter stage reads (slices, reference planes), the stages' parameters, the
// assembly's jobs and the intra blocks' levels. Made on the thread that parsed the picture, so
// that the one thread queueing pictures in order (record_pipeline.hpp) has only the uploads and
// launches left to do.
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

  /// The plan of `w`, once the references' work planes are laid out; throws DecodeError when its
  /// records name slices or references it lacks or lie outside the picture.
  void make(const RecordWork& w);
};

/// The GPU's pipeline (cuda/record_pipeline.cu; UnsupportedError in builds without CUDA).
std::unique_ptr<RecordPipeline> make_cuda_record_pipeline();

}  // namespace sigpu::hevc
