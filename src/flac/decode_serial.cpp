// The serial reference decoder. It reads frame after frame, verifying each CRC-16 as it goes,
// and on damage scans forward byte by byte for the next frame that decodes, as libFLAC does.
// It shares the frame logic with the parallel backends but none of their search.
#include <algorithm>
#include <cstring>

#include "flac/backends.hpp"
#include "flac/frame_host.hpp"

namespace sigpu::flac {
namespace {

class SerialDecoder {
 public:
  SerialDecoder(std::span<const std::uint8_t> f, const Stream& s,
                const std::optional<StreamParams>& p)
      : d_(f.data()), n_(f.size()), stream_(s), params_(p) {}

  DecodeOutput run() {
    std::size_t pos = stream_.audio_offset;
    while (pos < n_) {
      const std::size_t next = try_frame(pos);
      if (next) {
        pos = next;
        continue;
      }
      if (!damage_) damage_ = Pending{pos, out_end_, pending_block_};
      ++pos;
    }
    finish();
    return std::move(out_);
  }

 private:
  struct Pending {
    std::uint64_t pos, first_sample,
        block;  // block: samples of the damaged frame if its header was valid
  };

  std::uint64_t first_sample(const Candidate& c) const {
    return c.variable ? c.number : c.number * nominal_;
  }

  /// Decodes the frame at pos if there is one that fits the sequence; returns its end or 0.
  std::size_t try_frame(std::size_t pos) {
    pending_block_ = 0;
    Candidate c;
    if (!header_candidate(d_, n_, pos, kCrcTables.crc8, c)) return 0;
    if (sample_numbers_) c.variable = 1;
    if (have_last_ && (c.variable != last_.variable || c.number < min_number_)) return 0;
    // Until a frame has decoded, a header is judged by its own parameters; the first frame
    // that decodes sets the stream's format (the parallel backends use the same rule).
    std::optional<StreamFormat> own_format;
    try {
      own_format = fmt_ ? *fmt_ : stream_format(c, stream_, params_);
    } catch (const Error& e) {
      if (!params_error_) params_error_ = e;  // rethrown if no frame decodes at all
      return 0;
    }
    const StreamFormat f = *own_format;
    const bool consistent = c.channels == f.channels &&
                            (!c.bits_per_sample || c.bits_per_sample == f.bits_per_sample) &&
                            (!c.sample_rate || c.sample_rate == f.sample_rate);
    if (!consistent) {
      // Different parameters: a real change if it directly continues the last good frame and
      // decodes (refused), otherwise a false sync.
      const auto own = decode_frame_host(d_, n_, {pos, 0},
                                         c.bits_per_sample ? c.bits_per_sample : f.bits_per_sample,
                                         true, scratch_, [](unsigned, unsigned, std::int32_t) {});
      if (have_last_ && !damage_ && continues(last_, c) && own.error == FrameError::ok)
        throw parameter_change(f, c);
      return 0;
    }
    if (!fmt_ && codes_samples(c, pos, f.bits_per_sample)) {
      sample_numbers_ = true;
      c.variable = 1;
    }
    if (!nominal_) nominal_ = c.block_size;
    std::uint64_t dropped = dropped_;
    const std::uint64_t begin = have_base_ ? place(c, dropped) : 0;
    const std::size_t ch = c.channels;
    const std::size_t old_size = samples_.size();
    samples_.resize(std::max(old_size, (begin + c.block_size) * ch));
    auto sink = [&](unsigned i, unsigned channel, std::int32_t v) {
      samples_[(begin + i) * ch + channel] = v;
    };
    const HostFrameResult r =
        decode_frame_host(d_, n_, {pos, 0}, f.bits_per_sample, true, scratch_, sink);
    if (r.error != FrameError::ok) {
      samples_.resize(old_size);
      if (!damage_) pending_block_ = c.block_size;
      return 0;
    }
    if (!fmt_) fmt_ = f;
    dropped_ = dropped;
    if (!have_base_) {
      have_base_ = true;
      const bool leading_damage = pos != stream_.audio_offset;
      base_ = leading_damage && stream_.has_streaminfo ? 0 : first_sample(c);
      if (base_ != 0 || !leading_damage) {
        // Output index 0 is this frame; the sink above wrote at begin = 0.
      } else {
        move_first_frame(place(c, dropped_), c);
      }
    }
    const std::uint64_t frame_begin = place(c, dropped_);
    if (have_last_ && !last_.variable && last_.block_size != nominal_) {
      // Only the last frame of a fixed-block-size stream may be shorter; this one was not last.
      const std::uint64_t lb = last_begin_,
                          le = std::min<std::uint64_t>(frame_begin, lb + last_.block_size);
      std::fill(samples_.begin() + lb * ch, samples_.begin() + le * ch, 0);
      out_.damage.push_back({last_.pos, last_end_ - last_.pos, frame_number_ - 1, lb, nominal_,
                             describe(FrameError::block_size_change)});
      --out_.frames;
    }
    if (damage_) {
      out_.damage.push_back(
          {damage_->pos, pos - damage_->pos, frame_number_, damage_->first_sample,
           frame_begin > damage_->first_sample ? frame_begin - damage_->first_sample : 0,
           damage_->block ? "frame does not decode (CRC or syntax error)"
                          : (damage_->pos == stream_.audio_offset && out_.frames == 0
                                 ? "no valid frame where the audio should start"
                                 : "undecodable data between frames")});
      if (damage_->block) ++frame_number_;
      damage_.reset();
    }
    ++frame_number_;
    ++out_.frames;
    out_end_ = std::max(out_end_, frame_begin + c.block_size);
    last_ = c;
    last_begin_ = frame_begin;
    last_end_ = r.end;
    have_last_ = true;
    min_number_ = c.number + (c.variable ? c.block_size : 1);
    return r.end;
  }

  /// Where frame c's samples go (frame_index.cpp's rule): where its number says, less the silence
  /// that jumps forward in the numbering were not given; `dropped` counts the samples left out.
  std::uint64_t place(const Candidate& c, std::uint64_t& dropped) const {
    const std::uint64_t numbered = first_sample(c) - base_;
    std::uint64_t at = numbered > dropped ? numbered - dropped : 0;
    const std::uint64_t limit =
        out_end_ +
        max_number_gap(fmt_ ? fmt_->sample_rate : 0, have_last_ ? last_.block_size : c.block_size);
    if (at > limit) {
      dropped += at - limit;
      at = limit;
    }
    return at;
  }

  /// Whether the first frame, at pos, and the header right after it say that fixed-strategy
  /// headers code sample numbers (fixed_headers_code_samples).
  bool codes_samples(const Candidate& c, std::size_t pos, unsigned bps) {
    if (c.variable) return false;
    const auto r = decode_frame_host(d_, n_, {pos, 0}, bps, true, scratch_,
                                     [](unsigned, unsigned, std::int32_t) {});
    Candidate next;
    return r.error == FrameError::ok && header_candidate(d_, n_, r.end, kCrcTables.crc8, next) &&
           fixed_headers_code_samples(stream_, c, next);
  }

  /// With leading damage and a STREAMINFO, output starts at sample 0: shift the first frame
  /// (decoded at index 0) to its true place and leave silence before it.
  void move_first_frame(std::uint64_t first, const Candidate& c) {
    const std::size_t ch = c.channels;
    std::vector<std::int32_t> frame(samples_.begin(),
                                    samples_.begin() + std::size_t(c.block_size) * ch);
    samples_.assign((first + c.block_size) * ch, 0);
    std::copy(frame.begin(), frame.end(), samples_.begin() + first * ch);
    if (damage_) damage_->first_sample = 0;
  }

  void finish() {
    if (!fmt_ && params_error_) throw *params_error_;
    if (damage_) {
      if (damage_->block) {
        out_.damage.push_back({damage_->pos, n_ - damage_->pos, frame_number_,
                               damage_->first_sample, damage_->block,
                               "frame does not decode (CRC or syntax error)"});
        out_end_ = damage_->first_sample + damage_->block;
        ++frame_number_;  // numbered as the index numbers it: a truncation below is the next
      } else if (out_.frames == 0) {
        out_.damage.push_back(
            {damage_->pos, n_ - damage_->pos, 0, 0, 0, "no decodable frame found"});
      } else {
        out_.damage.push_back(
            {damage_->pos, n_ - damage_->pos, frame_number_, out_end_, 0, kAfterLastFrame});
      }
    }
    const std::uint32_t ch = fmt_ ? fmt_->channels : stream_.info.channels;
    samples_.resize(out_end_ * ch);
    if (stream_.has_streaminfo && stream_.info.total_samples &&
        stream_.info.total_samples != out_end_) {
      if (stream_.info.total_samples > out_end_)
        out_.damage.push_back({n_, 0, frame_number_, out_end_, 0,
                               "stream ends after " + std::to_string(out_end_) +
                                   " samples, STREAMINFO says " +
                                   std::to_string(stream_.info.total_samples) + " (truncated?)"});
      else
        out_.warnings.push_back("STREAMINFO says " + std::to_string(stream_.info.total_samples) +
                                " samples, the frames hold " + std::to_string(out_end_));
    }
    out_.frames_numbered = frame_number_;
    Pcm& p = out_.pcm;
    p.channels = ch;
    p.bits_per_sample = fmt_ ? fmt_->bits_per_sample : stream_.info.bits_per_sample;
    p.sample_rate = fmt_ ? fmt_->sample_rate : stream_.info.sample_rate;
    p.samples = out_end_;
    p.bytes.resize(samples_.size() * 4);
    if (!samples_.empty()) std::memcpy(p.bytes.data(), samples_.data(), p.bytes.size());
  }

  const std::uint8_t* d_;
  std::size_t n_;
  const Stream& stream_;
  const std::optional<StreamParams>& params_;
  DecodeOutput out_;
  std::vector<std::int32_t> samples_;  // interleaved
  std::vector<std::int64_t> scratch_;
  std::optional<StreamFormat> fmt_;
  std::optional<Error> params_error_;
  std::optional<Pending> damage_;
  std::uint64_t pending_block_ = 0;
  std::uint64_t dropped_ = 0;    // numbered samples left out of the output (place)
  bool sample_numbers_ = false;  // fixed-strategy headers code sample numbers
  std::uint32_t nominal_ = 0;
  bool have_base_ = false, have_last_ = false;
  std::uint64_t base_ = 0, out_end_ = 0, min_number_ = 0, frame_number_ = 0, last_begin_ = 0,
                last_end_ = 0;
  Candidate last_;
};

}  // namespace

DecodeOutput decode_serial(std::span<const std::uint8_t> file, const Stream& stream,
                           const std::optional<StreamParams>& params) {
  return SerialDecoder(file, stream, params).run();
}

}  // namespace sigpu::flac
