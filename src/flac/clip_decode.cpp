// decode_clips: a training batch of clips, written where the batch lives. On the CPU backends
// the clips are decode_ranges' and each is written into the batch by store_clip_sample; on
// cuda the windows that their own index covers (nearly all of them) go to one engine, which
// decodes them in shared launches and writes the batch on the device, and only the others
// (damage, a window running to the file's end) take decode_ranges' general way through the
// host, each written there by the same store_clip_sample and uploaded into its place.
#include <algorithm>
#include <cstring>

#include "core/thread_pool.hpp"
#include "flac/clip_store.hpp"
#include "flac/gpu_pool.hpp"
#include "flac/range_window.hpp"

namespace sigpu::flac {
namespace {

/// Clip `clip` of `t` from a range's decode (raw32, interleaved), in host memory.
void store_clip(const ClipTarget& t, std::uint64_t clip, const Pcm& pcm) {
  const auto* raw = reinterpret_cast<const std::int32_t*>(pcm.bytes.data());
  for (std::uint64_t i = 0; i < t.length; ++i)
    store_clip_sample(t, clip, i, i < pcm.samples ? raw + i * pcm.channels : nullptr,
                      pcm.channels, pcm.bits_per_sample);
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

ClipsReport clips_on_cpu(std::span<const FileRange> clips, void* out, bool mono,
                         const DecodeOptions& o, std::uint64_t length) {
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
  const ClipTarget t = clip_target(out, o, r, length, mono);
  ThreadPool::shared().parallel_for(
      clips.size(),
      [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i)
          if (got[i].error.empty()) store_clip(t, i, got[i].decoded.pcm);
      },
      1);
  for (std::size_t i = 0; i < clips.size(); ++i)
    if (got[i].error.empty()) add_decoded(r, got[i].decoded);
  return r;
}

ClipsReport clips_on_gpu(std::span<const FileRange> clips, void* out, bool mono,
                         const DecodeOptions& o, std::uint64_t length) {
  const RangePlan plan = plan_ranges(clips);
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
                         clips[i].range.first - w.first_sample, i});
  }
  EngineLease engine(o.device);
  const std::vector<bool> ok = engine->decode_clips(windows, t);
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
    DecodeOptions ro = o;
    ro.format = SampleFormat::raw32;
    ro.layout = Layout::interleaved;
    std::vector<BatchResult> got = decode_windows(clips, plan, rest, ro);
    ByteBuffer host(clip_bytes(t));
    ClipTarget on_host = t;
    on_host.data = host.data();
    for (std::size_t k = 0; k < rest.size(); ++k) {
      const std::size_t i = rest[k];
      if (!got[k].error.empty()) {
        r.errors[i] = std::move(got[k].error);
        continue;
      }
      store_clip(on_host, 0, got[k].decoded.pcm);
      engine->upload(static_cast<std::uint8_t*>(out) + i * host.size(), host.data(), host.size());
      general[i] = std::move(got[k].decoded);
    }
  }
  for (std::size_t i = 0; i < clips.size(); ++i) {
    r.frames += frames[i];
    add_decoded(r, general[i]);
  }
  return r;
}

}  // namespace

ClipsReport decode_clips(std::span<const FileRange> clips, void* out, bool mono,
                         const DecodeOptions& options) {
  if (clips.empty()) throw UsageError("decode_clips needs at least one clip");
  if (!out) throw UsageError("decode_clips needs memory for the batch");
  const std::uint64_t length = clips[0].range.count;
  for (const FileRange& c : clips)
    if (c.range.count != length)
      throw UsageError("decode_clips: every clip of a batch has the same length");
  DecodeOptions o = options;
  o.backend = resolve(o.backend);
  o.verify_md5 = false;  // a clip never holds a whole stream
  if (o.backend == Backend::cuda) return clips_on_gpu(clips, out, mono, o, length);
  return clips_on_cpu(clips, out, mono, o, length);
}

}  // namespace sigpu::flac
