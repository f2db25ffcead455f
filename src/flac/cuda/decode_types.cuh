// The plain data the FLAC kernels share with their drivers (no kernels here, so every driver
// file may include it).
#pragma once

#include <cstdint>

#include "flac/flat_out.hpp"

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

/// One file of a pack (SpreadFilesKernel): its bytes at landing + from, to go to pack + to;
/// [to + size, end) is zeroed (end: where the next file starts, a multiple of 16 as `to` is).
struct FileMove {
  std::uint64_t from, to, size, end;
};

/// A decoded window as ClipStoreKernel reads it (decode_clips): its clip's first sample in the
/// pack's output, how many samples it has from there, and the clip's place in the batch.
struct ClipSourceDevice {
  std::uint64_t sample, available, clip;
};

/// A narrow parse's pool of the values that do not fit (NarrowSpill), and its two counters, zero
/// at launch: entries taken, and whether a frame was refused (the decode must then be made
/// again with 32-bit scratch).
struct NarrowPool {
  NarrowException* entries = nullptr;
  std::uint32_t* counters = nullptr;  ///< [0] entries taken, [1] refused
  std::uint32_t capacity = 0;
};

/// A NarrowPool's entries for n frames: four per frame (music has a few in a hundred frames);
/// a stream that needs more is decoded again with 32-bit scratch.
inline constexpr std::uint32_t kNarrowPerFrame = 4, kNarrowFixed = 64;
inline std::uint32_t narrow_pool_entries(std::uint32_t frames) {
  return kNarrowPerFrame * frames + kNarrowFixed;
}

/// What the parse kernel leaves for the restore and store kernels, per frame.
struct FrameStateDevice {
  std::uint64_t out_sample;
  std::uint32_t block_size;
  std::uint8_t assignment;
  std::uint8_t channels;
  std::uint8_t pending;      ///< 1: parsed, to restore and store; 0: failed or already stored
  std::uint32_t exceptions;  ///< a narrow parse's first NarrowException, or kNoException
};

}  // namespace sigpu::flac::cuda
