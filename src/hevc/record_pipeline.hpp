// Reconstruction of whole pictures from their records (docs/design/hevc.md, "The record
// pipeline"): after a picture's slices are parsed into records (records.hpp) on the CPU, the
// stages make its samples in its work planes: inter prediction (inter_stage.hpp), the residual
// (residual_stage.hpp), their assembly with PCM samples and the concealment of lost CTBs
// (assemble_stage.hpp), intra prediction by dependency levels (intra_stage.hpp); then the
// in-loop filters, and a copy into the picture's host planes for output. Intra pictures, whose
// prediction chains run through the whole picture (thousands of dependency levels at 4K), are
// reconstructed by the parsing threads instead, a WPP row per thread, and only copied in. On the
// GPU the work planes and the decoded picture buffer stay in device memory and every picture's work
// is queued on one stream in decoding order, so a picture's references are complete before its
// prediction reads them, with nothing waited for on the host. The CPU pipeline runs the stages'
// twins the same way on host memory: the same schedule, checked in CI without a GPU.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include <sigpu/core.hpp>

#include "hevc/picture.hpp"
#include "hevc/slice_header.hpp"

namespace sigpu::hevc {

/// A slice of the picture: its header and, P or B, its reference picture lists.
struct RecordSlice {
  const SliceHeader* header = nullptr;
  const RefPicLists* refs = nullptr;
};

struct RecordPlan;  // record_plan.hpp

/// One picture's work.
struct RecordWork {
  DecodedPicture* pic = nullptr;    ///< records, parameter sets, work planes, filter side info
  std::vector<RecordSlice> slices;  ///< indexed by PuRecords::slice (independent slices)
  bool filter = false;              ///< deblocking and SAO from pic->info
  bool output = false;              ///< copy the work planes into pic->planes
  /// pic->planes already hold the samples (an intra picture, reconstructed by the parsing
  /// threads): copied into the work planes instead of made from the records (no plan needed).
  bool reconstructed = false;
  /// With `filter` on the GPU: the side information already staged in pinned memory
  /// (stage_filter_side), or null to stage it while queueing.
  const void* filter_side = nullptr;
};

class RecordPipeline {
 public:
  virtual ~RecordPipeline() = default;
  /// Where work planes live (PlanePool::take's memory).
  virtual Memory memory() const = 0;
  /// Queues `w`, planned by RecordPlan::make (on any thread: the plan is the host's share of the
  /// work). Pictures come in decoding order, from one thread; the work planes of every reference
  /// must have been queued (run, or grey) before. Returns a function that blocks until the
  /// picture is done (its host planes hold the output when asked).
  virtual std::function<void()> run(const RecordWork& w, const RecordPlan& plan) = 0;
  /// Fills the work planes of `pic` with mid-grey (a picture made up for a missing reference,
  /// 8.3.3.2), queued before any picture run later.
  virtual void grey(DecodedPicture& pic) = 0;
};

/// The pipeline for `backend`: Backend::cuda on device 0 (UnsupportedError without CUDA),
/// anything else the CPU twins.
std::unique_ptr<RecordPipeline> make_record_pipeline(Backend backend);

}  // namespace sigpu::hevc
