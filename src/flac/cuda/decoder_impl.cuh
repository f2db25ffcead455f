// CudaEngine's state, shared by its entry points: cuda_decoder.cu (one file in device memory),
// batch_decoder.cu (many files packed into shared launches) and stream_decoder.cu (a file
// through a bounded amount of device memory).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include <sigpu/flac.hpp>

#include "core/crc.hpp"
#include "core/crc_combine.hpp"
#include "core/cuda/buffer.hpp"
#include "core/cuda/staging.hpp"
#include "flac/backends.hpp"
#include "flac/cuda/decode_path.hpp"
#include "flac/cuda/decode_types.cuh"
#include "flac/gpu_engine.hpp"
#include "flac/parallel_decode.hpp"
#include "flac/pcm_store.hpp"
#include "flac/subframe.hpp"

namespace sigpu::flac {

namespace cuda {
/// The byte outputs are filled with before frames are stored (see set_output_fill).
std::uint8_t output_fill_byte();
/// Adds a decode round's per-frame errors to the test log, when a test asked for it.
void log_frame_errors(const FrameResultDevice* results, std::uint32_t n);
/// Adds a narrow decode's NarrowPool counters to narrow_log().
void log_narrow_decode(const std::uint32_t* counters);
}  // namespace cuda

/// Device bytes a pack of files (decode_batch, decode_clips) may use for compressed data,
/// scratch and PCM together.
inline constexpr std::uint64_t kPackBudget = std::uint64_t{1} << 30;
/// Where each file of a pack starts in its device buffer.
inline constexpr std::uint64_t kPackAlign = 256;

inline std::uint64_t align_up(std::uint64_t v, std::uint64_t a) {
  return (v + a - 1) / a * a;
}

/// Files of one shape (channels, bits per sample), a group per shape.
using ShapeGroups = std::map<std::pair<unsigned, unsigned>, std::vector<std::size_t>>;

/// Cuts every group into packs of members in order whose needs (need(i): bytes) add up to at
/// most kPackBudget (a member alone may need more) and calls run(pack, channels, bits) on each.
template <class Need, class Run>
void for_each_pack(const ShapeGroups& groups, const Need& need, const Run& run) {
  for (const auto& [shape, members] : groups) {
    std::vector<std::size_t> pack;
    std::uint64_t used = 0;
    for (std::size_t i : members) {
      const std::uint64_t n = need(i);
      if (!pack.empty() && used + n > kPackBudget) {
        run(pack, shape.first, shape.second);
        pack.clear();
        used = 0;
      }
      pack.push_back(i);
      used += n;
    }
    if (!pack.empty()) run(pack, shape.first, shape.second);
  }
}

/// The buffers and stream of one frame decode in flight. Buffers grow to the largest decode
/// they served and are kept.
struct DecodeSlot {
  sigpu::cuda::Stream stream;
  sigpu::cuda::DeviceBuffer<std::uint8_t> file;  ///< compressed bytes (when the slot holds them)
  /// A pack's pinned files as they went up, and where each goes in `file` (spread_kernel.cuh).
  sigpu::cuda::DeviceBuffer<std::uint8_t> landing;
  sigpu::cuda::DeviceBuffer<cuda::FileMove> moves;
  sigpu::cuda::DeviceBuffer<FrameEntry> frames;
  sigpu::cuda::DeviceBuffer<cuda::FileSpanDevice> file_spans;  ///< per frame, packed batches
  sigpu::cuda::DeviceBuffer<cuda::FrameResultDevice> results;
  sigpu::cuda::DeviceBuffer<std::uint8_t> scratch;
  sigpu::cuda::DeviceBuffer<NarrowException> narrow_pool;  ///< a narrow parse's (NarrowPool)
  sigpu::cuda::DeviceBuffer<std::uint32_t> narrow_counters;
  sigpu::cuda::PinnedBuffer<std::uint32_t> narrow_counters_host;
  sigpu::cuda::DeviceBuffer<cuda::FrameStateDevice> states;  ///< the fast path's per frame
  sigpu::cuda::DeviceBuffer<SubframeParams> params;          ///< and per (frame, channel)
  sigpu::cuda::DeviceBuffer<std::uint8_t> output;
  sigpu::cuda::PinnedBuffer<cuda::FrameResultDevice> host_results;
  sigpu::cuda::DeviceBuffer<std::uint32_t>
      failures;  ///< frames that failed (FillFailedFramesKernel)
  sigpu::cuda::PinnedBuffer<std::uint32_t> failures_host;
  /// A packed batch's tables as the host writes them, pinned so that their copies up are
  /// asynchronous.
  sigpu::cuda::PinnedBuffer<FrameEntry> frames_host;
  sigpu::cuda::PinnedBuffer<cuda::FileSpanDevice> file_spans_host;
  sigpu::cuda::PinnedBuffer<cuda::FileMove> moves_host;

  /// With SIGPU_TRACE: an event at the start of the run, which collect() times its kernels from.
  cudaEvent_t trace_origin = nullptr;

  cudaStream_t s() const { return stream.get(); }

  /// Enqueues the decode of the n frames already in `frames` (their files in `d_files` for a
  /// packed buffer, or null) into `target`, with the fast kernels or their plain twin, and the
  /// copy of their results to the host; returns at once. total_samples sizes the scratch. With
  /// `skip`, nothing is decoded if *skip is nonzero when the kernels run (every frame's result
  /// ok, nothing stored). With `check_crc`, every frame's CRC-16 is checked over its span (an
  /// index whose links only numbers made, Links::numbered): a frame that fails it is damaged.
  void launch(const CrcTables* tables, const std::uint8_t* d, std::size_t size, std::uint32_t n,
              unsigned bps, unsigned channels, std::uint64_t total_samples, const PcmTarget& target,
              const cuda::FileSpanDevice* d_files, const std::uint32_t* skip = nullptr,
              const Crc16Words* check_crc = nullptr) {
    launched_ = {tables,        d,      size,    n,    bps,      channels,
                 total_samples, target, d_files, skip, check_crc};
    enqueue(true);
  }
  /// Waits for the work launch() queued; the results of its frames (every frame's error added
  /// to the test log of frame errors, frame_errors_log, with `log`). A decode into narrow
  /// scratch that was refused (NarrowPool) is made again with 32-bit scratch first.
  FrameResults collect(bool log = true);
  /// launch() then collect().
  FrameResults decode(const CrcTables* tables, const std::uint8_t* d, std::size_t size,
                      std::uint32_t n, unsigned bps, unsigned channels, std::uint64_t total_samples,
                      const PcmTarget& target, const cuda::FileSpanDevice* d_files,
                      const Crc16Words* check_crc = nullptr) {
    launch(tables, d, size, n, bps, channels, total_samples, target, d_files, nullptr, check_crc);
    return collect();
  }
  /// Device memory the slot holds.
  std::uint64_t device_bytes() const;

 private:
  /// launch()'s arguments, n = 0 once collected.
  struct Launch {
    const CrcTables* tables = nullptr;
    const std::uint8_t* d = nullptr;
    std::size_t size = 0;
    std::uint32_t n = 0;
    unsigned bps = 0, channels = 0;
    std::uint64_t total_samples = 0;
    PcmTarget target{};
    const cuda::FileSpanDevice* d_files = nullptr;
    const std::uint32_t* skip = nullptr;
    const Crc16Words* check_crc = nullptr;
  };
  /// Queues launched_'s decode, into narrow scratch where parse_narrow allows and `narrow`.
  void enqueue(bool narrow);

  Launch launched_;
  cuda::DecodePath path_ = cuda::DecodePath::automatic;  ///< launched_'s, resolved
  bool plain_ = false, narrow_ = false, traced_ = false;
  cudaEvent_t events_[4] = {};
};

/// The CUDA backend (gpu_engine.hpp): one device's streams, tables and buffers.
struct CudaEngine final : GpuEngine {
  explicit CudaEngine(int device);  ///< makes `device` current and loads the tables

  /// First: it makes the device current before the members below create streams and events,
  /// which belong to the device current at their creation.
  int device_id;
  int sm_count = 1;
  sigpu::cuda::DeviceBuffer<CrcTables> tables;
  sigpu::cuda::DeviceBuffer<Crc16Words> crc_words;  ///< for the links (warp_link.cuh)
  DecodeSlot main;                                  ///< whole-file and batch decodes
  DecodeSlot spare[2];  ///< a batch's packs take main and these in turn (three in flight)
  sigpu::cuda::DeviceBuffer<std::uint64_t> positions, positions_sorted;
  sigpu::cuda::DeviceBuffer<std::uint8_t> sort_temp;
  sigpu::cuda::DeviceBuffer<std::uint32_t> count;
  /// count's copy: in pinned memory, so that its copy does not hold the host until the search
  /// ends (a copy to pageable memory does) and find_candidates_async's `meanwhile` runs beside
  /// the search (the hour's output allocation, 0.14 ms on the H100)
  sigpu::cuda::PinnedBuffer<std::uint32_t> count_host;
  sigpu::cuda::DeviceBuffer<std::uint32_t> links_taken;  ///< LinkSuccessorsKernel's next candidate
  sigpu::cuda::DeviceBuffer<Candidate> cands;
  sigpu::cuda::PinnedBuffer<Candidate> cands_pinned;      ///< find_candidates_async's copy
  sigpu::cuda::PinnedBuffer<Candidate> links_pinned;      ///< launch_links' copy
  sigpu::cuda::DeviceBuffer<std::uint32_t> chain_broken;  ///< ChainFramesKernel's answer
  sigpu::cuda::PinnedBuffer<std::uint32_t> chain_broken_host;
  sigpu::cuda::Stream link_stream;
  sigpu::cuda::Event candidates_built;   ///< on the main stream, after find_candidates
  sigpu::cuda::Event candidates_landed;  ///< on link_stream, after their copy to cands_pinned
  sigpu::cuda::Event chain_checked;      ///< and after chain_broken's copy to the host
  std::unique_ptr<sigpu::cuda::Stager> stager;
  /// The host threads of this engine's copies through staging and its batch plans: engines on
  /// different devices work at once, and one process-wide pool would take their jobs in turn.
  std::unique_ptr<ThreadPool> pool;
  std::vector<std::unique_ptr<DecodeSlot>> stream_slots;           ///< the streaming path's
  sigpu::cuda::DeviceBuffer<cuda::ClipSourceDevice> clip_sources;  ///< decode_clips'

  cudaStream_t s() const { return main.s(); }
  sigpu::cuda::Stager& staging() {
    if (!stager) stager = std::make_unique<sigpu::cuda::Stager>();
    return *stager;
  }
  /// As many threads as the machine has cores, idle between jobs: one engine alone gets them
  /// all, several contend only for the cores and the memory bandwidth.
  ThreadPool& host_pool();

  /// Search on the device, link successors, bring the candidates to the host.
  std::vector<Candidate> search(const std::uint8_t* d, std::size_t size, const Stream& st);
  /// The first half of search(): every header candidate, on the host, without successors.
  std::vector<Candidate> find_candidates(const std::uint8_t* d, std::size_t size, const Stream& st);
  /// find_candidates in two: the candidates' count, with them in `cands` and on their way to
  /// the host (work queued on the main stream from now on may use them), then on the host.
  /// `meanwhile` runs while the GPU searches.
  std::uint32_t find_candidates_async(const std::uint8_t* d, std::size_t size, const Stream& st,
                                      const std::function<void()>& meanwhile = {});
  std::vector<Candidate> landed_candidates(std::uint32_t n);
  /// The second half: links the candidates find_candidates left on the device, on a stream of
  /// its own (so that it overlaps work queued since on the main stream), and brings their
  /// successors into `host`.
  void link_candidates(const std::uint8_t* d, const Stream& st, std::vector<Candidate>& host);
  /// link_candidates in two: the links of the n candidates queued (they may not have reached
  /// the host yet), then brought into `host` (those same candidates).
  void launch_links(const std::uint8_t* d, const Stream& st, std::uint32_t n);
  void links_landed(std::vector<Candidate>& host);
  /// Queues ChainFramesKernel over the n candidates find_candidates_async left in `cands`: their
  /// frames into `frames` when they are one unbroken chain, chain_broken nonzero when not, and
  /// that flag's copy to chain_broken_host, landed at chain_checked.
  void list_chain(std::uint32_t n, const Stream& st, FrameEntry* frames);
  /// The whole pipeline over a file already in device memory; the output stays in `out`.
  DecodeOutput run(const std::uint8_t* d, std::size_t size, const Stream& st,
                   const DecodeOptions& o, const FrameProbe& probe, const HostBytes& host_bytes,
                   sigpu::cuda::DeviceBuffer<std::uint8_t>& out);

  int device() const override { return device_id; }
  std::uint64_t device_bytes() const override;
  bool pinned(const void* host) const override;
  bool on_device(const void* p) const override;
  DecodeOutput decode(std::span<const std::uint8_t> file, const Stream& stream,
                      const DecodeOptions& o, std::span<std::uint8_t> out,
                      const Landed& landed) override;
  std::optional<DecodeOutput> decode_index(std::span<const std::uint8_t> bytes,
                                           const FrameIndex& index, const DecodeOptions& o,
                                           SampleSpan keep) override;
  DecodeOutput decode_streaming(std::span<const std::uint8_t> file, const Stream& stream,
                                const DecodeOptions& o) override;
  std::vector<EngineFile> decode_batch(std::span<const std::span<const std::uint8_t>> files,
                                       std::span<const std::span<std::uint8_t>> outs,
                                       const DecodeOptions& o) override;
  std::vector<bool> decode_clips(std::span<const ClipWindow> windows, const ClipTarget& target,
                                 std::span<void* const> after) override;
  void wait(std::span<void* const> events) override;
  void upload(void* device, const std::uint8_t* host, std::size_t bytes) override;
  void download(std::uint8_t* host, const void* device, std::size_t bytes) override;
  DeviceOutput decode_device(const std::uint8_t* d_file, std::size_t size, const Stream& stream,
                             const DecodeOptions& o) override;
};

}  // namespace sigpu::flac
