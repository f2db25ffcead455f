// The plain data the FLAC kernels share with their drivers (no kernels here, so every driver
// file may include it).
#pragma once

#include <cstdint>

namespace sigpu::flac::cuda {

/// Channels the fast decode path handles (SubframeParams per frame); more take the plain path.
inline constexpr unsigned kMaxChannels = 8;

/// A frame's decode result: its error and where it really ends.
struct FrameResultDevice {
  std::uint64_t end;
  std::uint8_t error;
};

/// Where a frame's file lies in a buffer that packs several files (decode_batch): frame
/// positions are relative to it and reads stop at its end, exactly as for the file alone.
struct FileSpanDevice {
  std::uint64_t offset, size;
};

/// What the parse kernel leaves for the restore and store kernels, per frame.
struct FrameStateDevice {
  std::uint64_t out_sample;
  std::uint32_t block_size;
  std::uint8_t assignment;
  std::uint8_t channels;
  std::uint8_t pending;  ///< 1: parsed, to restore and store; 0: failed or already stored
};

}  // namespace sigpu::flac::cuda
