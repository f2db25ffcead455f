// Test hooks of the CUDA frame decode (CUDA builds only): which kernels Executor::decode runs,
// and the per-frame error codes of the last decode, so that a test can run the fast path
// against its plain twin (DecodeFramesKernel) and compare.
#pragma once

#include <cstdint>
#include <vector>

namespace sigpu::flac::cuda {

/// fast: one thread parses each frame, then restore and store run in parallel (the path
/// measured on the GPU machine); fast_flat: the same with the parse's residual loop flattened
/// (flac/residual_flat.hpp) so that the lanes of a warp stay converged; fast_warp_parse: the
/// fast path with a warp parsing each frame (warp_residual.cuh; measured slower); plain: one
/// thread decodes each frame whole.
enum class DecodePath { fast, fast_warp_parse, plain, fast_flat };

/// Process-wide; not for concurrent decodes. The default is fast.
void set_decode_path(DecodePath p);
DecodePath decode_path();

/// The byte the output is filled with before the frames are stored: 0 (silence for damaged
/// spans) except in tests that poison it to catch samples a kernel forgets to write.
void set_output_fill(std::uint8_t byte);

/// Device memory the last streaming decode (DecodeOptions::device_memory_budget) held at its
/// end: its buffers only grow, so this is its peak.
std::uint64_t streaming_device_bytes();

/// The FrameError of every frame of the last decode round, in index order (all rounds appended
/// since the last clear).
std::vector<std::uint8_t> frame_errors_log();
void clear_frame_errors_log();

}  // namespace sigpu::flac::cuda
