// The part of the parallel decoders that both backends share: index the candidates, decode
// every frame, and where decoding shows that a link of the header chain was false (a false
// header whose CRC-16 matched by chance or by design), correct the link and decode again.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "flac/backends.hpp"

namespace sigpu::flac {

/// A frame of the index that did not decode.
struct FrameFailure {
  std::uint32_t frame = 0;  ///< its place in the index
  FrameError error = FrameError::ok;
};

/// What decoding an index's frames found: only the frames that failed, so that the host's work
/// after a clean decode does not grow with the frame count (for the GPU's hour, a pass over
/// 42,181 results took 0.1-0.2 ms on the H100's host, after the kernels).
struct FrameResults {
  std::vector<FrameFailure> failed;  ///< in frame order
  std::uint64_t last_end = 0;        ///< where the index's last frame really ends, if it decoded

  /// Adds frame k of n, which decoded with `error` and ended at `end`; in frame order.
  void add(std::uint32_t k, std::uint32_t n, FrameError error, std::uint64_t end) {
    if (error != FrameError::ok) failed.push_back({k, error});
    if (k + 1 == n) last_end = error == FrameError::ok ? end : 0;
  }
};

/// What a backend does for the driver: zeroed output for an index, then every frame decoded.
class FrameExecutor {
 public:
  virtual ~FrameExecutor() = default;
  /// Makes the output for index.total_samples samples, all silence (a later call for the same
  /// size reuses and clears it).
  virtual void prepare_output(const FrameIndex& index) = 0;
  virtual FrameResults decode(const FrameIndex& index) = 0;
};

struct ParallelDecodeResult {
  FrameIndex index;
  std::vector<Damage> damage;  ///< the index's damage plus frames that failed to decode
};

/// The file's bytes in host memory, fetched only when needed (the CUDA backend may hold them
/// only on the device).
using HostBytes = std::function<std::span<const std::uint8_t>()>;

/// The index's damage plus every frame whose decode failed; *relink tells whether a frame
/// verified but ended elsewhere than its link said (the chain must be corrected and decoded
/// again).
std::vector<Damage> collect_damage(const FrameIndex& index, const FrameResults& results,
                                   bool* relink);

/// Indexes and decodes. When decoding shows a false link, every candidate's link is re-derived
/// from where its frame really ends (what a serial decoder would follow), on all cores, and the
/// stream is indexed and decoded once more: a stream built to trap the CRC-16 links costs
/// three passes, never one per frame. `cands` is updated in place.
ParallelDecodeResult decode_in_rounds(std::vector<Candidate>& cands, const Stream& stream,
                                      const std::optional<StreamParams>& params, std::uint64_t size,
                                      const FrameProbe& probe, FrameExecutor& executor,
                                      const HostBytes& host_bytes);

}  // namespace sigpu::flac
