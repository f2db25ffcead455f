// Ranged decoding: samples [first, first + count) of a long file without decoding the rest.
//
// A window of whole frames around the range is found first: its start from the SEEKTABLE when
// there is one (the last seek point at or before the range), else from the range's share of the
// audio bytes; the frame search (search_frames_cpu) then runs over the window's bytes only, and
// the chain of frames it verifies (CRC-16 links) gives the frame where the range starts and the
// first frame after it. Where the window missed (a guess too late or too early, a seek point
// that lies), it grows and the search runs again. The window, a run of complete frames, is
// then decoded like a file whose metadata is the original's (any backend; many windows share
// GPU launches through decode_batch), and the range is cut out of it.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <map>
#include <optional>
#include <tuple>

#include "flac/backends.hpp"
#include "flac/decoder_common.hpp"
#include "flac/gpu_pool.hpp"
#include "flac/range_window.hpp"

namespace sigpu::flac {
namespace {

class WindowFinder {
 public:
  WindowFinder(std::span<const std::uint8_t> file, const Stream& stream)
      : file_(file), stream_(stream) {
    const StreamInfo& i = stream.info;
    if (!stream.has_streaminfo || !i.total_samples || !i.channels)
      throw Error("ranged decoding needs STREAMINFO with the total sample count");
    fixed_block_ = i.min_block_size == i.max_block_size ? i.max_block_size : 0;
    margin_ = std::max<std::uint64_t>(2 * std::max<std::uint64_t>(i.max_frame_size, 8192), 32768);
  }

  /// The window of r, its frames searched on `pool` (all cores for one range, one core each for
  /// many ranges at once) and linked as `links` says.
  Window find(SampleRange r, ThreadPool& pool, Links links = Links::verified) const {
    const std::uint64_t audio_begin = std::min<std::uint64_t>(stream_.audio_offset, file_.size());
    const std::uint64_t audio_end = file_.size();
    const std::uint64_t end_sample =
        r.count > ~std::uint64_t{0} - r.first ? ~std::uint64_t{0} : r.first + r.count;
    std::uint64_t grow = margin_;
    const std::uint64_t at = guess(r.first, false);
    std::uint64_t lo = std::max(audio_begin, at - std::min(at, margin_));
    // A seek table may lie (offsets out of order): the end is never before the start.
    std::uint64_t hi = std::min(audio_end, std::max(guess(end_sample, true), at) + margin_);
    for (;;) {
      const std::span<const std::uint8_t> bytes = file_.subspan(lo, hi - lo);
      Stream local;  // the window alone: frames from its first byte, no STREAMINFO
      const std::vector<Candidate> cands = links == Links::verified
                                               ? search_frames_cpu(bytes, local, pool)
                                               : search_headers_cpu(bytes, local, pool);
      // The chain the links verify, from the first linked candidate.
      std::vector<const Candidate*> chain;
      for (const Candidate& c : cands)
        if (c.next >= 0) {
          for (const Candidate* p = &c;; p = &cands[p->next]) {
            chain.push_back(p);
            if (p->next < 0) break;
          }
          break;
        }
      // The chain runs forward through the bytes: the frame the range starts in, and the first
      // frame after it that starts at or past the range's end.
      const Candidate* start = nullptr;
      std::size_t at_start = 0;
      for (std::size_t i = 0; i < chain.size(); ++i)
        if (sample_of(*chain[i]) <= r.first) {
          start = chain[i];
          at_start = i;
        }
      if (!start && lo == audio_begin && !chain.empty()) start = chain.front();
      const Candidate* after = nullptr;
      for (std::size_t i = at_start + 1; start && !after && i < chain.size(); ++i)
        if (sample_of(*chain[i]) >= end_sample) after = chain[i];
      const bool end_ok = after || hi == audio_end;
      if (start && end_ok) {
        Window w{lo + start->pos, after ? lo + after->pos : audio_end, sample_of(*start), {}};
        if (after) w.index = chain_index(chain, at_start, *after);
        return w;
      }
      if (lo == audio_begin && hi == audio_end)
        throw Error("no frame chain found around samples " + std::to_string(r.first) + ".." +
                    std::to_string(end_sample));
      // Missed: a chain that spans samples tells the stream's bytes per sample here, so the
      // next window is placed where the range should be (a seek table that lies sends the
      // first guess anywhere); else the window grows on the side that missed. Either way the
      // margin doubles, so a window covers the file after log2(size / margin) misses.
      const bool placed =
          chain.size() >= 2 && place(*chain.front(), *chain.back(), lo, r.first, end_sample, grow,
                                     audio_begin, audio_end, lo, hi);
      if (!placed) {
        if (!start) lo = lo - std::min(lo - audio_begin, grow);
        if (!start || !end_ok) hi = std::min(audio_end, hi + grow);
      }
      grow *= 2;
    }
  }

 private:
  /// The index of chain[first..] up to `after`, or an empty one where a frame disagrees with
  /// STREAMINFO or its successor's first sample (the general decode then reports why).
  FrameIndex chain_index(const std::vector<const Candidate*>& chain, std::size_t first,
                         const Candidate& after) const {
    const StreamInfo& info = stream_.info;
    const Candidate& head = *chain[first];
    FrameIndex x;
    x.channels = info.channels;
    x.bits_per_sample = info.bits_per_sample;
    x.sample_rate = info.sample_rate;
    for (std::size_t i = first; chain[i] != &after; ++i) {
      const Candidate& c = *chain[i];
      const Candidate& next = *chain[i + 1];
      const std::uint64_t at = sample_of(c) - sample_of(head);
      if (c.channels != info.channels ||
          (c.bits_per_sample && c.bits_per_sample != info.bits_per_sample) ||
          (c.sample_rate && c.sample_rate != info.sample_rate) ||
          sample_of(next) != sample_of(c) + c.block_size)
        return {};
      x.frames.push_back({c.pos - head.pos, next.pos - head.pos, at, c.block_size});
    }
    x.total_samples = sample_of(after) - sample_of(head);
    x.frames_numbered = x.frames.size();
    return x;
  }

  std::uint64_t sample_of(const Candidate& c) const {
    return c.variable ? c.number : c.number * (fixed_block_ ? fixed_block_ : c.block_size);
  }

  /// [lo, hi): the bytes of samples [first, end) and `margin` either side, by the bytes per
  /// sample between frames a and b of the window that started at `base`; false when a and b
  /// say nothing (the same sample) or the window would not change.
  bool place(const Candidate& a, const Candidate& b, std::uint64_t base, std::uint64_t first,
             std::uint64_t end, std::uint64_t margin, std::uint64_t begin_limit,
             std::uint64_t end_limit, std::uint64_t& lo, std::uint64_t& hi) const {
    const std::uint64_t sa = sample_of(a), sb = sample_of(b);
    if (sb <= sa || b.pos <= a.pos) return false;
    const double rate = double(b.pos - a.pos) / double(sb - sa);
    const double at = double(base + b.pos), m = double(margin);
    const auto clamp = [&](double x) {
      return std::uint64_t(std::clamp(x, double(begin_limit), double(end_limit)));
    };
    const std::uint64_t new_lo = clamp(at + (double(first) - double(sb)) * rate - m);
    const std::uint64_t new_hi = clamp(at + (double(end) - double(sb)) * rate + m);
    if (new_hi <= new_lo || (new_lo == lo && new_hi == hi)) return false;
    lo = new_lo;
    hi = new_hi;
    return true;
  }

  /// Where sample s should be: a seek point's frame (at or before s, or after it for an end),
  /// else s's share of the audio bytes.
  std::uint64_t guess(std::uint64_t s, bool end) const {
    const std::uint64_t audio = stream_.audio_offset;
    const SeekPoint* best = nullptr;
    for (const SeekPoint& p : stream_.seek_points) {
      if (p.sample == ~std::uint64_t{0}) continue;  // placeholder
      if (!end && p.sample <= s && (!best || p.sample > best->sample)) best = &p;
      if (end && p.sample >= s && (!best || p.sample < best->sample)) best = &p;
    }
    if (best) return std::min<std::uint64_t>(audio + best->offset, file_.size());
    const std::uint64_t bytes = file_.size() - std::min<std::uint64_t>(audio, file_.size());
    const double share = std::min(1.0, double(s) / double(stream_.info.total_samples));
    return std::min<std::uint64_t>(audio + std::uint64_t(share * double(bytes)), file_.size());
  }

  std::span<const std::uint8_t> file_;
  const Stream& stream_;
  std::uint32_t fixed_block_ = 0;
  std::uint64_t margin_ = 0;
};

/// Samples [offset, offset + count) of a Pcm, in its format and layout.
Pcm cut(const Pcm& in, std::uint64_t offset, std::uint64_t count) {
  Pcm out = in;
  offset = std::min(offset, in.samples);
  count = std::min(count, in.samples - offset);
  out.samples = count;
  const std::size_t v = bytes_per_sample(in.format);
  out.bytes.resize(count * in.channels * v);
  if (out.bytes.empty()) return out;  // no samples, or no channels
  if (in.layout == Layout::interleaved) {
    std::memcpy(out.bytes.data(), in.bytes.data() + offset * in.channels * v,
                count * in.channels * v);
  } else {
    for (unsigned c = 0; c < in.channels; ++c)
      std::memcpy(out.bytes.data() + c * count * v, in.bytes.data() + (c * in.samples + offset) * v,
                  count * v);
  }
  return out;
}

/// A window's decode made into the range's: the PCM cut, positions made the file's, the file's
/// metadata warnings ahead of the decode's (as finish_decode orders them).
Decoded finish_range(Decoded w, const Stream& stream, const Window& win, SampleRange r) {
  if (r.first < win.first_sample)
    throw Error("samples from " + std::to_string(r.first) +
                " lie before the first decodable frame (" + std::to_string(win.first_sample) + ")");
  Decoded d;
  d.stream = stream;
  d.pcm = cut(w.pcm, r.first - win.first_sample, r.count);
  d.report = std::move(w.report);
  d.report.md5 = Md5Check::skipped;  // the MD5 covers the whole stream
  d.report.warnings.insert(d.report.warnings.begin(),
                           std::make_move_iterator(d.stream.warnings.begin()),
                           std::make_move_iterator(d.stream.warnings.end()));
  d.stream.warnings.clear();
  for (Damage& x : d.report.damage) {
    x.byte_offset += win.begin;
    x.first_sample += win.first_sample;
  }
  return d;
}

/// The range straight from its window's index on the parallel backends: the frames decoded with
/// no second search, only the range's samples kept. nullopt where the window has no index or a
/// frame of it fails to decode (the general decode of the window then reports the damage).
std::optional<Decoded> decode_chain(std::span<const std::uint8_t> file, const Stream& stream,
                                    const Window& win, SampleRange r, const DecodeOptions& o) {
  const Backend backend = resolve(o.backend);
  if (win.index.frames.empty() || backend == Backend::cpu || r.first < win.first_sample)
    return std::nullopt;
  const std::span<const std::uint8_t> bytes = file.subspan(win.begin, win.end - win.begin);
  const std::uint64_t first = r.first - win.first_sample;
  const SampleSpan keep{first, first + std::min(r.count, win.index.total_samples - first)};
  std::optional<DecodeOutput> got;
  if (backend == Backend::cuda) {
    got = EngineLease(o.device)->decode_index(bytes, win.index, o, keep);
  } else {
    got = decode_index_cpu(bytes, win.index, o, keep);
  }
  if (!got) return std::nullopt;
  Decoded d;
  d.stream = stream;
  d.pcm = std::move(got->pcm);
  d.report.backend = backend;
  d.report.frames = got->frames;
  d.report.frames_numbered = got->frames_numbered;
  d.report.md5 = Md5Check::skipped;  // the MD5 covers the whole stream
  d.report.warnings = std::move(d.stream.warnings);
  d.stream.warnings.clear();
  return d;
}

DecodeOptions window_options(const Stream& stream, const DecodeOptions& o) {
  DecodeOptions w = o;
  w.verify_md5 = false;
  w.params =
      StreamParams{stream.info.sample_rate, stream.info.channels, stream.info.bits_per_sample};
  return w;
}

}  // namespace

Decoded decode_range(std::span<const std::uint8_t> file, SampleRange range,
                     const DecodeOptions& o) {
  const Stream stream = parse_stream(file);
  const Window win = WindowFinder(file, stream).find(range, ThreadPool::shared());
  if (std::optional<Decoded> d = decode_chain(file, stream, win, range, o)) return std::move(*d);
  Decoded w = decode(file.subspan(win.begin, win.end - win.begin), window_options(stream, o));
  return finish_range(std::move(w), stream, win, range);
}

RangePlan plan_ranges(std::span<const FileRange> ranges, Links links) {
  RangePlan plan;
  plan.stream_of.resize(ranges.size());
  plan.windows.resize(ranges.size());
  plan.errors.resize(ranges.size());
  // Each distinct file's metadata is parsed once; a file that cannot be parsed fails its ranges.
  std::vector<std::optional<WindowFinder>> finders;
  std::vector<std::string> file_errors;
  std::vector<std::size_t> first_range;  // per file
  std::map<std::pair<const std::uint8_t*, std::size_t>, std::size_t> seen;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const auto key = std::make_pair(ranges[i].file.data(), ranges[i].file.size());
    const auto [it, added] = seen.try_emplace(key, plan.streams.size());
    if (added) {
      plan.streams.emplace_back();
      file_errors.emplace_back();
      first_range.push_back(i);
      try {
        plan.streams.back() = parse_stream(ranges[i].file);
      } catch (const std::exception& ex) {
        file_errors.back() = ex.what();
      }
    }
    plan.stream_of[i] = it->second;
  }
  // (The finders hold references into `streams`, complete by now.)
  for (std::size_t k = 0; k < plan.streams.size(); ++k) {
    finders.emplace_back();
    if (!file_errors[k].empty()) continue;
    try {
      finders.back().emplace(ranges[first_range[k]].file, plan.streams[k]);
    } catch (const std::exception& ex) {
      file_errors[k] = ex.what();
    }
  }
  auto find = [&](std::size_t i, ThreadPool& pool) {
    const std::size_t k = plan.stream_of[i];
    if (!file_errors[k].empty()) {
      plan.errors[i] = file_errors[k];
      return;
    }
    try {
      plan.windows[i] = finders[k]->find(ranges[i].range, pool, links);
    } catch (const std::exception& ex) {
      plan.errors[i] = ex.what();
    }
  };
  if (ranges.size() == 1) {
    find(0, ThreadPool::shared());
    return plan;
  }
  ThreadPool::shared().parallel_for(
      ranges.size(),
      [&](std::size_t b, std::size_t e) {
        ThreadPool alone(1);
        for (std::size_t i = b; i < e; ++i) find(i, alone);
      },
      1);
  return plan;
}

std::vector<BatchResult> decode_windows(std::span<const FileRange> ranges, const RangePlan& plan,
                                        std::span<const std::size_t> which,
                                        const DecodeOptions& o) {
  std::vector<BatchResult> out(which.size());
  // Windows carry no STREAMINFO: those of one stream shape (rate, channels, depth) are decoded
  // as one batch with that shape's parameters.
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t>, std::vector<std::size_t>>
      by_shape;
  for (std::size_t k = 0; k < which.size(); ++k) {
    const StreamInfo& info = plan.streams[plan.stream_of[which[k]]].info;
    by_shape[{info.sample_rate, info.channels, info.bits_per_sample}].push_back(k);
  }
  // (Named through a reference: clang 14, the fuzz build's compiler, cannot capture structured
  // bindings.)
  for (const auto& group : by_shape) {
    const std::vector<std::size_t>& found = group.second;
    std::vector<std::span<const std::uint8_t>> spans;
    for (std::size_t k : found) {
      const Window& w = plan.windows[which[k]];
      spans.push_back(ranges[which[k]].file.subspan(w.begin, w.end - w.begin));
    }
    std::vector<BatchResult> decoded =
        decode_batch(spans, window_options(plan.streams[plan.stream_of[which[found[0]]]], o));
    ThreadPool::shared().parallel_for(
        found.size(),
        [&](std::size_t b, std::size_t e) {
          for (std::size_t j = b; j < e; ++j) {
            const std::size_t k = found[j], i = which[k];
            if (!decoded[j].error.empty()) {
              out[k].error = std::move(decoded[j].error);
              continue;
            }
            try {
              out[k].decoded =
                  finish_range(std::move(decoded[j].decoded), plan.streams[plan.stream_of[i]],
                               plan.windows[i], ranges[i].range);
            } catch (const std::exception& ex) {
              out[k].error = ex.what();
            }
          }
        },
        1);
  }
  return out;
}

std::vector<BatchResult> decode_ranges(std::span<const FileRange> ranges, const DecodeOptions& o) {
  if (ranges.size() == 1) {  // its window searched on all cores, decoded from its own index
    std::vector<BatchResult> one(1);
    try {
      one[0].decoded = decode_range(ranges[0].file, ranges[0].range, o);
    } catch (const std::exception& ex) {
      one[0].error = ex.what();
    }
    return one;
  }
  const RangePlan plan = plan_ranges(ranges);
  std::vector<std::size_t> found;
  for (std::size_t i = 0; i < ranges.size(); ++i)
    if (plan.errors[i].empty()) found.push_back(i);
  std::vector<BatchResult> decoded = decode_windows(ranges, plan, found, o);
  std::vector<BatchResult> out(ranges.size());
  for (std::size_t i = 0; i < ranges.size(); ++i) out[i].error = plan.errors[i];
  for (std::size_t k = 0; k < found.size(); ++k) out[found[k]] = std::move(decoded[k]);
  return out;
}

std::vector<BatchResult> decode_ranges(std::span<const std::uint8_t> file,
                                       std::span<const SampleRange> ranges,
                                       const DecodeOptions& o) {
  std::vector<FileRange> all;
  all.reserve(ranges.size());
  for (const SampleRange& r : ranges) all.push_back({file, r});
  return decode_ranges(all, o);
}

}  // namespace sigpu::flac
