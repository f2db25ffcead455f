// The CUDA backend's driver for one file: launches the search, builds the frame index on the
// host, launches the decode (DecodeSlot). Buffers grow when inputs grow and are kept.
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <thread>

#include "core/timer.hpp"
#include "flac/cuda/agent_frame_decode.cuh"
#include "flac/cuda/decode_path.hpp"
#include "flac/cuda/decoder_impl.cuh"
#include "flac/frame_host.hpp"
#include "flac/parallel_decode.hpp"

namespace sigpu::flac {

using sigpu::cuda::DeviceBuffer;
using namespace sigpu::flac::cuda;

namespace cuda {
namespace {
// SIGPU_DECODE_PATH=plain selects the one-thread-per-frame kernel, =warp the fast path with a
// warp parsing each frame, =thread the fast path with the plain residual reader, =flat the flat
// residual loop whatever the frame count (for benchmarks); the default picks by frame count.
DecodePath path_from_environment() {
  const char* v = std::getenv("SIGPU_DECODE_PATH");
  if (v && std::strcmp(v, "plain") == 0) return DecodePath::plain;
  if (v && std::strcmp(v, "warp") == 0) return DecodePath::fast_warp_parse;
  if (v && std::strcmp(v, "thread") == 0) return DecodePath::fast;
  if (v && std::strcmp(v, "flat") == 0) return DecodePath::fast_flat;
  return DecodePath::automatic;
}
std::atomic<DecodePath> path{path_from_environment()};
std::atomic<bool> log_frame_errors_on{false};
std::atomic<int> output_fill{0};
std::mutex log_mutex;
std::vector<std::uint8_t> frame_errors;
NarrowLog narrow_decodes;

/// RestoreSubframesKernel over `subframes` on stream s: its launch for the warps of orders up to
/// kRestoreShortOrders, then the one for the warps of longer orders (whose blocks mostly end at
/// once).
template <typename S, typename... Args>
void launch_restore(std::uint64_t subframes, cudaStream_t s, Args... args) {
  const auto grid = static_cast<unsigned>((subframes + kRestoreBlock - 1) / kRestoreBlock);
  RestoreSubframesKernel<S, false><<<grid, kRestoreBlock, 0, s>>>(args...);
  SIGPU_CUDA_CHECK_LAUNCH();
  RestoreSubframesKernel<S, true><<<grid, kRestoreBlock, 0, s>>>(args...);
  SIGPU_CUDA_CHECK_LAUNCH();
}
}  // namespace

void set_decode_path(DecodePath p) {
  path = p;
}
void set_output_fill(std::uint8_t byte) {
  output_fill = byte;
}
DecodePath decode_path() {
  return path;
}
std::uint8_t output_fill_byte() {
  return static_cast<std::uint8_t>(output_fill.load());
}
void log_frame_errors(const FrameResultDevice* results, std::uint32_t n) {
  if (!log_frame_errors_on) return;
  std::lock_guard lock(log_mutex);
  for (std::uint32_t k = 0; k < n; ++k) frame_errors.push_back(results[k].error);
}
std::vector<std::uint8_t> frame_errors_log() {
  std::lock_guard lock(log_mutex);
  return frame_errors;
}
void clear_frame_errors_log() {
  std::lock_guard lock(log_mutex);
  frame_errors.clear();
  narrow_decodes = {};
  log_frame_errors_on = true;
}
NarrowLog narrow_log() {
  std::lock_guard lock(log_mutex);
  return narrow_decodes;
}
void log_narrow_decode(const std::uint32_t* counters) {
  if (!log_frame_errors_on) return;
  std::lock_guard lock(log_mutex);
  ++narrow_decodes.decodes;
  narrow_decodes.spilled += counters[0];
  narrow_decodes.refused += counters[1] != 0;
}
std::vector<std::uint8_t> restore_on_device(
    std::int32_t* d_samples, std::span<const std::uint32_t> block_sizes, unsigned channels,
    std::span<const SubframeParams> params, std::span<const std::uint8_t> pending,
    std::span<const std::uint8_t> assignments, std::uint8_t* d_pcm, SampleFormat format,
    unsigned bits) {
  const auto n = static_cast<std::uint32_t>(block_sizes.size());
  const bool store = !assignments.empty() && restore_stores_frames(channels, 4);
  if (!assignments.empty() && !d_pcm) throw Error("restore_on_device: assignments without d_pcm");
  std::vector<FrameStateDevice> states(n);
  std::vector<SubframeParams> wide(std::size_t(n) * kMaxChannels);
  std::uint64_t at = 0;
  for (std::uint32_t k = 0; k < n; ++k) {
    const std::uint8_t assignment = assignments.empty() ? 0 : assignments[k];
    states[k] = {at,         block_sizes[k], assignment, static_cast<std::uint8_t>(channels),
                 pending[k], kNoException};
    for (unsigned c = 0; c < channels; ++c) wide[k * kMaxChannels + c] = params[k * channels + c];
    at += block_sizes[k];
  }
  DeviceBuffer<FrameStateDevice> d_states(n);
  DeviceBuffer<SubframeParams> d_params(wide.size());
  SIGPU_CUDA_CHECK(cudaMemcpy(d_states.get(), states.data(), n * sizeof(FrameStateDevice),
                              cudaMemcpyHostToDevice));
  SIGPU_CUDA_CHECK(cudaMemcpy(d_params.get(), wide.data(), wide.size() * sizeof(SubframeParams),
                              cudaMemcpyHostToDevice));
  const PcmTarget target{d_pcm, format, Layout::interleaved, channels, bits, at};
  const std::uint64_t subframes = std::uint64_t(n) * channels;
  launch_restore<std::int32_t>(subframes, nullptr, n, channels, d_samples, 4u, d_states.get(),
                               d_params.get(), target, store, nullptr);
  SIGPU_CUDA_CHECK(cudaMemcpy(states.data(), d_states.get(), n * sizeof(FrameStateDevice),
                              cudaMemcpyDeviceToHost));
  std::vector<std::uint8_t> stored(n);
  for (std::uint32_t k = 0; k < n; ++k) stored[k] = pending[k] && !states[k].pending;
  return stored;
}
std::vector<Candidate> search_on_device(std::span<const std::uint8_t> file,
                                        std::size_t device_offset) {
  CudaEngine impl(0);
  impl.main.file.reserve(device_offset + file.size());
  std::uint8_t* d = impl.main.file.get() + device_offset;
  SIGPU_CUDA_CHECK(cudaMemcpy(d, file.data(), file.size(), cudaMemcpyHostToDevice));
  return impl.search(d, file.size(), parse_stream(file));
}

std::vector<FrameEntry> chain_on_device(std::span<const std::uint8_t> file) {
  CudaEngine impl(0);
  impl.main.file.reserve(file.size());
  SIGPU_CUDA_CHECK(
      cudaMemcpy(impl.main.file.get(), file.data(), file.size(), cudaMemcpyHostToDevice));
  const Stream st = parse_stream(file);
  const std::uint32_t n = impl.find_candidates_async(impl.main.file.get(), file.size(), st);
  if (n == 0) return {};
  impl.main.frames.reserve(n);
  impl.list_chain(n, st, impl.main.frames.get());
  impl.main.stream.synchronize();
  if (*impl.chain_broken_host.get()) return {};
  std::vector<FrameEntry> frames(n);
  SIGPU_CUDA_CHECK(cudaMemcpy(frames.data(), impl.main.frames.get(), n * sizeof(FrameEntry),
                              cudaMemcpyDeviceToHost));
  return frames;
}
}  // namespace cuda

namespace {
const char* parse_name(DecodePath p) {
  return p == DecodePath::fast_warp_parse ? "warp" : p == DecodePath::fast_flat ? "flat" : "thread";
}
}  // namespace

void DecodeSlot::enqueue(bool narrow) {
  const auto [tables, d, size, n, bps, channels, total_samples, target, d_files, skip, check_crc] =
      launched_;
  if (n == 0) return;
  results.reserve(n);
  host_results.reserve(n);
  path_ = resolve_path(decode_path(), n);
  plain_ = path_ == DecodePath::plain || channels > kMaxChannels;
  narrow_ = narrow && !plain_ && parse_narrow(path_, bps, channels);
  // A narrow scratch is sized for 32-bit samples all the same, for the decode made again.
  const unsigned scratch_bytes = narrow_ ? 2 : bps == 32 ? 8 : 4;
  scratch.reserve(total_samples * channels * (bps == 32 ? 8 : 4));
  // SIGPU_TRACE=1: kernel times of the decode, from events.
  traced_ = std::getenv("SIGPU_TRACE") != nullptr;
  if (traced_ && !events_[0])
    for (auto& e : events_) SIGPU_CUDA_CHECK(cudaEventCreate(&e));
  auto mark = [&](int i) {
    if (traced_) SIGPU_CUDA_CHECK(cudaEventRecord(events_[i], s()));
  };
  mark(0);
  if (plain_) {
    const unsigned block = 64, grid = (n + block - 1) / block;
    DecodeFramesKernel<<<grid, block, 0, s()>>>(d, size, tables, frames.get(), n, bps, channels,
                                                scratch.get(), scratch_bytes, target, results.get(),
                                                d_files);
    SIGPU_CUDA_CHECK_LAUNCH();
  } else {
    states.reserve(n);
    params.reserve(std::size_t(n) * kMaxChannels);
    NarrowPool pool;
    if (narrow_) {
      pool.capacity = narrow_pool_entries(n);
      narrow_pool.reserve(pool.capacity);
      narrow_counters.reserve(2);
      narrow_counters_host.reserve(2);
      SIGPU_CUDA_CHECK(cudaMemsetAsync(narrow_counters.get(), 0, 2 * sizeof(std::uint32_t), s()));
      pool.entries = narrow_pool.get();
      pool.counters = narrow_counters.get();
    }
    const DecodePath path = path_;
    if (path == DecodePath::fast_warp_parse) {
      const unsigned warps = 4, grid = (n + warps - 1) / warps;
      ParseFramesKernel<DecodePath::fast_warp_parse><<<grid, warps * 32, 0, s()>>>(
          d, size, tables, frames.get(), n, bps, channels, scratch.get(), scratch_bytes, target,
          results.get(), states.get(), params.get(), d_files, skip, pool);
    } else {
      // One thread per frame: small blocks spread the few warps of a file over every SM (and
      // the flat parse's rings are laid out for blocks of one warp).
      const unsigned block = kFlatRingLanes, grid = (n + block - 1) / block;
      auto kernel = path == DecodePath::fast_flat ? ParseFramesKernel<DecodePath::fast_flat>
                                                  : ParseFramesKernel<DecodePath::fast>;
      kernel<<<grid, block, 0, s()>>>(d, size, tables, frames.get(), n, bps, channels,
                                      scratch.get(), scratch_bytes, target, results.get(),
                                      states.get(), params.get(), d_files, skip, pool);
    }
    SIGPU_CUDA_CHECK_LAUNCH();
    mark(1);
    const std::uint64_t subframes = std::uint64_t(n) * channels;
    const bool store = restore_stores_frames(channels, scratch_bytes);
    const NarrowException* exceptions = narrow_ ? pool.entries : nullptr;
    auto restore = [&](auto sample) {
      launch_restore<decltype(sample)>(subframes, s(), n, channels, scratch.get(), scratch_bytes,
                                       states.get(), params.get(), target, store, exceptions);
    };
    if (narrow_)
      restore(std::int16_t{});
    else
      restore(std::int32_t{});
    mark(2);
    // A narrow decode leaves no frame pending: its restore stores every frame (one it could not
    // store was refused by the parse).
    if (!narrow_) {
      StoreFramesKernel<<<frame_blocks(n), 256, 0, s()>>>(n, channels, scratch.get(), scratch_bytes,
                                                          states.get(), target);
      SIGPU_CUDA_CHECK_LAUNCH();
    }
    if (narrow_)
      SIGPU_CUDA_CHECK(cudaMemcpyAsync(narrow_counters_host.get(), narrow_counters.get(),
                                       2 * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, s()));
  }
  mark(3);
  if (check_crc) {
    CheckFrameCrcKernel<<<frame_blocks(n), kLinkBlock, 0, s()>>>(d, check_crc, frames.get(), n,
                                                                 d_files, results.get());
    SIGPU_CUDA_CHECK_LAUNCH();
  }
  failures.reserve(1);
  failures_host.reserve(1);
  SIGPU_CUDA_CHECK(cudaMemsetAsync(failures.get(), 0, sizeof(std::uint32_t), s()));
  FillFailedFramesKernel<<<frame_blocks(n), 256, 0, s()>>>(n, frames.get(), results.get(), target,
                                                           output_fill_byte(), failures.get());
  SIGPU_CUDA_CHECK_LAUNCH();
  // The last frame's result alone (its end, which the index checks): the others are read only
  // when some frame failed (collect). All of them took the hour 0.68 MB after the kernels.
  SIGPU_CUDA_CHECK(cudaMemcpyAsync(host_results.get() + n - 1, results.get() + n - 1,
                                   sizeof(FrameResultDevice), cudaMemcpyDeviceToHost, s()));
  SIGPU_CUDA_CHECK(cudaMemcpyAsync(failures_host.get(), failures.get(), sizeof(std::uint32_t),
                                   cudaMemcpyDeviceToHost, s()));
}

FrameResults DecodeSlot::collect(bool log) {
  const std::uint32_t n = std::exchange(launched_.n, 0);
  if (n == 0) return {};
  stream.synchronize();
  if (narrow_ && log) cuda::log_narrow_decode(narrow_counters_host.get());
  if (narrow_ && narrow_counters_host.get()[1]) {
    launched_.n = n;
    enqueue(false);
    launched_.n = 0;
    stream.synchronize();
  }
  if (*failures_host.get() || (log && log_frame_errors_on)) {
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(host_results.get(), results.get(),
                                     n * sizeof(FrameResultDevice), cudaMemcpyDeviceToHost, s()));
    stream.synchronize();
  }
  const FrameResultDevice* r = host_results.get();
  FrameResults out;
  if (*failures_host.get()) {
    for (std::uint32_t k = 0; k < n; ++k)
      out.add(k, n, static_cast<FrameError>(r[k].error), r[k].end);
  } else {
    out.last_end = r[n - 1].end;
  }
  if (traced_) {
    float ms[3] = {};
    if (plain_) {
      SIGPU_CUDA_CHECK(cudaEventElapsedTime(&ms[0], events_[0], events_[3]));
      std::fprintf(stderr, "sigpu cuda: %u frames, plain decode kernel %.3f ms\n", n, ms[0]);
    } else {
      for (int i = 0; i < 3; ++i)
        SIGPU_CUDA_CHECK(cudaEventElapsedTime(&ms[i], events_[i], events_[i + 1]));
      std::fprintf(stderr,
                   "sigpu cuda: %u frames, fast decode (%s parse%s): parse %.3f ms, restore "
                   "%.3f ms, store %.3f ms\n",
                   n, parse_name(path_), narrow_ ? ", 16-bit scratch" : "", ms[0], ms[1], ms[2]);
    }
    if (trace_origin) {
      float from = 0, to = 0;
      SIGPU_CUDA_CHECK(cudaEventElapsedTime(&from, trace_origin, events_[0]));
      SIGPU_CUDA_CHECK(cudaEventElapsedTime(&to, trace_origin, events_[3]));
      std::fprintf(stderr, "sigpu cuda: the kernels ran from %.3f to %.3f ms of the run\n", from,
                   to);
    }
    for (auto& e : events_) SIGPU_CUDA_CHECK(cudaEventDestroy(std::exchange(e, nullptr)));
    traced_ = false;
  }
  if (log) cuda::log_frame_errors(host_results.get(), n);
  return out;
}

std::uint64_t DecodeSlot::device_bytes() const {
  return file.capacity() + frames.capacity() * sizeof(FrameEntry) +
         file_spans.capacity() * sizeof(FileSpanDevice) +
         results.capacity() * sizeof(FrameResultDevice) + scratch.capacity() +
         states.capacity() * sizeof(FrameStateDevice) + params.capacity() * sizeof(SubframeParams) +
         narrow_pool.capacity() * sizeof(NarrowException) +
         narrow_counters.capacity() * sizeof(std::uint32_t) + output.capacity();
}

std::vector<Candidate> CudaEngine::search(const std::uint8_t* d, std::size_t size,
                                          const Stream& st) {
  std::vector<Candidate> host = find_candidates(d, size, st);
  link_candidates(d, st, host);
  return host;
}

std::vector<Candidate> CudaEngine::find_candidates(const std::uint8_t* d, std::size_t size,
                                                   const Stream& st) {
  return landed_candidates(find_candidates_async(d, size, st));
}

std::uint32_t CudaEngine::find_candidates_async(const std::uint8_t* d, std::size_t size,
                                                const Stream& st,
                                                const std::function<void()>& meanwhile) {
  const std::size_t from = std::min<std::size_t>(st.audio_offset, size);
  const std::size_t span = size - from;
  std::uint32_t capacity =
      static_cast<std::uint32_t>(std::min<std::size_t>(span / 512 + 4096, 1u << 30));
  std::uint32_t n = 0;
  for (int attempt = 0; attempt < 2; ++attempt) {
    positions.reserve(capacity);
    count.reserve(1);
    SIGPU_CUDA_CHECK(cudaMemsetAsync(count.get(), 0, sizeof(std::uint32_t), s()));
    const std::size_t threads = find_headers_threads(d, size, from);
    const unsigned block = 256;
    const auto grid = static_cast<unsigned>((threads + block - 1) / block);
    if (grid) {
      FindHeadersKernel<<<grid, block, 0, s()>>>(d, size, from, tables.get(), positions.get(),
                                                 count.get(), capacity);
      SIGPU_CUDA_CHECK_LAUNCH();
    }
    count_host.reserve(1);
    SIGPU_CUDA_CHECK(
        cudaMemcpyAsync(count_host.get(), count.get(), sizeof n, cudaMemcpyDeviceToHost, s()));
    if (attempt == 0 && meanwhile) meanwhile();
    main.stream.synchronize();
    n = *count_host.get();
    if (n <= capacity) break;
    capacity = n;  // dense false headers (hostile input): run again with room for all
  }
  if (n == 0) return 0;

  int end_bit = 1;
  while (end_bit < 64 && (std::uint64_t{1} << end_bit) < size) ++end_bit;
  positions_sorted.reserve(n);
  std::size_t temp_bytes = 0;
  SIGPU_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, positions.get(),
                                                  positions_sorted.get(), n, 0, end_bit, s()));
  sort_temp.reserve(temp_bytes);
  SIGPU_CUDA_CHECK(cub::DeviceRadixSort::SortKeys(sort_temp.get(), temp_bytes, positions.get(),
                                                  positions_sorted.get(), n, 0, end_bit, s()));
  cands.reserve(n);
  const unsigned block = 128, grid = (n + block - 1) / block;
  BuildCandidatesKernel<<<grid, block, 0, s()>>>(d, size, tables.get(), positions_sorted.get(), n,
                                                 cands.get());
  SIGPU_CUDA_CHECK_LAUNCH();
  candidates_built.record(s());
  // The candidates' copy to the host goes on the links' stream, ahead of the links (which write
  // their `next`): on the main stream the early decode waited for its 1.7 MB (the hour).
  const cudaStream_t ls = link_stream.get();
  candidates_built.wait_in(ls);
  cands_pinned.reserve(n);
  SIGPU_CUDA_CHECK(cudaMemcpyAsync(cands_pinned.get(), cands.get(), n * sizeof(Candidate),
                                   cudaMemcpyDeviceToHost, ls));
  candidates_landed.record(ls);
  return n;
}

std::vector<Candidate> CudaEngine::landed_candidates(std::uint32_t n) {
  if (n == 0) return {};
  candidates_landed.synchronize();
  return {cands_pinned.get(), cands_pinned.get() + n};
}

void CudaEngine::link_candidates(const std::uint8_t* d, const Stream& st,
                                 std::vector<Candidate>& host) {
  launch_links(d, st, static_cast<std::uint32_t>(host.size()));
  links_landed(host);
}

void CudaEngine::launch_links(const std::uint8_t* d, const Stream& st, std::uint32_t n) {
  if (n == 0) return;
  const cudaStream_t ls = link_stream.get();  // after the candidates' copy to the host
  const unsigned bps = st.has_streaminfo ? st.info.bits_per_sample : 32;
  // A warp per candidate; as many blocks as could be resident at once (8 per SM), their warps
  // taking candidates from a counter until none is left.
  const unsigned link_grid =
      std::min<unsigned>((n + kLinkBlock / 32 - 1) / (kLinkBlock / 32), 8 * sm_count);
  links_taken.reserve(1);
  SIGPU_CUDA_CHECK(cudaMemsetAsync(links_taken.get(), 0, sizeof(std::uint32_t), ls));
  LinkSuccessorsKernel<<<link_grid, kLinkBlock, 0, ls>>>(
      d, crc_words.get(), cands.get(), n, bps, st.has_streaminfo ? st.info.max_frame_size : 0,
      links_taken.get());
  SIGPU_CUDA_CHECK_LAUNCH();
  links_pinned.reserve(n);
  SIGPU_CUDA_CHECK(cudaMemcpyAsync(links_pinned.get(), cands.get(), n * sizeof(Candidate),
                                   cudaMemcpyDeviceToHost, ls));
}

void CudaEngine::list_chain(std::uint32_t n, const Stream& st, FrameEntry* frames) {
  chain_broken.reserve(1);
  chain_broken_host.reserve(1);
  SIGPU_CUDA_CHECK(cudaMemsetAsync(chain_broken.get(), 0, sizeof(std::uint32_t), s()));
  const unsigned block = 256;
  ChainFramesKernel<<<(n + block - 1) / block, block, 0, s()>>>(cands.get(), n, chain_info(st),
                                                                frames, chain_broken.get());
  SIGPU_CUDA_CHECK_LAUNCH();
  SIGPU_CUDA_CHECK(cudaMemcpyAsync(chain_broken_host.get(), chain_broken.get(),
                                   sizeof(std::uint32_t), cudaMemcpyDeviceToHost, s()));
  chain_checked.record(s());
}

void CudaEngine::links_landed(std::vector<Candidate>& host) {
  if (host.empty()) return;
  link_stream.synchronize();
  std::copy(links_pinned.get(), links_pinned.get() + host.size(), host.begin());
}

namespace {

/// More memsets than this for the damaged spans, and the whole output is filled in one.
constexpr std::size_t kMaxFillCalls = 64;

/// Decodes every frame of an index into the output buffer on the device.
///
/// An unbroken stream (chained_frames) is decoded before its index is built: start_chained()
/// tests the candidates as a chain on the device and queues its decode right after the search,
/// and the host builds the index (its walk, and the decodes of the first and last frames on
/// the host) while the GPU decodes; the device must have found the chain unbroken and the index
/// must list it (index_is_chain), or the output is made again from the index. That took the
/// host's index (0.8-1.1 ms of the hour on the H100), the candidates' trip to the host and the
/// frame list's back off the decode's path.
class Executor : public FrameExecutor {
 public:
  Executor(CudaEngine& impl, const std::uint8_t* d, std::size_t size, const DecodeOptions& o,
           DeviceBuffer<std::uint8_t>& out, Pcm& shape, const Stopwatch& clock)
      : impl_(impl), d_(d), size_(size), o_(o), out_(out), shape_(shape), clock_(clock) {}

  /// When (seconds on the clock given) the chain's decode was queued, the last index was ready
  /// and its decode done.
  double launched_at = 0, indexed_at = 0, decoded_at = 0;

  /// Before the search: whether an unbroken stream could be decoded early (not when tests
  /// poison the output with set_output_fill: they check the order that fills it first), and if
  /// so, its output's room, found while the GPU searches.
  void prepare_chained(const Stream& st) {
    const StreamInfo& info = st.info;
    const std::uint64_t bytes = info.total_samples * info.channels * bytes_per_sample(o_.format);
    want_chain_ = !output_fill_byte() && st.has_streaminfo && info.total_samples &&
                  info.channels <= kMaxChannels && decode_path() != DecodePath::plain &&
                  (!o_.max_output_bytes || bytes <= o_.max_output_bytes);
    if (want_chain_) out_.reserve(bytes);
  }

  /// Right after find_candidates_async: tests its n candidates as one chain on the device
  /// (ChainFramesKernel) and queues the decode of its frames, which does nothing if they are
  /// not one. The candidates' copy to the host, the host's listing of the chain and its copy
  /// back (0.7 ms of the hour on the H100) are then off the decode's path.
  void start_chained(std::uint32_t n, const Stream& st) {
    const StreamInfo& info = st.info;
    // A chain has a frame per block (STREAMINFO's smallest block, at least 16 samples); more
    // candidates (false headers) would only make the decode's buffers grow for nothing.
    const std::uint64_t most = info.total_samples / std::max(info.min_block_size, 16u) + 1;
    if (!want_chain_ || n == 0 || n > most) return;
    impl_.main.frames.reserve(n);
    impl_.list_chain(n, st, impl_.main.frames.get());
    chained_ = {out_.get(),           o_.format,         o_.layout, info.channels,
                info.bits_per_sample, info.total_samples};
    chained_frames_ = n;
    impl_.main.launch(impl_.tables.get(), d_, size_, chained_frames_, info.bits_per_sample,
                      info.channels, info.total_samples, chained_, nullptr,
                      impl_.chain_broken.get());
    launched_at = clock_.seconds();
  }

  void prepare_output(const FrameIndex& index) override {
    indexed_at = clock_.seconds();
    shape_pcm(shape_, index, o_);
    const std::uint64_t bytes = output_bytes(index, o_.format, o_.max_output_bytes);
    if (chained_frames_) {
      use_chained_ = same_as_chained(index);
      if (use_chained_) return;  // its frames cover the output end to end
      drop_chained();
    }
    fill_gaps(index, bytes);
  }

  FrameResults decode(const FrameIndex& index) override {
    if (use_chained_) {
      use_chained_ = false;
      FrameResults results = impl_.main.collect();
      chained_frames_ = 0;
      // The chain's last frame was decoded without an end to meet; the index has its end from
      // the host's decode of it, and the two must agree (as they do unless the bytes changed).
      if (!results.last_end || results.last_end == index.frames.back().end) {
        decoded_at = clock_.seconds();
        return results;
      }
      fill_gaps(index, output_bytes(index, o_.format, o_.max_output_bytes));
    }
    const auto n = static_cast<std::uint32_t>(index.frames.size());
    if (n == 0) return {};
    impl_.main.frames.reserve(n);
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(impl_.main.frames.get(), index.frames.data(),
                                     n * sizeof(FrameEntry), cudaMemcpyHostToDevice, impl_.s()));
    FrameResults results =
        impl_.main.decode(impl_.tables.get(), d_, size_, n, index.bits_per_sample, index.channels,
                          index.total_samples, target(), nullptr);
    decoded_at = clock_.seconds();
    return results;
  }

 private:
  PcmTarget target() const {
    return {out_.get(),    o_.format, o_.layout, shape_.channels, shape_.bits_per_sample,
            shape_.samples};
  }

  /// Whether the index lists the chain's frames into the same output (the last frame's end
  /// aside, see decode).
  bool same_as_chained(const FrameIndex& index) const {
    const PcmTarget t = target();
    impl_.chain_checked.synchronize();
    return !*impl_.chain_broken_host.get() && index_is_chain(index, chained_frames_) &&
           t.data == chained_.data && t.channels == chained_.channels &&
           t.bits_per_sample == chained_.bits_per_sample && t.samples == chained_.samples;
  }

  /// Waits for the chain's decode and forgets it (and its errors: not a round of the index's).
  void drop_chained() {
    impl_.main.collect(false);
    chained_frames_ = 0;
  }

  /// Silence where no frame goes (damaged spans); a frame that fails is silenced after the
  /// decode (FillFailedFramesKernel). Clearing the whole output instead took 0.25 ms of the
  /// hour's 7.6 (H100). Tests poison the whole output (set_output_fill) to catch a sample no
  /// kernel writes; a hostile stream's many gaps are filled in one call.
  void fill_gaps(const FrameIndex& index, std::uint64_t bytes) {
    out_.reserve(bytes);
    if (!bytes) return;
    const std::uint8_t fill = output_fill_byte();
    const std::vector<SampleSpan> gaps = uncovered_samples(index);
    const unsigned runs = o_.layout == Layout::planar ? index.channels : 1;
    if (fill || gaps.size() * runs > kMaxFillCalls) {
      SIGPU_CUDA_CHECK(cudaMemsetAsync(out_.get(), fill, bytes, impl_.s()));
      return;
    }
    const std::size_t value_bytes = bytes_per_sample(o_.format);
    const PcmTarget shape = target();
    for (const SampleSpan& g : gaps)
      for (unsigned c = 0; c < runs; ++c)
        SIGPU_CUDA_CHECK(
            cudaMemsetAsync(out_.get() + pcm_offset(shape, g.first, c) * value_bytes, 0,
                            (g.end - g.first) * value_bytes * (index.channels / runs), impl_.s()));
  }

  PcmTarget chained_;
  std::uint32_t chained_frames_ = 0;  ///< frames of the chain's decode in flight, or 0
  bool want_chain_ = false, use_chained_ = false;

  CudaEngine& impl_;
  const std::uint8_t* d_;
  std::size_t size_;
  const DecodeOptions& o_;
  DeviceBuffer<std::uint8_t>& out_;
  Pcm& shape_;
  const Stopwatch& clock_;
};

/// A FrameProbe that answers the probes made beforehand (prefetch) from memory. The index's
/// first probes (the first frame, which sets the stream's format, and the last, which no link
/// verifies) each copy a frame's bytes from the device and decode them on the host: 0.25 ms of
/// the hour on the H100 that followed the links, made instead while the GPU still links.
class ProbeMemo {
 public:
  explicit ProbeMemo(const FrameProbe& probe) : probe_(probe) {}

  std::optional<std::uint64_t> operator()(const Candidate& c, unsigned bps) const {
    for (const Answer& a : answers_)
      if (a.pos == c.pos && a.bps == bps) return a.end;
    return probe_(c, bps);
  }

  /// Probes the first candidate at the audio's start and the last, as the index will.
  void prefetch(const std::vector<Candidate>& cands, const Stream& st,
                const std::optional<StreamParams>& params) {
    auto first = std::lower_bound(cands.begin(), cands.end(), st.audio_offset,
                                  [](const Candidate& c, std::uint64_t p) { return c.pos < p; });
    if (first == cands.end()) return;
    unsigned bps = 0;
    try {
      bps = stream_format(*first, st, params).bits_per_sample;
    } catch (const Error&) {
      return;  // the index reports it
    }
    answers_.push_back({first->pos, bps, probe_(*first, bps)});
    const Candidate& last = cands.back();
    const unsigned last_bps = last.bits_per_sample ? last.bits_per_sample : bps;
    if (&last != &*first) answers_.push_back({last.pos, last_bps, probe_(last, last_bps)});
  }

 private:
  struct Answer {
    std::uint64_t pos;
    unsigned bps;
    std::optional<std::uint64_t> end;
  };
  const FrameProbe& probe_;
  std::vector<Answer> answers_;
};

}  // namespace

/// The whole pipeline over a file already in device memory; the output stays there.
DecodeOutput CudaEngine::run(const std::uint8_t* d, std::size_t size, const Stream& st,
                             const DecodeOptions& o, const FrameProbe& probe,
                             const HostBytes& host_bytes, DeviceBuffer<std::uint8_t>& out) {
  Stopwatch clock;
  // SIGPU_TRACE=1: the kernels' times are also given from the run's start (DecodeSlot).
  cudaEvent_t origin = nullptr;
  if (std::getenv("SIGPU_TRACE")) {
    SIGPU_CUDA_CHECK(cudaEventCreate(&origin));
    SIGPU_CUDA_CHECK(cudaEventRecord(origin, s()));
    main.trace_origin = origin;
  }
  DecodeOutput r;
  Executor executor(*this, d, size, o, out, r.pcm, clock);
  const std::uint32_t n = find_candidates_async(d, size, st, [&] { executor.prepare_chained(st); });
  executor.start_chained(n, st);
  // The links run beside the decode of an unbroken stream, which needs only the candidates; the
  // index needs the links.
  launch_links(d, st, n);
  std::vector<Candidate> cands_host = landed_candidates(n);
  const double t_search = clock.seconds();
  ProbeMemo memo(probe);
  memo.prefetch(cands_host, st, o.params);
  links_landed(cands_host);
  const double t_links = clock.seconds();
  ParallelDecodeResult pr = decode_in_rounds(
      cands_host, st, o.params, size,
      [&memo](const Candidate& c, unsigned bps) { return memo(c, bps); }, executor, host_bytes);
  r.damage = std::move(pr.damage);
  r.warnings = std::move(pr.index.warnings);
  r.frames = pr.index.frames.size();
  r.frames_numbered = pr.index.frames_numbered;
  // SIGPU_TRACE=1 prints where the time goes (each phase ends in a stream synchronize).
  if (origin) {
    std::fprintf(stderr,
                 "sigpu cuda: %zu candidates, %zu frames; early decode launched at %.2f ms, "
                 "search %.2f ms, links landed at %.2f ms, index %.2f ms, decode %.2f ms, "
                 "results %.2f ms\n",
                 cands_host.size(), pr.index.frames.size(), executor.launched_at * 1e3,
                 t_search * 1e3, t_links * 1e3, (executor.indexed_at - t_search) * 1e3,
                 (executor.decoded_at - executor.indexed_at) * 1e3,
                 (clock.seconds() - executor.decoded_at) * 1e3);
    main.trace_origin = nullptr;
    SIGPU_CUDA_CHECK(cudaEventDestroy(origin));
  }
  return r;
}

namespace {
int make_current(int device) {
  SIGPU_CUDA_CHECK(cudaSetDevice(device));
  return device;
}
}  // namespace

CudaEngine::CudaEngine(int d) : device_id(make_current(d)) {
  tables.reserve(1);
  static constexpr CrcTables kTables = make_crc_tables();
  SIGPU_CUDA_CHECK(cudaMemcpy(tables.get(), &kTables, sizeof kTables, cudaMemcpyHostToDevice));
  crc_words.reserve(1);
  SIGPU_CUDA_CHECK(
      cudaMemcpy(crc_words.get(), &kCrc16Words, sizeof kCrc16Words, cudaMemcpyHostToDevice));
  SIGPU_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, device_id));
  // kRestoreBlocksPerSm blocks of the restore need 187 KB of shared memory per SM, and the ten
  // blocks per SM of the flat parse (the hour's 1,319 on 132 SMs) 220 KB, with a block of the
  // links beside them 224 KB: all they can have.
  for (const void* kernel :
       {reinterpret_cast<const void*>(RestoreSubframesKernel<std::int32_t, false>),
        reinterpret_cast<const void*>(RestoreSubframesKernel<std::int32_t, true>),
        reinterpret_cast<const void*>(RestoreSubframesKernel<std::int16_t, false>),
        reinterpret_cast<const void*>(RestoreSubframesKernel<std::int16_t, true>),
        reinterpret_cast<const void*>(ParseFramesKernel<DecodePath::fast_flat>),
        reinterpret_cast<const void*>(ParseFramesKernel<DecodePath::fast_warp_parse>)})
    SIGPU_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                          cudaSharedmemCarveoutMaxShared));
}

std::unique_ptr<GpuEngine> GpuEngine::create(int device) {
  if (cuda_devices().empty())
    throw UnsupportedError("the cuda backend needs a CUDA device, and none is present");
  return std::make_unique<CudaEngine>(device);
}

std::uint64_t CudaEngine::device_bytes() const {
  std::uint64_t n = main.device_bytes() + spare[0].device_bytes() + spare[1].device_bytes() +
                    (positions.capacity() + positions_sorted.capacity()) * sizeof(std::uint64_t) +
                    sort_temp.capacity() + cands.capacity() * sizeof(Candidate) +
                    links_taken.capacity() * sizeof(std::uint32_t) +
                    clip_sources.capacity() * sizeof(ClipSourceDevice);
  for (const auto& slot : stream_slots) n += slot->device_bytes();
  return n;
}

ThreadPool& CudaEngine::host_pool() {
  if (!pool) pool = std::make_unique<ThreadPool>();
  return *pool;
}

bool CudaEngine::pinned(const void* host) const {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, host) != cudaSuccess) {
    (void)cudaGetLastError();  // not a pointer the driver knows: ordinary memory
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

bool CudaEngine::on_device(const void* p) const {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    (void)cudaGetLastError();
    return false;
  }
  return (a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged) &&
         a.device == device_id;
}

DecodeOutput CudaEngine::decode(std::span<const std::uint8_t> file, const Stream& stream,
                                const DecodeOptions& o, std::span<std::uint8_t> out,
                                const Landed& landed) {
  SIGPU_CUDA_CHECK(cudaSetDevice(device_id));
  ThreadPool& pool = host_pool();
  main.file.reserve(file.size());
  if (pinned(file.data()))
    SIGPU_CUDA_CHECK(
        cudaMemcpyAsync(main.file.get(), file.data(), file.size(), cudaMemcpyHostToDevice, s()));
  else
    staging().upload(main.file.get(), file.data(), file.size(), s(), pool);
  DecodeOutput r = run(
      main.file.get(), file.size(), stream, o, host_probe(file), [file] { return file; },
      main.output);
  const std::size_t bytes = r.pcm.samples * r.pcm.channels * bytes_per_sample(o.format);
  const bool into = !out.empty() && out.size() == bytes;
  if (!into) r.pcm.bytes.resize(bytes);
  std::uint8_t* dst = into ? out.data() : r.pcm.bytes.data();
  if (into && pinned(dst)) {
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(dst, main.output.get(), bytes, cudaMemcpyDeviceToHost, s()));
    main.stream.synchronize();
    if (landed) landed(r, dst, bytes);
  } else {
    staging().download(dst, main.output.get(), bytes, s(), pool,
                       [&](std::size_t off, std::size_t len) {
                         if (landed) landed(r, dst, off + len);
                       });
  }
  return r;
}

std::optional<DecodeOutput> CudaEngine::decode_index(std::span<const std::uint8_t> bytes,
                                                     const FrameIndex& index,
                                                     const DecodeOptions& o, SampleSpan keep) {
  SIGPU_CUDA_CHECK(cudaSetDevice(device_id));
  const auto n = static_cast<std::uint32_t>(index.frames.size());
  if (n == 0) return std::nullopt;
  ThreadPool& pool = host_pool();
  main.file.reserve(bytes.size());
  staging().upload(main.file.get(), bytes.data(), bytes.size(), s(), pool);
  main.frames.reserve(n);
  SIGPU_CUDA_CHECK(cudaMemcpyAsync(main.frames.get(), index.frames.data(), n * sizeof(FrameEntry),
                                   cudaMemcpyHostToDevice, s()));
  main.output.reserve(output_bytes(index, o.format, o.max_output_bytes));
  const PcmTarget target{main.output.get(),     o.format,           o.layout, index.channels,
                         index.bits_per_sample, index.total_samples};
  const FrameResults r =
      main.decode(tables.get(), main.file.get(), bytes.size(), n, index.bits_per_sample,
                  index.channels, index.total_samples, target, nullptr);
  if (!r.failed.empty() || r.last_end != index.frames.back().end) return std::nullopt;
  DecodeOutput out;
  shape_pcm(out.pcm, index, o);
  out.pcm.samples = keep.end - keep.first;
  out.frames = n;
  out.frames_numbered = index.frames_numbered;
  // Only the kept samples come back: one run of them interleaved, one per channel planar.
  const std::size_t v = bytes_per_sample(o.format);
  const bool planar = o.layout == Layout::planar;
  const std::size_t run = out.pcm.samples * v * (planar ? 1 : index.channels);
  out.pcm.bytes.resize(run * (planar ? index.channels : 1));
  for (unsigned c = 0; c < (planar ? index.channels : 1u); ++c)
    staging().download(out.pcm.bytes.data() + c * run,
                       main.output.get() + pcm_offset(target, keep.first, c) * v, run, s(), pool);
  return out;
}

void CudaEngine::wait(std::span<void* const> events) {
  SIGPU_CUDA_CHECK(cudaSetDevice(device_id));
  for (void* e : events) SIGPU_CUDA_CHECK(cudaStreamWaitEvent(s(), static_cast<cudaEvent_t>(e)));
}

void CudaEngine::upload(void* device, const std::uint8_t* host, std::size_t bytes) {
  SIGPU_CUDA_CHECK(cudaSetDevice(device_id));
  staging().upload(device, host, bytes, s(), host_pool());
  main.stream.synchronize();
}

void CudaEngine::download(std::uint8_t* host, const void* device, std::size_t bytes) {
  SIGPU_CUDA_CHECK(cudaSetDevice(device_id));
  staging().download(host, device, bytes, s(), host_pool());
}

DeviceOutput CudaEngine::decode_device(const std::uint8_t* d_file, std::size_t size,
                                       const Stream& stream, const DecodeOptions& o) {
  SIGPU_CUDA_CHECK(cudaSetDevice(device_id));
  if (reinterpret_cast<std::uintptr_t>(d_file) % 4)
    throw Error("decode_device: the compressed data must be 4-byte aligned in device memory");
  // Frames the search cannot verify are checked on the host from a copy of their bytes.
  FrameProbe probe = [&](const Candidate& c, unsigned bps) -> std::optional<std::uint64_t> {
    const std::size_t len =
        std::min<std::size_t>(size - c.pos, 4 * search_span(c, bps, 0) + (1 << 16));
    std::vector<std::uint8_t> bytes(len);
    SIGPU_CUDA_CHECK(cudaMemcpy(bytes.data(), d_file + c.pos, len, cudaMemcpyDeviceToHost));
    Candidate local = c;
    local.pos = 0;
    auto end = host_probe(bytes)(local, bps);
    if (!end) return std::nullopt;
    return c.pos + *end;
  };
  // Only a stream that traps the CRC-16 links needs all of its bytes on the host.
  std::vector<std::uint8_t> host_copy;
  HostBytes host_bytes = [&]() -> std::span<const std::uint8_t> {
    if (host_copy.empty()) {
      host_copy.resize(size);
      SIGPU_CUDA_CHECK(cudaMemcpy(host_copy.data(), d_file, size, cudaMemcpyDeviceToHost));
    }
    return host_copy;
  };
  auto buffer = std::make_shared<DeviceBuffer<std::uint8_t>>();
  DeviceOutput d;
  d.out = run(d_file, size, stream, o, probe, host_bytes, *buffer);
  main.stream.synchronize();
  d.data = buffer->get();
  d.owner = std::move(buffer);
  return d;
}

}  // namespace sigpu::flac
