// The intra prediction stage of reconstruction (docs/design/hevc.md, "The intra stage"): every
// intra transform block predicted from its reconstructed neighbours and its residual added, from
// the picture's TU records, the residual stage's planes and the picture's planes, which hold the
// samples of everything else (inter prediction plus residual, PCM) when it runs. Blocks read
// their neighbours' final samples, so they run in dependency levels (order_intra_tus): a level
// reads only what lower levels and the other stages wrote. intra_stage_cpu is the CPU twin of
// the CUDA kernel (intra_gpu.hpp): both compute each sample with intra_sample.hpp.
#pragma once

#include <cstdint>
#include <vector>

#include "hevc/intra_sample.hpp"
#include "hevc/records.hpp"
#include "hevc/tu_residual.hpp"

namespace sigpu::hevc {

/// The intra transform blocks of a picture grouped by dependency level: level L is
/// tu[begin[L]] .. tu[begin[L + 1] - 1], decoding order within a level. A block's level is one
/// more than the highest level of the intra blocks of its component whose samples its available
/// references read (those of inter, PCM and non-intra blocks count as level 0), so the blocks of
/// one level are independent and every sample they read is final once the lower levels ran.
struct IntraOrder {
  std::vector<std::uint32_t> tu;
  std::vector<std::uint32_t> begin;  ///< levels() + 1 entries

  std::size_t levels() const { return begin.empty() ? 0 : begin.size() - 1; }

  // Scratch of order_intra_tus, kept for its storage.
  std::vector<std::uint32_t> level_of_tu, cells;
};

/// The levels of the intra blocks of `tu` in a picture of luma size width x height. Throws
/// DecodeError unless every intra block lies in its plane, aligned to its size, with a mode
/// and references inside the plane (what the kernel reads without checking); Unsupported for
/// chroma formats other than 4:0:0 and 4:2:0.
void order_intra_tus(const TuRecords& tu, int width, int height, const IntraStageParams& p,
                     IntraOrder& out);

/// The intra blocks of `order` level by level: each block's prediction plus, where coded, its
/// residual from `residual` (residual_stage_cpu's planes), clipped, into `planes` (the picture,
/// which it reads the references from). `order` must come from order_intra_tus for `tu`.
void intra_stage_cpu(const TuRecords& tu, const IntraOrder& order, const IntraStageParams& p,
                     const ResidualPlanes& residual, const InterPlanes& planes);

}  // namespace sigpu::hevc
