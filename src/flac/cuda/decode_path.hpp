// Test hooks of the CUDA frame decode (CUDA builds only): which kernels Executor::decode runs,
// and the per-frame error codes of the last decode, so that a test can run the fast path
// against its plain twin (DecodeFramesKernel) and compare.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <sigpu/flac.hpp>

#include "flac/frame_index.hpp"
#include "flac/frame_search.hpp"
#include "flac/subframe.hpp"

namespace sigpu::flac::cuda {

/// fast: one thread parses each frame, then restore and store run in parallel (the path
/// measured on the GPU machine); fast_flat: the same with the parse's residual loop flattened
/// (flac/residual_flat.hpp) so that the lanes of a warp stay converged; fast_warp_parse: the
/// fast path with a warp parsing each frame (warp_residual.cuh; measured slower); plain: one
/// thread decodes each frame whole.
/// automatic (the default): fast_warp_parse for a decode of few frames (kFewFrames), whose time is
/// its slowest frame's, else fast_flat.
enum class DecodePath { fast, fast_warp_parse, plain, fast_flat, automatic };

/// The most frames a decode may have to count as few.
inline constexpr std::uint32_t kFewFrames = 512;

/// The path a decode of n frames takes.
inline DecodePath resolve_path(DecodePath p, std::uint32_t n) {
  if (p != DecodePath::automatic) return p;
  return n <= kFewFrames ? DecodePath::fast_warp_parse : DecodePath::fast_flat;
}

/// Process-wide; not for concurrent decodes. The default is automatic.
void set_decode_path(DecodePath p);
DecodePath decode_path();

/// The byte the output is filled with before the frames are stored: 0 (silence for damaged
/// spans) except in tests that poison it to catch samples a kernel forgets to write.
void set_output_fill(std::uint8_t byte);

/// Device memory the last streaming decode (DecodeOptions::device_memory_budget) held at its
/// end: its buffers only grow, so this is its peak.
std::uint64_t streaming_device_bytes();

/// Runs RestoreSubframesKernel alone over frames laid out as the decoder lays them out, in the
/// caller's device memory (a test's guarded buffers): frame k (block_sizes[k] samples per
/// channel) follows frame k - 1 in `d_samples`, channel by channel, warm-up samples and residuals
/// in place, and is restored there; params[k * channels + c] describes its subframe c; frames
/// whose `pending` is 0 are left alone. With `assignments` (frame k's channel assignment), the
/// kernel also stores the frames it can (restore_stores_frames) into `d_pcm` (interleaved, room
/// for every sample) as `format` from samples of `bits` bits, and writes nothing of the others.
/// Returns which frames the kernel stored.
std::vector<std::uint8_t> restore_on_device(
    std::int32_t* d_samples, std::span<const std::uint32_t> block_sizes, unsigned channels,
    std::span<const SubframeParams> params, std::span<const std::uint8_t> pending,
    std::span<const std::uint8_t> assignments = {}, std::uint8_t* d_pcm = nullptr,
    SampleFormat format = SampleFormat::raw32, unsigned bits = 32);

/// The frame search of a whole file on device 0 (FindHeadersKernel, sort, candidates,
/// LinkSuccessorsKernel): every candidate, in position order, with its successor. The file lies
/// `device_offset` bytes (a multiple of 4) into its device buffer.
std::vector<Candidate> search_on_device(std::span<const std::uint8_t> file,
                                        std::size_t device_offset = 0);

/// ChainFramesKernel over the candidates of a whole file on device 0 (found as search_on_device
/// finds them): the frames it lists when they are one unbroken chain, or none.
std::vector<FrameEntry> chain_on_device(std::span<const std::uint8_t> file);

/// The FrameError of every frame of the last decode round, in index order (all rounds appended
/// since the last clear).
std::vector<std::uint8_t> frame_errors_log();
void clear_frame_errors_log();

/// What the 16-bit scratch (parse_narrow) did in the decodes since clear_frame_errors_log:
/// decodes made with it, values listed beside it (NarrowException), and decodes it refused
/// (made again with 32-bit scratch).
struct NarrowLog {
  std::uint64_t decodes = 0, spilled = 0, refused = 0;
};
NarrowLog narrow_log();

}  // namespace sigpu::flac::cuda
