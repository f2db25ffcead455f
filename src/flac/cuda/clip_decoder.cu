// CudaEngine::decode_clips: the windows of a clip batch, each with the index the host found (its
// frames' CRC-16 checked here where the host linked them by numbers alone), laid side by side in
// one device buffer (through pinned staging), their frames decoded in one set of launches into raw
// samples, and ClipStoreKernel writing every clip's samples into the batch in its format and
// layout. No PCM passes through the host.
#include <algorithm>
#include <map>
#include <utility>

#include "flac/clip_store.hpp"
#include "flac/cuda/decoder_impl.cuh"

namespace sigpu::flac {

using namespace sigpu::flac::cuda;

namespace {

constexpr unsigned kClipBlock = 256;
/// The most clips one ClipStoreKernel launch takes (its grid's y).
constexpr std::size_t kClipsPerLaunch = 65535;

/// Block (x, y): samples [x * kClipBlock, ...) of clip sources[y], every channel, into a batch
/// of format F.
template <SampleFormat F>
__global__ void ClipStoreKernel(const std::int32_t* pcm, const ClipSourceDevice* sources,
                                ClipTarget target, unsigned channels, unsigned bps) {
  const ClipSourceDevice src = sources[blockIdx.y];
  const std::uint64_t i = std::uint64_t(blockIdx.x) * kClipBlock + threadIdx.x;
  if (i >= target.length) return;
  const std::int32_t* frame = i < src.available ? pcm + (src.sample + i) * channels : nullptr;
  store_clip_sample<F>(target, src.clip, i, frame, channels, bps);
}

}  // namespace

std::vector<bool> CudaEngine::decode_clips(std::span<const ClipWindow> windows,
                                           const ClipTarget& target, std::span<void* const> after) {
  SIGPU_CUDA_CHECK(cudaSetDevice(device_id));
  std::vector<bool> ok(windows.size(), false);
  if (windows.empty() || !target.length) return ok;
  ThreadPool& pool = host_pool();
  DecodeSlot& slot = main;
  sigpu::cuda::DeviceBuffer<ClipSourceDevice>& sources = clip_sources;

  auto run_pack = [&](const std::vector<std::size_t>& pack, unsigned channels, unsigned bps) {
    std::vector<std::uint64_t> in_at(pack.size()), sample_at(pack.size());
    std::uint64_t in_bytes = 0, samples = 0, frames = 0;
    for (std::size_t j = 0; j < pack.size(); ++j) {
      const ClipWindow& w = windows[pack[j]];
      in_at[j] = in_bytes;
      sample_at[j] = samples;
      in_bytes = align_up(in_bytes + w.bytes.size(), kPackAlign);
      samples += w.index->total_samples;
      frames += w.index->frames.size();
    }
    // The windows go up from where they are (memory-mapped files), the gaps as zeros.
    std::vector<sigpu::cuda::HostPiece> in_pieces;
    std::vector<FrameEntry> entries(frames);
    std::vector<FileSpanDevice> spans(frames);
    std::vector<std::uint32_t> first_frame(pack.size() + 1);
    for (std::size_t j = 0, f = 0; j < pack.size(); ++j) {
      const ClipWindow& w = windows[pack[j]];
      in_pieces.push_back({const_cast<std::uint8_t*>(w.bytes.data()), w.bytes.size()});
      const std::uint64_t next = j + 1 < pack.size() ? in_at[j + 1] : in_bytes;
      in_pieces.push_back({nullptr, next - in_at[j] - w.bytes.size()});
      first_frame[j] = static_cast<std::uint32_t>(f);
      for (FrameEntry e : w.index->frames) {
        e.out_sample += sample_at[j];
        spans[f] = {in_at[j], w.bytes.size()};
        entries[f++] = e;
      }
    }
    first_frame[pack.size()] = static_cast<std::uint32_t>(frames);
    slot.file.reserve(in_bytes);
    staging().upload(slot.file.get(), in_pieces, s(), pool);
    const auto count = static_cast<std::uint32_t>(frames);
    slot.frames.reserve(count);
    slot.file_spans.reserve(count);
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(slot.frames.get(), entries.data(), count * sizeof(FrameEntry),
                                     cudaMemcpyHostToDevice, s()));
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(slot.file_spans.get(), spans.data(),
                                     count * sizeof(FileSpanDevice), cudaMemcpyHostToDevice, s()));
    const std::uint64_t pcm_bytes = samples * channels * sizeof(std::int32_t);
    slot.output.reserve(pcm_bytes);
    SIGPU_CUDA_CHECK(cudaMemsetAsync(slot.output.get(), output_fill_byte(), pcm_bytes, s()));
    const PcmTarget raw{
        slot.output.get(), SampleFormat::raw32, Layout::interleaved, channels, bps, samples};
    const bool check_crc = std::any_of(pack.begin(), pack.end(),
                                       [&](std::size_t k) { return !windows[k].crc_checked; });
    const FrameResults results =
        slot.decode(tables.get(), slot.file.get(), in_bytes, count, bps, channels, samples, raw,
                    slot.file_spans.get(), check_crc ? crc_words.get() : nullptr);
    // A window is good when none of its frames failed (each was decoded with the end its index
    // gives; the last one's end is checked here).
    std::vector<bool> good(pack.size(), true);
    for (const FrameFailure& x : results.failed) {
      const auto j = std::upper_bound(first_frame.begin(), first_frame.end(), x.frame) -
                     first_frame.begin() - 1;
      good[j] = false;
    }
    if (results.last_end != windows[pack.back()].index->frames.back().end) good.back() = false;
    std::vector<ClipSourceDevice> stored;
    for (std::size_t j = 0; j < pack.size(); ++j) {
      const ClipWindow& w = windows[pack[j]];
      if (!good[j]) continue;
      ok[pack[j]] = true;
      const std::uint64_t total = w.index->total_samples;
      const std::uint64_t first = std::min(w.first, total);
      stored.push_back({sample_at[j] + first, total - first, w.clip});
    }
    if (stored.empty()) return;
    sources.reserve(stored.size());
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(sources.get(), stored.data(),
                                     stored.size() * sizeof(ClipSourceDevice),
                                     cudaMemcpyHostToDevice, s()));
    // Only the batch's writes wait for its other users: the uploads and the decoding above
    // overlap their work.
    wait(std::exchange(after, {}));
    const auto* pcm = reinterpret_cast<const std::int32_t*>(slot.output.get());
    const auto blocks = static_cast<unsigned>((target.length + kClipBlock - 1) / kClipBlock);
    for (std::size_t at = 0; at < stored.size(); at += kClipsPerLaunch) {
      const dim3 grid(blocks, static_cast<unsigned>(std::min(kClipsPerLaunch, stored.size() - at)));
      with_clip_format(target.format, [&](auto f) {
        ClipStoreKernel<f()>
            <<<grid, kClipBlock, 0, s()>>>(pcm, sources.get() + at, target, channels, bps);
      });
      SIGPU_CUDA_CHECK_LAUNCH();
    }
    // The next pack reuses the output, the sources and the host vectors.
    main.stream.synchronize();
  };

  ShapeGroups groups;
  for (std::size_t k = 0; k < windows.size(); ++k) {
    const FrameIndex& x = *windows[k].index;
    if (!x.frames.empty()) groups[{x.channels, x.bits_per_sample}].push_back(k);
  }
  const auto need = [&](std::size_t k) {
    const FrameIndex& x = *windows[k].index;
    return align_up(windows[k].bytes.size(), kPackAlign) +
           x.total_samples * x.channels * (x.bits_per_sample == 32 ? 12 : 8);
  };
  for_each_pack(groups, need, run_pack);
  return ok;
}

}  // namespace sigpu::flac
