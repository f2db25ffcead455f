// How a decoder schedules reconstruction and the in-loop filters across pictures. Intra
// pictures depend on no other picture, so whole pictures can be reconstructed in parallel; the
// filters run either inside each picture's worker (CPU) or, pipelined, on a stage thread that
// filters one batch in decoding order while the front end parses and reconstructs the next (the
// cuda backend: its filter is one GPU stream).
#pragma once

#include <functional>
#include <span>
#include <vector>

#include <sigpu/hevc.hpp>

namespace sigpu::hevc {

struct Schedule {
  /// Reconstruct a batch of pictures (one per pool thread) at a time on the shared pool.
  bool parallel = false;
  /// Filter each batch on a stage thread while the next batch is parsed and reconstructed.
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
