// The CUDA backend as the driver above it sees it: bytes in, PCM and what was found out, and
// nothing more. Everything around a decode (which engine, how many parts, MD5, the report,
// stop_on_damage) is the driver's (gpu_driver.hpp, multi_device.hpp, gpu_pool.hpp): the backend
// never calls up. Builds without CUDA have no engine: create() throws.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <sigpu/flac.hpp>

#include "flac/backends.hpp"
#include "flac/clip_store.hpp"

namespace sigpu::flac {

/// One file of a batch after the engine: its metadata and output, or why it could not be
/// decoded at all.
struct EngineFile {
  Stream stream;
  DecodeOutput out;
  std::string error;
};

/// PCM left in device memory, freed with `owner`.
struct DeviceOutput {
  DecodeOutput out;  ///< out.pcm has the shape and no bytes
  void* data = nullptr;
  std::shared_ptr<void> owner;
};

/// A window of a clip batch: its bytes, the index the caller verified for them, and where its
/// clip lies.
struct ClipWindow {
  std::span<const std::uint8_t> bytes;
  const FrameIndex* index = nullptr;
  std::uint64_t first = 0;  ///< the clip's first sample in the window's output
  std::uint64_t clip = 0;   ///< the clip's place in the batch
  /// Whether the index's links were verified by CRC-16 (Links::verified); if not, the engine
  /// checks every frame's CRC-16 as it decodes them.
  bool crc_checked = true;
};

class GpuEngine {
 public:
  /// Called as the PCM lands in host memory, in order: the decode's output so far (its pcm has
  /// the shape, its damage is complete), where the PCM goes, and the end in bytes of what has
  /// landed there.
  using Landed =
      std::function<void(const DecodeOutput& r, const std::uint8_t* pcm, std::size_t end)>;

  /// An engine on `device`: its streams, tables and (growing) buffers. Throws Error when the
  /// build has no CUDA or no device is present.
  static std::unique_ptr<GpuEngine> create(int device);
  virtual ~GpuEngine() = default;

  virtual int device() const = 0;
  /// Device memory the engine holds now (its buffers only grow).
  virtual std::uint64_t device_bytes() const = 0;
  /// Whether the driver can DMA from or to this host memory directly (cudaMallocHost,
  /// cudaHostRegister).
  virtual bool pinned(const void* host) const = 0;
  /// Whether `p` is memory this engine's device can write as its own (cudaMalloc, managed).
  virtual bool on_device(const void* p) const = 0;

  /// A whole stream in host memory. The PCM goes to `out` when it is exactly its size (the
  /// result's pcm then has the shape and no bytes), else to pcm.bytes; `landed` follows it.
  virtual DecodeOutput decode(std::span<const std::uint8_t> file, const Stream& stream,
                              const DecodeOptions& o, std::span<std::uint8_t> out,
                              const Landed& landed) = 0;
  /// The frames of an index the caller built and verified (a range's window), with no search:
  /// samples [keep.first, keep.end) of its output come back in the result's pcm. nullopt when a
  /// frame fails to decode or ends elsewhere than the index says.
  virtual std::optional<DecodeOutput> decode_index(std::span<const std::uint8_t> bytes,
                                                   const FrameIndex& index, const DecodeOptions& o,
                                                   SampleSpan keep) = 0;
  /// The same through at most o.device_memory_budget bytes of device memory.
  virtual DecodeOutput decode_streaming(std::span<const std::uint8_t> file, const Stream& stream,
                                        const DecodeOptions& o) = 0;
  /// Many files packed into shared launches; result i belongs to files[i]. File i's PCM goes
  /// into outs[i] when outs is not empty and outs[i] is exactly its size (its pcm then has no
  /// bytes), else into its pcm.bytes.
  virtual std::vector<EngineFile> decode_batch(std::span<const std::span<const std::uint8_t>> files,
                                               std::span<const std::span<std::uint8_t>> outs,
                                               const DecodeOptions& o) = 0;
  /// Windows decoded together, with no search (shared launches for the windows of one channel
  /// count and depth), each one's samples [first, first + target.length) written as clip `clip`
  /// of `target`, in this engine's device memory (store_clip_sample; zeros past the window's
  /// output). Result k: whether windows[k]'s frames all decoded as its index says; a window that
  /// did not leaves its clip unwritten. Returns when the batch is written. The batch is first
  /// written after the CUDA events `after` (see flac::decode_clips).
  virtual std::vector<bool> decode_clips(std::span<const ClipWindow> windows,
                                         const ClipTarget& target,
                                         std::span<void* const> after) = 0;
  /// Makes the work queued on this engine from now on wait for the CUDA events `events`
  /// (cudaEvent_t of its device), without waiting on the host.
  virtual void wait(std::span<void* const> events) = 0;
  /// Copies `bytes` of host memory to this engine's device memory (through its staging).
  virtual void upload(void* device, const std::uint8_t* host, std::size_t bytes) = 0;
  /// Copies `bytes` of this engine's device memory to host memory (through its staging).
  virtual void download(std::uint8_t* host, const void* device, std::size_t bytes) = 0;
  /// Compressed bytes in device memory (4-byte aligned), PCM left there.
  virtual DeviceOutput decode_device(const std::uint8_t* d_file, std::size_t size,
                                     const Stream& stream, const DecodeOptions& o) = 0;
};

}  // namespace sigpu::flac
