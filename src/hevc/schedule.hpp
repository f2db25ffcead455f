// How a decoder schedules reconstruction and the in-loop filters across pictures. Intra
// pictures depend on no other picture, so whole pictures stream through the decoder's worker
// threads, a bounded number in flight, and come out in decoding order. The filters run in each
// picture's worker (CPU) or, pipelined, on a stage as soon as the picture is reconstructed (four
// lanes, each a thread driving one CUDA stream), after which a worker checks the picture hash and
// crops; the front end waits only when the bound is reached. With a record pipeline the workers
// parse pictures (an inter picture once those it predicts from are parsed: it reads their
// motion) and one lane queues each picture's reconstruction and filters in decoding order.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <vector>

#include <sigpu/hevc.hpp>

namespace sigpu::hevc {

struct Schedule {
  /// Reconstruct pictures on the decoder's workers, many in flight (else all on the caller).
  bool parallel = false;
  /// With parallel: filter each reconstructed picture on the stage (pinned planes when the
  /// filter is cuda), not in its worker.
  bool pipelined = false;
  /// Where the stage (or a lone picture) filters; picture workers use the serial CPU filter.
  Backend filter = Backend::cpu;
  /// With parallel, instead of the above: the workers only parse, and whole pictures are
  /// reconstructed and filtered from their records by this backend's record pipeline
  /// (record_pipeline.hpp), in decoding order. Backend::cpu runs the GPU's schedule with the
  /// stages' CPU twins.
  std::optional<Backend> records;
};

/// The schedule a Decoder uses for `backend` (resolved): cpu serial; cpu-parallel; cuda the GPU's
/// record pipeline, or pipelined filters when reconstruct_on_gpu is off.
Schedule schedule_for(Backend backend, bool reconstruct_on_gpu = true);

/// Decodes `stream` as Decoder::decode does but with an explicit schedule, and returns the
/// problems: lets CPU-only tests run the cuda backend's pipelined scheduler with a CPU filter.
std::vector<Problem> decode_with(const Schedule& schedule, const DecodeOptions& options,
                                 std::span<const std::uint8_t> stream, const FrameSink& on_frame);

}  // namespace sigpu::hevc
