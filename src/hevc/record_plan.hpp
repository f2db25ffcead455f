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

/// The assembly's picture-wide parameters for `pic`.
AssembleParams assemble_params(const DecodedPicture& pic);

/// The work planes of `pic` as the stages write them.
InterPlanes work_view(const DecodedPicture& pic);

/// Residual planes of `pic`'s layout in `storage` (DecodedPicture::samples of them).
ResidualPlanes residual_planes(const DecodedPicture& pic, std::int16_t* storage);

/// The GPU's pipeline (cuda/record_pipeline.cu; UnsupportedError in builds without CUDA).
std::unique_ptr<RecordPipeline> make_cuda_record_pipeline();

}  // namespace sigpu::hevc
