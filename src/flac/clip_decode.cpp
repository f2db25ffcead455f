// decode_clips: a training batch of clips, written where the batch lives. On the CPU backends
// the clips are decode_ranges' and each is written into the batch by store_clip_sample; on
// cuda the windows that their own index covers (nearly all of them) go to one engine, which
// decodes them in shared launches and writes the batch on the device, and only the others
// (damage, a window running to the file's end) take decode_ranges' general way through the
// host, each written there by the same store_clip_sample and uploaded into its place. The host
// links the engine's windows by frame numbers alone (Links::numbered: a pass over their bytes
// that reads headers, where checking each frame's CRC-16 doubled the host's time a batch); the
// engine checks the CRC-16 as it decodes, and a window that fails is found again with verified
// links before the general way.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "core/thread_pool.hpp"
#include "core/timer.hpp"
#include "flac/clip_store.hpp"
#include "flac/gpu_pool.hpp"
#include "flac/range_window.hpp"

namespace sigpu::flac {
namespace {

/// Samples [begin, end) of clip `clip` of `t` from a range's decode (raw32, interleaved), in
/// host memory.
void store_clip(const ClipTarget& t, std::uint64_t clip, const Pcm& pcm, std::uint64_t begin,
                std::uint64_t end) {
  const auto* raw = reinterpret_cast<const std::int32_t*>(pcm.bytes.data());
  with_clip_format(t.format, [&](auto f) {
    for (std::uint64_t i = begin; i < end; ++i)
      store_clip_sample<f()>(t, clip, i, i < pcm.samples ? raw + i * pcm.channels : nullptr,
                             pcm.channels, pcm.bits_per_sample);
  });
}

/// Writes clips[k] as clip k of `t` in host memory, in pieces over all cores (one clip alone
/// too).
void store_clips(const ClipTarget& t, const std::vector<const Pcm*>& clips) {
  constexpr std::uint64_t kPiece = 1 << 15;
  const std::uint64_t pieces = (t.length + kPiece - 1) / kPiece;
  ThreadPool::shared().parallel_for(
      clips.size() * pieces,
      [&](std::size_t b, std::size_t e) {
        for (std::size_t j = b; j < e; ++j) {
          const std::size_t k = j / pieces;
          const std::uint64_t at = (j % pieces) * kPiece;
          if (clips[k]) store_clip(t, k, *clips[k], at, std::min(t.length, at + kPiece));
        }
      },
      1);
}

/// The batch's shape from the first clip that has a stream; UsageError for a clip whose stream
/// does not fit it.
class ShapeCheck {
 public:
  explicit ShapeCheck(bool mono) : mono_(mono) {}
  void check(std::size_t clip, std::uint32_t rate, std::uint32_t channels, std::uint32_t bits,
             ClipsReport& r) {
    if (!r.sample_rate) {
      r.sample_rate = rate;
      r.channels = mono_ ? 1 : channels;
      r.bits_per_sample = bits;
    } else if (rate != r.sample_rate || (!mono_ && channels != r.channels)) {
      throw UsageError("clip " + std::to_string(clip) +
                       ": a batch's clips must share their sample rate and (unless mono) their "
                       "channel count");
    }
  }

 private:
  bool mono_;
};

ClipTarget clip_target(void* out, const DecodeOptions& o, const ClipsReport& r,
                       std::uint64_t length, bool mono) {
  return {out, o.format, o.layout, r.channels, length, mono};
}

void add_decoded(ClipsReport& r, const Decoded& d) {
  r.frames += d.report.frames;
  r.damage.insert(r.damage.end(), d.report.damage.begin(), d.report.damage.end());
}

/// The clips decoded by decode_ranges on o.backend and written into `out`, or, when `out` is
/// null, into `host` (sized here, once the batch's channel count is known).
ClipsReport clips_on_cpu(std::span<const FileRange> clips, void* out, bool mono,
                         const DecodeOptions& o, std::uint64_t length, ByteBuffer* host = nullptr) {
  DecodeOptions ro = o;
  ro.format = SampleFormat::raw32;
  ro.layout = Layout::interleaved;
  std::vector<BatchResult> got = decode_ranges(clips, ro);
  ClipsReport r;
  r.backend = o.backend;
  r.errors.resize(clips.size());
  ShapeCheck shape(mono);
  for (std::size_t i = 0; i < clips.size(); ++i) {
    r.errors[i] = got[i].error;
    if (!got[i].error.empty()) continue;
    const Pcm& p = got[i].decoded.pcm;
    shape.check(i, p.sample_rate, p.channels, p.bits_per_sample, r);
  }
  std::vector<const Pcm*> pcm(clips.size(), nullptr);
  for (std::size_t i = 0; i < clips.size(); ++i)
    if (got[i].error.empty()) pcm[i] = &got[i].decoded.pcm;
  ClipTarget t = clip_target(out, o, r, length, mono);
  if (!out) {
    host->resize(clips.size() * clip_bytes(t));
    t.data = host->data();
  }
  store_clips(t, pcm);
  for (std::size_t i = 0; i < clips.size(); ++i)
    if (got[i].error.empty()) add_decoded(r, got[i].decoded);
  return r;
}

ClipsReport clips_on_gpu(GpuEngine& engine, std::span<const FileRange> clips, void* out, bool mono,
                         const DecodeOptions& o, std::uint64_t length,
                         std::span<void* const> after) {
  if (clips.size() == 1) {
    // One clip's window is decoded by the host's cores and its clip uploaded: its few frames
    // cannot fill the GPU, whose restore of a frame is a serial recurrence over its samples, and
    // the host's cores finish it sooner (docs/BENCHMARKS.md, the ranges' single-clip rows).
    DecodeOptions ho = o;
    ho.backend = Backend::cpu_parallel;
    ByteBuffer host;
    ClipsReport r = clips_on_cpu(clips, nullptr, mono, ho, length, &host);
    if (r.errors[0].empty()) {
      engine.wait(after);
      engine.upload(out, host.data(), host.size());
    }
    return r;
  }
  Stopwatch clock;
  // Links by numbers alone: the engine checks every frame's CRC-16, the host only reads headers.
  const RangePlan plan = plan_ranges(clips, Links::numbered);
  const double t_plan = clock.seconds();
  ClipsReport r;
  r.backend = Backend::cuda;
  r.errors = plan.errors;
  ShapeCheck shape(mono);
  for (std::size_t i = 0; i < clips.size(); ++i) {
    if (!r.errors[i].empty()) continue;
    const StreamInfo& info = plan.streams[plan.stream_of[i]].info;
    shape.check(i, info.sample_rate, info.channels, info.bits_per_sample, r);
  }
  const ClipTarget t = clip_target(out, o, r, length, mono);
  std::vector<ClipWindow> windows;
  for (std::size_t i = 0; i < clips.size(); ++i) {
    const Window& w = plan.windows[i];
    if (r.errors[i].empty() && !w.index.frames.empty() && clips[i].range.first >= w.first_sample)
      windows.push_back({clips[i].file.subspan(w.begin, w.end - w.begin), &w.index,
                         clips[i].range.first - w.first_sample, i, false});
  }
  const std::vector<bool> ok = engine.decode_clips(windows, t, after);
  const double t_engine = clock.seconds();
  std::vector<std::uint64_t> frames(clips.size(), 0);
  std::vector<bool> done(clips.size(), false);
  for (std::size_t k = 0; k < windows.size(); ++k)
    if (ok[k]) {
      done[windows[k].clip] = true;
      frames[windows[k].clip] = windows[k].index->frames.size();
    }
  std::vector<std::size_t> rest;
  for (std::size_t i = 0; i < clips.size(); ++i)
    if (r.errors[i].empty() && !done[i]) rest.push_back(i);
  std::vector<Decoded> general(clips.size());
  if (!rest.empty()) {
    // Their windows are found again with links the CRC-16 verified (a chain of numbers may have
    // taken a false header), and decoded the general way, which reports any damage.
    std::vector<FileRange> again;
    for (std::size_t i : rest) again.push_back(clips[i]);
    const RangePlan verified = plan_ranges(again);
    std::vector<std::size_t> found;
    for (std::size_t k = 0; k < rest.size(); ++k) {
      if (verified.errors[k].empty())
        found.push_back(k);
      else
        r.errors[rest[k]] = verified.errors[k];
    }
    DecodeOptions ro = o;
    ro.format = SampleFormat::raw32;
    ro.layout = Layout::interleaved;
    std::vector<BatchResult> got = decode_windows(again, verified, found, ro);
    engine.wait(after);  // when no window went through decode_clips, which waits for them
    ByteBuffer host(clip_bytes(t));
    ClipTarget on_host = t;
    on_host.data = host.data();
    for (std::size_t k = 0; k < found.size(); ++k) {
      const std::size_t i = rest[found[k]];
      if (!got[k].error.empty()) {
        r.errors[i] = std::move(got[k].error);
        continue;
      }
      store_clips(on_host, {&got[k].decoded.pcm});
      engine.upload(static_cast<std::uint8_t*>(out) + i * host.size(), host.data(), host.size());
      general[i] = std::move(got[k].decoded);
    }
  }
  for (std::size_t i = 0; i < clips.size(); ++i) {
    r.frames += frames[i];
    add_decoded(r, general[i]);
  }
  // SIGPU_TRACE=1: where a batch's time goes.
  if (std::getenv("SIGPU_TRACE"))
    std::fprintf(stderr,
                 "sigpu cuda clips: %zu clips; windows found %.1f ms; %zu decoded from their "
                 "index %.1f ms; %zu the general way %.1f ms\n",
                 clips.size(), t_plan * 1e3, windows.size(), (t_engine - t_plan) * 1e3, rest.size(),
                 (clock.seconds() - t_engine) * 1e3);
  return r;
}

}  // namespace

ClipsReport decode_clips(std::span<const FileRange> clips, void* out, bool mono,
                         const DecodeOptions& options, std::span<void* const> after) {
  if (clips.empty()) throw UsageError("decode_clips needs at least one clip");
  if (!out) throw UsageError("decode_clips needs memory for the batch");
  const std::uint64_t length = clips[0].range.count;
  for (const FileRange& c : clips)
    if (c.range.count != length)
      throw UsageError("decode_clips: every clip of a batch has the same length");
  DecodeOptions o = options;
  o.backend = resolve(o.backend);
  o.verify_md5 = false;  // a clip never holds a whole stream
  if (o.backend == Backend::cuda) {
    EngineLease engine(o.device);
    if (engine->on_device(out)) return clips_on_gpu(*engine, clips, out, mono, o, length, after);
    // Left to choose, the batch is written where it lives: host memory by the host's cores.
    if (options.backend != Backend::automatic)
      throw UsageError("decode_clips on cuda writes the batch into device memory of device " +
                       std::to_string(o.device) + "; `out` is not");
    o.backend = Backend::cpu_parallel;
  }
  return clips_on_cpu(clips, out, mono, o, length);
}

}  // namespace sigpu::flac
