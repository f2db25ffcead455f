// How a decoder schedules reconstruction and the in-loop filters across pictures. Intra
// pictures depend on no other picture, so whole pictures stream through the decoder's worker
// threads, a bounded number in flight, and come out in decoding order. The filters run in each
// picture's worker (CPU) or, pipelined, on a stage as soon as the picture is reconstructed (the
// cuda backend: four lanes, each a thread driving one CUDA stream), after which a worker checks
// the picture hash and crops; the front end waits only when the bound is reached.
#pragma once

#include <functional>
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
};

/// The schedule a Decoder uses for `backend` (resolved): cpu serial; cpu-parallel; cuda pipelined.
Schedule schedule_for(Backend backend);

/// Decodes `stream` as Decoder::decode does but with an explicit schedule, and returns the
/// problems: lets CPU-only tests run the cuda backend's pipelined scheduler with a CPU filter.
std::vector<Problem> decode_with(const Schedule& schedule, const DecodeOptions& options,
                                 std::span<const std::uint8_t> stream,
                                 const std::function<void(const Frame&)>& on_frame);

}  // namespace sigpu::hevc
