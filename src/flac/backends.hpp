// The decoding backends behind sigpu::flac::decode. Each fills a DecodeOutput.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <sigpu/flac.hpp>

#include "core/thread_pool.hpp"
#include "flac/frame_index.hpp"
#include "flac/pcm_store.hpp"

namespace sigpu::flac {

struct DecodeOutput {
  Pcm pcm;
  std::vector<Damage> damage;
  std::vector<std::string> warnings;
  std::uint64_t frames = 0;
  std::uint64_t frames_numbered = 0;  ///< DecodeReport::frames_numbered
};

/// The serial reference: one frame after another, like libFLAC. Output is raw32 interleaved;
/// the caller converts.
DecodeOutput decode_serial(std::span<const std::uint8_t> file, const Stream& stream,
                           const std::optional<StreamParams>& params);

/// Parallel frame search on the CPU: candidates in position order, successors linked.
std::vector<Candidate> search_frames_cpu(std::span<const std::uint8_t> file, const Stream& stream,
                                         ThreadPool& pool);
/// The same with successors linked by their numbers alone, no CRC-16: a pass over the bytes that
/// only tests headers. A decoder of such links must check every frame's CRC-16 itself
/// (ClipWindow::crc_checked).
std::vector<Candidate> search_headers_cpu(std::span<const std::uint8_t> file, const Stream& stream,
                                          ThreadPool& pool);

/// Decodes a frame on the host to check it (the FrameProbe of build_frame_index).
FrameProbe host_probe(std::span<const std::uint8_t> file);

/// The all-core CPU backend: search, index and decode straight into a host Pcm.
DecodeOutput decode_parallel_cpu(std::span<const std::uint8_t> file, const Stream& stream,
                                 const DecodeOptions& options);

/// The all-core decode of an index the caller built and verified, whose frames cover its output
/// end to end (a range's window), with no search: samples [keep.first, keep.end) of its output
/// come back. nullopt when a frame fails to decode or ends elsewhere than the index says.
std::optional<DecodeOutput> decode_index_cpu(std::span<const std::uint8_t> file,
                                             const FrameIndex& index, const DecodeOptions& o,
                                             SampleSpan keep);

/// Gives a Pcm the format and length an index describes, as the options ask.
void shape_pcm(Pcm& pcm, const FrameIndex& index, const DecodeOptions& options);

/// Bytes of output for `samples` samples of `channels` channels; throws when over a non-zero
/// limit.
std::uint64_t output_bytes(std::uint64_t samples, unsigned channels, SampleFormat format,
                           std::uint64_t max_bytes);
/// Bytes of output an index needs.
inline std::uint64_t output_bytes(const FrameIndex& index, SampleFormat format,
                                  std::uint64_t max_bytes) {
  return output_bytes(index.total_samples, index.channels, format, max_bytes);
}

}  // namespace sigpu::flac
