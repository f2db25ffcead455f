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

/// Decoding result of one indexed frame.
struct FrameResult {
  FrameError error = FrameError::ok;
  std::uint64_t end = 0;  ///< where the frame really ends, when error is ok or relink
};

/// What a backend does for the driver: zeroed output for an index, then every frame decoded.
class FrameExecutor {
 public:
  virtual ~FrameExecutor() = default;
  /// Makes the output for index.total_samples samples, all silence (a later call for the same
  /// size reuses and clears it).
  virtual void prepare_output(const FrameIndex& index) = 0;
  virtual std::vector<FrameResult> decode(const FrameIndex& index) = 0;
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
std::vector<Damage> collect_damage(const FrameIndex& index, const std::vector<FrameResult>& results,
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
