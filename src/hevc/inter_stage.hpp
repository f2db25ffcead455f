// The inter prediction stage of reconstruction (docs/design/hevc.md, "The inter prediction
// stage"): every PU's motion-compensated prediction, from the picture's PU records, a table of
// its slices and its reference pictures' planes. inter_stage_cpu is the CPU twin of the CUDA
// kernel (inter_gpu.hpp): both compute each sample with predict_pu_sample (inter_sample.hpp).
// The decoder's reconstruction predicts with the block filters of inter_pred.hpp instead, which
// the tests hold to the same samples.
#pragma once

#include <cstdint>
#include <span>

#include "hevc/inter_sample.hpp"
#include "hevc/records.hpp"
#include "hevc/slice_header.hpp"

namespace sigpu::hevc {

/// The slice table entry of a slice with header `sh` whose reference list entries are the
/// reference pictures ref[list][refIdx] (indices into the picture's RefPicture array).
InterSlice inter_slice(const SliceHeader& sh, const std::int8_t (&ref)[2][16]);

/// Throws DecodeError unless every PU of `pu` lies in a picture of luma size width x height,
/// names a slice of `slices` and, through it, reference pictures below `ref_count`: what the
/// kernel reads without checking; Unsupported for chroma formats other than 4:0:0 and 4:2:0.
void check_inter_records(const PuRecords& pu, std::span<const InterSlice> slices, int ref_count,
                         int width, int height, const InterParams& p);

/// The prediction of every PU of `pu` into `out` (planes of the picture's size); samples outside
/// PUs are left as they are. The records must pass check_inter_records. `refs` and the planes they
/// point to are in host memory.
void inter_stage_cpu(const PuRecords& pu, std::span<const InterSlice> slices,
                     std::span<const RefPicture> refs, const InterParams& p,
                     const InterPlanes& out);

}  // namespace sigpu::hevc
