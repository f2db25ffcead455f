// CudaEngine::decode_batch: many files, packed into shared launches. The host parses,
// searches and indexes every file (one per core, a wave of files ahead of the device); files of
// one channel count and bit depth are
// then laid side by side in one device buffer, their frames in one list (each frame knowing its
// file's span, so reads stop where the file ends, as for the file alone), and decoded by one set
// of kernels into one interleaved output, from which every file's PCM is copied back.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <map>
#include <optional>

#include "core/timer.hpp"

#include "flac/cuda/decoder_impl.cuh"
#include "flac/cuda/pack_timeline.cuh"
#include "flac/cuda/spread_kernel.cuh"

namespace sigpu::flac {

using namespace sigpu::flac::cuda;

namespace {

/// A batch file after the host's part: metadata, frame search, index.
struct PlannedFile {
  Stream stream;
  FrameIndex index;
  bool packed = false;  ///< decoded in a shared launch (else alone, or failed)
};

}  // namespace

std::vector<EngineFile> CudaEngine::decode_batch(
    std::span<const std::span<const std::uint8_t>> files,
    std::span<const std::span<std::uint8_t>> outs, const DecodeOptions& o) {
  SIGPU_CUDA_CHECK(cudaSetDevice(device_id));
  Stopwatch clock;
  ThreadPool& pool = host_pool();
  const std::size_t n = files.size();
  std::vector<EngineFile> out(n);
  std::vector<PlannedFile> plan(n);
  // The host's part, one file per core: parse, search (each file alone), index. The search links
  // frames by their numbers alone (its pass reads headers, not every byte's CRC); the decode
  // checks every frame's CRC-16, and a file with any frame that fails is decoded again alone,
  // by the single-file path and its verified links.
  auto plan_files = [&](std::size_t first, std::size_t end) {
    pool.parallel_for(
        end - first,
        [&](std::size_t b, std::size_t e) {
          ThreadPool alone(1);
          for (std::size_t i = first + b; i < first + e; ++i) {
            try {
              PlannedFile& p = plan[i];
              p.stream = parse_stream(files[i]);
              std::vector<Candidate> cands = search_headers_cpu(files[i], p.stream, alone);
              p.index = build_frame_index(cands, p.stream, o.params, files[i].size(),
                                          host_probe(files[i]));
              output_bytes(p.index, o.format, o.max_output_bytes);  // throws over the limit
              // Packed files share one interleaved output; planar output is per file.
              p.packed = o.layout == Layout::interleaved && !p.index.frames.empty();
            } catch (const std::exception& ex) {
              out[i].error = ex.what();
            }
          }
        },
        1);
  };
  // The files in waves of up to kWaveBytes: the next wave is planned on the host while this
  // one's packs are copied and decoded. The first waves are smaller (from kFirstWaveBytes,
  // doubling), so that the device starts after a short plan instead of a whole wave's.
  constexpr std::uint64_t kWaveBytes = std::uint64_t{256} << 20;
  constexpr std::uint64_t kFirstWaveBytes = std::uint64_t{16} << 20;
  std::vector<std::size_t> waves{0};
  for (std::uint64_t i = 0, bytes = 0, limit = kFirstWaveBytes; i < n; ++i) {
    bytes += files[i].size();
    if (bytes >= limit && i + 1 < n) {
      waves.push_back(i + 1);
      bytes = 0;
      limit = std::min(2 * limit, kWaveBytes);
    }
  }
  waves.push_back(n);

  std::vector<std::size_t> alone;  // decoded by decode(): planar output, empty, or relinked
  const std::size_t value_bytes = bytes_per_sample(o.format);
  // SIGPU_TRACE=1: where a batch's time goes (the host's wait for plans, each pack's stages).
  const bool traced = std::getenv("SIGPU_TRACE") != nullptr;
  PackTimeline timeline(traced, main.s());
  double t_plan = 0;
  std::size_t packs = 0;

  // A pack whose decode is launched and not yet collected, on its slot.
  struct Pending {
    DecodeSlot* slot = nullptr;
    std::size_t number = 0;  ///< of the batch's packs
    std::vector<std::size_t> pack;
    std::vector<std::uint64_t> first_frame;  ///< per file of the pack, in the pack's frames
    unsigned channels = 0;
  };
  std::optional<Pending> pending;

  // Waits for a launched pack's decode and queues its PCM's way down: every file's PCM in one
  // pass (a file with a failed frame is skipped and decoded alone later), into the caller's
  // output where it has the PCM's size.
  auto finish_pack = [&](const Pending& p) {
    DecodeSlot& slot = *p.slot;
    const FrameResults results = slot.collect();
    const std::vector<std::size_t>& pack = p.pack;
    std::vector<DecodeOutput> decoded(pack.size());
    std::vector<sigpu::cuda::HostPiece> out_pieces(pack.size());
    for (std::size_t j = 0; j < pack.size(); ++j) {
      const FrameIndex& index = plan[pack[j]].index;
      // The file's failures, numbered from its own first frame (the last end is not needed:
      // every frame of a packed file is decoded with its indexed end).
      FrameResults own;
      const auto lo = static_cast<std::uint32_t>(p.first_frame[j]);
      const auto hi = static_cast<std::uint32_t>(lo + index.frames.size());
      for (auto it =
               std::lower_bound(results.failed.begin(), results.failed.end(), lo,
                                [](const FrameFailure&x, std::uint32_t k) { return x.frame < k; });
           it != results.failed.end() && it->frame < hi; ++it)
        own.failed.push_back({it->frame - lo, it->error});
      DecodeOutput& r = decoded[j];
      out_pieces[j].size = index.total_samples * p.channels * value_bytes;
      if (!own.failed.empty()) {  // damage, or a link the numbers made falsely: decoded alone
        plan[pack[j]].packed = false;
        alone.push_back(pack[j]);
        continue;
      }
      shape_pcm(r.pcm, index, o);
      r.warnings = index.warnings;
      r.frames = index.frames.size();
      r.frames_numbered = index.frames_numbered;
      const std::span<std::uint8_t> dst = outs.empty() ? std::span<std::uint8_t>{} : outs[pack[j]];
      if (!dst.empty() && dst.size() == out_pieces[j].size) {
        out_pieces[j].data = dst.data();
      } else {
        r.pcm.bytes.resize(out_pieces[j].size);
        out_pieces[j].data = r.pcm.bytes.data();
      }
    }
    // Outputs in pinned memory come down by DMA, each where it is; any other through staging.
    timeline.mark(p.number, PackTimeline::kDownStart, slot.s());
    const bool dma = std::all_of(out_pieces.begin(), out_pieces.end(),
                                 [&](const auto& x) { return !x.data || pinned(x.data); });
    if (dma) {
      // Outputs that follow each other in host memory come down in one copy.
      std::uint64_t at = 0;
      for (std::size_t j = 0, k; j < out_pieces.size(); j = k) {
        auto* first = static_cast<std::uint8_t*>(out_pieces[j].data);
        std::uint64_t run = out_pieces[j].size;
        for (k = j + 1; k < out_pieces.size() && first && out_pieces[k].data == first + run; ++k)
          run += out_pieces[k].size;
        if (first)
          SIGPU_CUDA_CHECK(cudaMemcpyAsync(first, slot.output.get() + at, run,
                                           cudaMemcpyDeviceToHost, slot.s()));
        at += run;
      }
    } else {
      staging().download(out_pieces, slot.output.get(), slot.s(), pool);
    }
    timeline.mark(p.number, PackTimeline::kDownEnd, slot.s());
    for (std::size_t j = 0; j < pack.size(); ++j) {
      const std::size_t i = pack[j];
      if (!plan[i].packed) continue;
      out[i].stream = std::move(plan[i].stream);
      out[i].out = std::move(decoded[j]);
    }
  };

  // Copies a pack up and launches its decode; the pack before it is finished while this one
  // goes up and decodes, so that one pack's upload, another's decode and a third's download
  // overlap. That takes three slots: with two, a pack's upload would wait for the download two
  // packs before, which is queued only once that pack is collected.
  auto run_pack = [&](const std::vector<std::size_t>& pack, unsigned channels, unsigned bps) {
    std::vector<std::uint64_t> in_at(pack.size()), sample_at(pack.size());
    std::uint64_t end = 0, samples = 0, frames = 0;
    for (std::size_t j = 0; j < pack.size(); ++j) {
      // Every file starts aligned: the kernels read whole words from a file's start.
      in_at[j] = align_up(end, kPackAlign);
      end = in_at[j] + files[pack[j]].size();
      sample_at[j] = samples;
      samples += plan[pack[j]].index.total_samples;
      frames += plan[pack[j]].index.frames.size();
    }
    const std::uint64_t in_bytes = align_up(end, kPackAlign);
    // The files go up in place, without a packed host copy; the alignment gaps go up as zeros.
    std::vector<sigpu::cuda::HostPiece> in_pieces;
    for (std::size_t j = 0; j < pack.size(); ++j) {
      const std::span<const std::uint8_t> f = files[pack[j]];
      in_pieces.push_back({const_cast<std::uint8_t*>(f.data()), f.size()});
      const std::uint64_t next = j + 1 < pack.size() ? in_at[j + 1] : in_bytes;
      if (next > in_at[j] + f.size()) in_pieces.push_back({nullptr, next - in_at[j] - f.size()});
    }
    // Packs take the three slots in turn: the others hold the two packs before, in flight.
    const std::size_t number = packs++;
    DecodeSlot& slot = number % 3 == 0 ? main : spare[number % 3 - 1];
    slot.stream.synchronize();
    // The pack's tables go up from the slot's pinned memory, so that their copies stay
    // asynchronous: the driver stages a copy from pageable memory, and that can wait for the
    // copies queued before it, other packs' downloads among them.
    slot.frames_host.reserve(frames);
    slot.file_spans_host.reserve(frames);
    FrameEntry* entries = slot.frames_host.get();
    FileSpanDevice* spans = slot.file_spans_host.get();
    std::vector<std::uint64_t> first_frame(pack.size());
    for (std::size_t j = 0, f = 0; j < pack.size(); ++j) {
      first_frame[j] = f;
      for (FrameEntry e : plan[pack[j]].index.frames) {
        e.out_sample += sample_at[j];
        spans[f] = {in_at[j], files[pack[j]].size()};
        entries[f++] = e;
      }
    }
    slot.file.reserve(in_bytes);
    // Files in pinned memory go up by DMA from where they are, without the host copies of
    // staging (which, for several engines at once, would share the host's memory bandwidth):
    // one copy per run of files that follow each other in host memory, then each moved to its
    // aligned place (spread_kernel.cuh).
    const bool all_pinned = std::all_of(pack.begin(), pack.end(),
                                        [&](std::size_t i) { return pinned(files[i].data()); });
    if (all_pinned) {
      timeline.mark(number, PackTimeline::kUpStart, slot.s());
      slot.moves_host.reserve(pack.size());
      FileMove* moves = slot.moves_host.get();
      slot.landing.reserve(end + kLandingSlack);
      std::uint64_t landed = 0;
      for (std::size_t j = 0, k; j < pack.size(); j = k) {
        const std::uint8_t* first = files[pack[j]].data();
        std::uint64_t run = 0;
        for (k = j; k < pack.size() && (k == j || files[pack[k]].data() == first + run); ++k) {
          const std::uint64_t next = k + 1 < pack.size() ? in_at[k + 1] : in_bytes;
          moves[k] = {landed + run, in_at[k], files[pack[k]].size(), next};
          run += files[pack[k]].size();
        }
        SIGPU_CUDA_CHECK(cudaMemcpyAsync(slot.landing.get() + landed, first, run,
                                         cudaMemcpyHostToDevice, slot.s()));
        landed += run;
      }
      slot.moves.reserve(pack.size());
      SIGPU_CUDA_CHECK(cudaMemcpyAsync(slot.moves.get(), moves, pack.size() * sizeof(FileMove),
                                       cudaMemcpyHostToDevice, slot.s()));
      const auto count = static_cast<std::uint32_t>(pack.size());
      SpreadFilesKernel<<<std::min<std::uint32_t>(count, 1024), 256, 0, slot.s()>>>(
          slot.landing.get(), slot.file.get(), slot.moves.get(), count);
      SIGPU_CUDA_CHECK_LAUNCH();
    } else {
      // Staging's buffers would also carry the pack before's download: that one goes first.
      if (pending) finish_pack(*std::exchange(pending, std::nullopt));
      timeline.mark(number, PackTimeline::kUpStart, slot.s());
      staging().upload(slot.file.get(), in_pieces, slot.s(), pool);
    }
    timeline.mark(number, PackTimeline::kUpEnd, slot.s());
    const auto count = static_cast<std::uint32_t>(frames);
    slot.frames.reserve(count);
    slot.file_spans.reserve(count);
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(slot.frames.get(), entries, count * sizeof(FrameEntry),
                                     cudaMemcpyHostToDevice, slot.s()));
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(slot.file_spans.get(), spans, count * sizeof(FileSpanDevice),
                                     cudaMemcpyHostToDevice, slot.s()));
    const std::uint64_t pcm_bytes = samples * channels * value_bytes;
    slot.output.reserve(pcm_bytes);
    SIGPU_CUDA_CHECK(cudaMemsetAsync(slot.output.get(), output_fill_byte(), pcm_bytes, slot.s()));
    const PcmTarget target{slot.output.get(), o.format, Layout::interleaved,
                           channels,          bps,      samples};
    slot.launch(tables.get(), slot.file.get(), in_bytes, count, bps, channels, samples, target,
                slot.file_spans.get(), nullptr, crc_words.get());
    timeline.mark(number, PackTimeline::kDecodeEnd, slot.s());
    if (pending) finish_pack(*pending);
    pending = Pending{&slot, number, pack, std::move(first_frame), channels};
  };

  const auto need = [&](std::size_t i) {
    const FrameIndex& index = plan[i].index;
    return align_up(files[i].size(), kPackAlign) + files[i].size() +  // the pack, landing
           index.total_samples * index.channels *
               (value_bytes + (index.bits_per_sample == 32 ? 8 : 4));
  };
  // Downloads may still be landing in `outs` or the results when something throws.
  struct Drain {
    CudaEngine& e;
    ~Drain() {
      cudaStreamSynchronize(e.main.s());
      for (const DecodeSlot& x : e.spare) cudaStreamSynchronize(x.s());
    }
  } drain{*this};
  std::future<void> planned = std::async(std::launch::async, plan_files, waves[0], waves[1]);
  for (std::size_t w = 0; w + 1 < waves.size(); ++w) {
    Stopwatch wait;
    planned.get();
    t_plan += wait.seconds();
    if (w + 2 < waves.size())
      planned = std::async(std::launch::async, plan_files, waves[w + 1], waves[w + 2]);
    ShapeGroups groups;
    for (std::size_t i = waves[w]; i < waves[w + 1]; ++i) {
      if (!out[i].error.empty()) continue;
      if (plan[i].packed)
        groups[{plan[i].index.channels, plan[i].index.bits_per_sample}].push_back(i);
      else
        alone.push_back(i);
    }
    for_each_pack(groups, need, run_pack);
  }
  if (pending) finish_pack(*pending);
  main.stream.synchronize();
  for (DecodeSlot& x : spare) x.stream.synchronize();
  if (traced) {
    timeline.print(stderr);
    std::fprintf(stderr,
                 "sigpu cuda batch: %zu files in %zu waves, %.1f ms; waiting for plans %.1f ms; "
                 "%zu packs; %zu alone\n",
                 n, waves.size() - 1, clock.seconds() * 1e3, t_plan * 1e3, packs, alone.size());
  }
  for (std::size_t i : alone) {
    try {
      out[i].stream = parse_stream(files[i]);
      out[i].out = decode(files[i], out[i].stream, o,
                          outs.empty() ? std::span<std::uint8_t>{} : outs[i], {});
    } catch (const std::exception& ex) {
      out[i].error = ex.what();
    }
  }
  return out;
}

}  // namespace sigpu::flac
