#include "flac/frame_index.hpp"

#include <algorithm>

namespace sigpu::flac {
namespace {

std::string at(const Candidate& c) {
  return "byte " + std::to_string(c.pos);
}

/// One step of the chain. Kept small, and without strings: a long stream has one per frame.
struct Link {
  enum Kind : std::uint8_t {
    good,     ///< a frame that decodes
    damaged,  ///< a frame that does not
    gap,      ///< undecodable bytes after the good frame of the link before
  };
  std::uint64_t end;  ///< one past the frame, or where the next good frame starts if damaged
  std::uint32_t cand;
  Kind kind;
};

const char* why(Link::Kind kind) {
  return kind == Link::gap ? "undecodable data between frames"
                           : "frame does not decode (CRC or syntax error)";
}

class Walker {
 public:
  Walker(const std::vector<Candidate>& cands, const StreamFormat& fmt, const FrameProbe& probe)
      : cands_(cands), fmt_(fmt), probe_(probe) {}

  /// Same channel count, bit depth and rate as the stream.
  bool consistent(const Candidate& c) const {
    return c.channels == fmt_.channels &&
           (c.bits_per_sample == 0 || c.bits_per_sample == fmt_.bits_per_sample) &&
           (c.sample_rate == 0 || c.sample_rate == fmt_.sample_rate);
  }

  unsigned bps_of(const Candidate& c) const {
    return c.bits_per_sample ? c.bits_per_sample : fmt_.bits_per_sample;
  }

  /// A frame that verifiably decodes: a verified successor or a successful host decode.
  std::optional<std::uint64_t> verify(std::uint32_t j) const {
    const Candidate& c = cands_[j];
    if (c.next >= 0) return cands_[c.next].pos;
    return probe_(c, bps_of(c));
  }

  /// First good candidate at or after byte `from` whose samples start at or after
  /// `min_number`. A header whose parameters differ from the stream's is a false sync here,
  /// unless it starts exactly where the last good frame ended (`adjacent`), continues its
  /// numbering and decodes: then the stream really changes its parameters, which is refused
  /// (the serial decoder applies the same rule).
  std::optional<std::uint32_t> resync(std::uint64_t from, const Candidate* prev,
                                      std::uint64_t min_number, bool adjacent) const {
    auto it = std::lower_bound(cands_.begin(), cands_.end(), from,
                               [](const Candidate& c, std::uint64_t p) { return c.pos < p; });
    for (auto j = static_cast<std::uint32_t>(it - cands_.begin()); j < cands_.size(); ++j) {
      const Candidate& c = cands_[j];
      if (prev && (c.variable != prev->variable || c.number < min_number)) continue;
      if (!consistent(c)) {
        if (adjacent && c.pos == from && continues(*prev, c) && probe_(c, bps_of(c)))
          throw parameter_change(fmt_, c);
        continue;
      }
      if (verify(j)) return j;
    }
    return std::nullopt;
  }

  /// The chain from the first good frame at or after `from`; bytes from `audio_offset` to it
  /// are the leading gap, bytes after the last frame that do not start one the trailing gap.
  std::vector<Link> walk(std::uint64_t audio_offset, std::uint64_t from, std::uint64_t size) {
    std::vector<Link> chain;
    chain.reserve(cands_.size());  // enough for an undamaged stream: one link per frame
    auto start = resync(from, nullptr, 0, false);
    if (!start) {
      // Nothing decodes; a valid header where the audio starts is still a damaged frame.
      auto it = std::lower_bound(cands_.begin(), cands_.end(), audio_offset,
                                 [](const Candidate& c, std::uint64_t p) { return c.pos < p; });
      if (it != cands_.end() && it->pos == audio_offset && consistent(*it))
        chain.push_back({size, static_cast<std::uint32_t>(it - cands_.begin()), Link::damaged});
      return chain;
    }
    if (cands_[*start].pos != audio_offset) leading_gap_ = {audio_offset, cands_[*start].pos};
    std::uint32_t cur = *start;
    for (;;) {
      const Candidate& c = cands_[cur];
      auto end = verify(cur);
      if (end && c.next >= 0) {
        if (consistent(cands_[c.next])) {
          chain.push_back({*end, cur, Link::good});
          cur = static_cast<std::uint32_t>(c.next);
          continue;
        }
        // A successor with other parameters: decided below, from where this frame really ends.
        end = probe_(c, bps_of(c));
      }
      const std::uint64_t after = end ? *end : c.pos + 1;
      const std::uint64_t min_number = c.number + (c.variable ? (end ? c.block_size : 1) : 1);
      auto j = resync(after, &c, min_number, end.has_value());
      if (!j) {
        chain.push_back({end ? *end : size, cur, end ? Link::good : Link::damaged});
        if (!end || *end >= size) return chain;
        // A header right after the last good frame that does not decode is a damaged frame (a
        // truncated file's last frame, typically); anything else there is trailing junk.
        auto at = std::lower_bound(cands_.begin(), cands_.end(), *end,
                                   [](const Candidate& x, std::uint64_t p) { return x.pos < p; });
        if (at != cands_.end() && at->pos == *end && consistent(*at) &&
            at->variable == c.variable && at->number >= min_number)
          chain.push_back({size, static_cast<std::uint32_t>(at - cands_.begin()), Link::damaged});
        else
          trailing_gap_ = {*end, size};
        return chain;
      }
      if (end) {
        chain.push_back({*end, cur, Link::good});
        if (cands_[*j].pos > *end) chain.push_back({cands_[*j].pos, cur, Link::gap});
      } else {
        chain.push_back({cands_[*j].pos, cur, Link::damaged});
      }
      cur = *j;
    }
  }

  std::pair<std::uint64_t, std::uint64_t> leading_gap_{0, 0};
  std::pair<std::uint64_t, std::uint64_t> trailing_gap_{0, 0};  ///< bytes after the last frame

 private:
  const std::vector<Candidate>& cands_;
  StreamFormat fmt_;
  const FrameProbe& probe_;
};

/// The frames of an unbroken stream into index.frames, in one pass: every candidate from
/// `first` (the first frame, at the audio's start) on linked to the next and agreeing with the
/// stream, all but the last of one block size, numbered in a row (the links' rule), and the
/// last frame decoding to the end of the data. What the walk and the pass over its chain give
/// such a stream, without the chain between them: the two passes took 0.55-0.66 ms of the
/// tiled hour's 42,181 frames on the H100's host, the last step before its output was done.
/// False, with index.frames left empty, for any other stream.
bool unbroken_index(const std::vector<Candidate>& cands, std::size_t first, const Walker& walker,
                    std::uint64_t audio_offset, std::uint64_t data_size, FrameIndex& index) {
  const std::size_t n = cands.size();
  const Candidate& head = cands[first];
  if (head.pos != audio_offset || head.variable) return false;
  const std::uint32_t nominal = head.block_size;
  const std::uint64_t base = head.number * nominal;
  std::vector<FrameEntry>& frames = index.frames;
  frames.reserve(n - first);
  for (std::size_t i = first; i + 1 < n; ++i) {
    const Candidate &c = cands[i], &next = cands[i + 1];
    if (c.next != static_cast<std::int32_t>(i + 1) || c.block_size != nominal || next.variable ||
        next.number != c.number + 1 || !walker.consistent(next)) {
      frames.clear();
      return false;
    }
    frames.push_back({c.pos, next.pos, c.number * nominal - base, c.block_size});
  }
  const Candidate& last = cands[n - 1];
  const auto last_end = walker.verify(static_cast<std::uint32_t>(n - 1));
  if (!last_end || *last_end < data_size) {
    frames.clear();
    return false;
  }
  frames.push_back({last.pos, *last_end, last.number * nominal - base, last.block_size});
  index.total_samples = frames.back().out_sample + last.block_size;
  return true;
}

void check_total(FrameIndex& index, const Stream& stream, std::uint64_t data_size,
                 std::uint64_t frame_number) {
  check_total_samples(index.total_samples, stream, data_size, frame_number, index.damage,
                      index.warnings);
}

}  // namespace

bool fixed_headers_code_samples(const Stream& stream, const Candidate& first,
                                const Candidate& second) {
  return stream.has_streaminfo && stream.info.min_block_size != stream.info.max_block_size &&
         !first.variable && !second.variable && first.block_size > 1 &&
         second.number == first.number + first.block_size;
}

std::uint64_t max_number_gap(std::uint32_t sample_rate, std::uint32_t block_size) {
  if (block_size < 16) return 0;
  return std::min(std::uint64_t{5} * sample_rate, std::uint64_t{50} * block_size);
}

std::vector<SampleSpan> uncovered_samples(const FrameIndex& index) {
  std::vector<SampleSpan> spans;
  std::uint64_t covered = 0;  // every sample before this is covered
  for (const FrameEntry& f : index.frames) {
    if (f.out_sample > covered)
      spans.push_back({covered, std::min(f.out_sample, index.total_samples)});
    covered = std::max(covered, f.out_sample + f.block_size);
    if (covered >= index.total_samples) return spans;
  }
  if (covered < index.total_samples) spans.push_back({covered, index.total_samples});
  return spans;
}

ChainInfo chain_info(const Stream& stream) {
  if (!stream.has_streaminfo) return {};
  const StreamInfo& info = stream.info;
  return {stream.audio_offset, info.total_samples, info.sample_rate, info.channels,
          info.bits_per_sample};
}

std::size_t chained_frames(const std::vector<Candidate>& cands, const Stream& stream, bool linked,
                           FrameEntry* out) {
  const ChainInfo info = chain_info(stream);
  if (!info.total_samples) return 0;
  std::uint64_t at = 0;  // the next frame's first sample
  for (std::size_t i = 0; i < cands.size(); ++i) {
    if (!chain_entry(cands.data(), cands.size(), i, info, at, out + i) ||
        (linked && i + 1 < cands.size() && cands[i].next != static_cast<std::int32_t>(i + 1)))
      return 0;
    at += cands[i].block_size;
  }
  return cands.size();
}

Error parameter_change(const StreamFormat& f, const Candidate& c) {
  std::string what;
  if (c.channels != f.channels)
    what = "channel count from " + std::to_string(f.channels) + " to " + std::to_string(c.channels);
  else if (c.bits_per_sample && c.bits_per_sample != f.bits_per_sample)
    what = "bit depth from " + std::to_string(f.bits_per_sample) + " to " +
           std::to_string(c.bits_per_sample);
  else
    what = "sample rate from " + std::to_string(f.sample_rate) + " to " +
           std::to_string(c.sample_rate);
  return Error("stream changes its " + what + " at the frame at " + at(c) +
               "; streams with changing parameters are not supported");
}

StreamFormat stream_format(const Candidate& first, const Stream& stream,
                           const std::optional<StreamParams>& params) {
  StreamFormat f;
  f.channels = first.channels;
  auto pick = [&](std::uint32_t coded, std::uint32_t info, std::uint32_t given, const char* what) {
    if (coded) return coded;
    if (stream.has_streaminfo && info) return info;
    if (params && given) return given;
    throw Error(std::string("frame header at byte ") + std::to_string(first.pos) + " takes its " +
                what + " from STREAMINFO, and there is none: give the stream parameters");
  };
  f.bits_per_sample = pick(first.bits_per_sample, stream.info.bits_per_sample,
                           params ? params->bits_per_sample : 0, "bit depth");
  f.sample_rate = pick(first.sample_rate, stream.info.sample_rate, params ? params->sample_rate : 0,
                       "sample rate");
  return f;
}

FrameIndex build_frame_index(const std::vector<Candidate>& cands, const Stream& stream,
                             const std::optional<StreamParams>& params, std::uint64_t data_size,
                             const FrameProbe& probe) {
  FrameIndex index;
  // The format comes from the first frame that decodes (as in the serial decoder): a damaged
  // or false first candidate must not decide it.
  auto first = cands.end();
  std::uint64_t first_end = 0;
  std::optional<StreamFormat> found;
  std::optional<Error> params_error;
  for (auto it = std::lower_bound(cands.begin(), cands.end(), stream.audio_offset,
                                  [](const Candidate&c, std::uint64_t p) { return c.pos < p; });
       it != cands.end() && !found; ++it) {
    try {
      const StreamFormat f = stream_format(*it, stream, params);
      // Decoded, not taken on the word of a verified successor: a frame whose CRC-16 holds can
      // still fail to decode (a syntax error in a subframe), and then the serial decoder takes
      // the format from a later frame.
      const auto end = probe(*it, f.bits_per_sample);
      if (end) {
        found = f;
        first = it;
        first_end = *end;
      }
    } catch (const Error& e) {
      if (!params_error) params_error = e;
    }
  }
  if (!found && params_error) throw *params_error;
  if (first == cands.end())
    first = std::find_if(cands.begin(), cands.end(),
                         [&](const Candidate& c) { return c.pos >= stream.audio_offset; });
  if (first == cands.end()) {
    if (stream.info.total_samples || data_size > stream.audio_offset)
      index.damage.push_back({stream.audio_offset, data_size - stream.audio_offset, 0, 0, 0,
                              "no decodable frame found"});
    index.channels = stream.info.channels;
    index.bits_per_sample = stream.info.bits_per_sample;
    index.sample_rate = stream.info.sample_rate;
    check_total(index, stream, data_size, 0);
    return index;
  }
  if (found) {
    const auto second =
        std::lower_bound(first, cands.end(), first_end,
                         [](const Candidate& c, std::uint64_t p) { return c.pos < p; });
    if (second != cands.end() && second->pos == first_end &&
        fixed_headers_code_samples(stream, *first, *second)) {
      // Links made for frame numbers do not hold: the walk verifies each frame by decoding it.
      std::vector<Candidate> as_variable = cands;
      for (Candidate& c : as_variable) {
        if (!c.variable) c.next = -1;
        c.variable = 1;
      }
      return build_frame_index(as_variable, stream, params, data_size, probe);
    }
  }
  const StreamFormat fmt = found ? *found : stream_format(*first, stream, params);
  index.channels = fmt.channels;
  index.bits_per_sample = fmt.bits_per_sample;
  index.sample_rate = fmt.sample_rate;
  if (stream.has_streaminfo) {
    if (stream.info.channels != fmt.channels ||
        stream.info.bits_per_sample != fmt.bits_per_sample ||
        (stream.info.sample_rate != fmt.sample_rate))
      index.warnings.push_back(
          "STREAMINFO disagrees with the frame headers; the frames are followed");
  }

  Walker walker(cands, fmt, probe);
  if (found && unbroken_index(cands, static_cast<std::size_t>(first - cands.begin()), walker,
                              stream.audio_offset, data_size, index)) {
    index.frames_numbered = index.frames.size();
    check_total(index, stream, data_size, index.frames.size());
    return index;
  }
  // The walk starts at the frame that set the format: headers before it did not decode with
  // their own parameters (as the serial decoder judges them), and must not be taken in with the
  // format of a later frame (a bit depth deferred to STREAMINFO read as that frame's).
  std::vector<Link> chain =
      walker.walk(stream.audio_offset, found ? first->pos : stream.audio_offset, data_size);
  if (chain.empty()) {
    index.damage.push_back({stream.audio_offset, data_size - stream.audio_offset, 0, 0, 0,
                            "no decodable frame found"});
    check_total(index, stream, data_size, 0);
    return index;
  }

  // Fixed-block-size streams number frames; all but the last share one block size.
  const Candidate& head = cands[chain.front().cand];
  std::uint32_t nominal = head.block_size;
  for (std::size_t k = 0; k + 1 < chain.size(); ++k)
    if (chain[k].kind == Link::good) {
      nominal = cands[chain[k].cand].block_size;
      break;
    }
  auto first_sample = [&](const Candidate& c) {
    return c.variable ? c.number : c.number * nominal;
  };

  const auto [gap_begin, gap_end] = walker.leading_gap_;
  const std::uint64_t base =
      (gap_end > gap_begin && stream.has_streaminfo) ? 0 : first_sample(head);
  std::uint64_t out_end = 0;  // one past the last output sample so far
  // Where a frame's samples go: where its number says, less the silence that jumps forward in
  // the numbering were not given (max_number_gap after the last good frame, or before the first).
  std::uint64_t dropped = 0;     // numbered samples not in the output
  std::uint32_t good_block = 0;  // the last good frame's block size, 0 before the first
  auto place = [&](const Candidate& c) {
    const std::uint64_t numbered = first_sample(c) - base;
    std::uint64_t at = numbered > dropped ? numbered - dropped : 0;
    const std::uint64_t limit =
        out_end + max_number_gap(fmt.sample_rate, good_block ? good_block : c.block_size);
    if (at > limit) {
      dropped += at - limit;
      at = limit;
    }
    return at;
  };
  if (gap_end > gap_begin)
    index.damage.push_back({gap_begin, gap_end - gap_begin, 0, 0, place(head),
                            "no valid frame where the audio should start"});

  std::size_t last_frame = chain.size() - 1;  // the last link that is a frame, not a gap
  while (chain[last_frame].kind == Link::gap) --last_frame;
  std::uint64_t frame_number = 0;
  index.frames.reserve(chain.size());
  for (std::size_t k = 0; k < chain.size(); ++k) {
    const Link& l = chain[k];
    const Candidate& c = cands[l.cand];
    // A damaged frame's own number is not trusted: its silence starts where the good output
    // ends, as in the serial decoder.
    const std::uint64_t begin = (l.kind != Link::good && k > 0) ? out_end : place(c);
    if (l.kind == Link::gap) {
      const std::uint64_t next_begin =
          k + 1 < chain.size() ? place(cands[chain[k + 1].cand]) : out_end;
      index.damage.push_back({chain[k - 1].end, l.end - chain[k - 1].end, frame_number, out_end,
                              next_begin > out_end ? next_begin - out_end : 0, why(l.kind)});
      out_end = std::max(out_end, next_begin);
      continue;
    }
    std::uint64_t span = c.block_size;
    ++frame_number;
    // The last frame of a fixed-block-size stream may have any size (as in the serial decoder).
    if (!c.variable && c.block_size != nominal && k != last_frame) {
      index.damage.push_back({c.pos, l.end - c.pos, frame_number - 1, begin, nominal,
                              describe(FrameError::block_size_change)});
      out_end = std::max(out_end, begin + nominal);
      continue;
    }
    if (l.kind == Link::good) {
      index.frames.push_back({c.pos, l.end, begin, c.block_size});
      good_block = c.block_size;
    } else {
      // A damaged frame covers the samples up to the next good frame, or its own block.
      const std::uint64_t next_begin =
          k + 1 < chain.size() ? place(cands[chain[k + 1].cand]) : begin + span;
      span = next_begin > begin ? next_begin - begin : 0;
      index.damage.push_back({c.pos, l.end - c.pos, frame_number - 1, begin, span, why(l.kind)});
    }
    out_end = std::max(out_end, begin + span);
  }
  // libFLAC reports lost sync there (`flac -t` fails): damage that costs no samples.
  if (const auto [tail_begin, tail_end] = walker.trailing_gap_; tail_end > tail_begin)
    index.damage.push_back(
        {tail_begin, tail_end - tail_begin, frame_number, out_end, 0, kAfterLastFrame});
  index.total_samples = out_end;
  index.frames_numbered = frame_number;
  check_total(index, stream, data_size, frame_number);
  return index;
}

void check_total_samples(std::uint64_t have, const Stream& stream, std::uint64_t data_size,
                         std::uint64_t frame_number, std::vector<Damage>& damage,
                         std::vector<std::string>& warnings) {
  const std::uint64_t want = stream.info.total_samples;
  if (!stream.has_streaminfo || !want || want == have) return;
  if (want > have)
    damage.push_back({data_size, 0, frame_number, have, 0,
                      "stream ends after " + std::to_string(have) + " samples, STREAMINFO says " +
                          std::to_string(want) + " (truncated?)"});
  else
    warnings.push_back("STREAMINFO says " + std::to_string(want) + " samples, the frames hold " +
                       std::to_string(have));
}

}  // namespace sigpu::flac
