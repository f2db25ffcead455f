// Test hooks of the CUDA frame decode (CUDA builds only): which kernels Executor::decode runs,
// and the per-frame error codes of the last decode, so that a test can run the fast path
// against its plain twin (DecodeFramesKernel) and compare.
#pragma once

#include <cstdint>
#include <vector>

namespace sigpu::flac::cuda {

enum class DecodePath { fast, plain };

/// Process-wide; not for concurrent decodes. The default is fast.
void set_decode_path(DecodePath p);
DecodePath decode_path();

/// The byte the output is filled with before the frames are stored: 0 (silence for damaged
/// spans) except in tests that poison it to catch samples a kernel forgets to write.
void set_output_fill(std::uint8_t byte);

/// The FrameError of every frame of the last decode round, in index order (all rounds appended
/// since the last clear).
std::vector<std::uint8_t> frame_errors_log();
void clear_frame_errors_log();

}  // namespace sigpu::flac::cuda
