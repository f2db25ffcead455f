// Several devices at once: the split (split.hpp), a host thread per piece, the join.
#include "flac/multi_device.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <exception>
#include <thread>

#include "core/thread_pool.hpp"
#include "flac/backends.hpp"
#include "flac/decoder_common.hpp"
#include "flac/gpu_driver.hpp"
#include "flac/gpu_pool.hpp"
#include "flac/split.hpp"

namespace sigpu::flac {
namespace {

/// Runs fn(k) for k in [0, n) on a thread each (inline when n is 1); the first exception of
/// piece k lands in errors[k].
std::vector<std::exception_ptr> run_pieces(std::size_t n,
                                           const std::function<void(std::size_t)>& fn) {
  std::vector<std::exception_ptr> errors(n);
  auto guarded = [&](std::size_t k) {
    try {
      fn(k);
    } catch (...) {
      errors[k] = std::current_exception();
    }
  };
  if (n == 1) {
    guarded(0);
    return errors;
  }
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (std::size_t k = 0; k < n; ++k) threads.emplace_back(guarded, k);
  for (auto& t : threads) t.join();
  return errors;
}

std::string message_of(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "unknown error";
  }
}

/// The options of one piece: one device, the caller's checks left to the join.
DecodeOptions piece_options(const DecodeOptions& o) {
  DecodeOptions p = o;
  p.devices.clear();
  p.parts = 0;
  return p;
}

/// Where a part's samples go in the joined output: `count` samples from `at`, silence where the
/// part is shorter.
struct Placement {
  std::uint64_t at = 0, count = 0;
};

/// Fills samples [from, to) of a placement (counted from its start) in `dst`, a PCM of out's
/// shape and `total` samples per channel.
void place(std::uint8_t* dst, const Pcm& out, std::uint64_t total, const Placement& p,
           const Pcm& part, std::uint64_t from, std::uint64_t to) {
  const std::size_t v = bytes_per_sample(out.format), ch = out.channels;
  const std::uint64_t have = std::min(to, std::max(from, std::min(p.count, part.samples)));
  // [a, b) of the placement from the part's sample a, or silence.
  auto fill = [&](std::uint64_t a, std::uint64_t b, bool copy) {
    if (a >= b) return;
    if (out.layout == Layout::interleaved) {
      std::uint8_t* at = dst + (p.at + a) * ch * v;
      if (copy)
        std::memcpy(at, part.bytes.data() + a * ch * v, (b - a) * ch * v);
      else
        std::memset(at, 0, (b - a) * ch * v);
      return;
    }
    for (std::size_t c = 0; c < ch; ++c) {
      std::uint8_t* at = dst + (c * total + p.at + a) * v;
      if (copy)
        std::memcpy(at, part.bytes.data() + (c * part.samples + a) * v, (b - a) * v);
      else
        std::memset(at, 0, (b - a) * v);
    }
  };
  fill(from, have, true);
  fill(have, to, false);
}

/// Joins the parts into `dst` (a PCM of out's shape) on all cores: gigabytes of PCM, first
/// touched here. Parts already in place (decoded into `dst`) are skipped.
void join(std::uint8_t* dst, const Pcm& out, const std::vector<Placement>& places,
          const std::vector<Decoded>& got, const std::vector<bool>& in_place) {
  constexpr std::uint64_t kChunk = 1 << 16;  // samples per channel
  const std::uint64_t total = out.samples;
  ThreadPool::shared().parallel_for(
      (total + kChunk - 1) / kChunk,
      [&](std::size_t b, std::size_t e) {
        for (std::size_t chunk = b; chunk < e; ++chunk) {
          const std::uint64_t s0 = chunk * kChunk, s1 = std::min(total, s0 + kChunk);
          for (std::size_t k = 0; k < places.size(); ++k) {
            if (in_place[k]) continue;
            const Placement& p = places[k];
            const std::uint64_t from = std::max(s0, p.at), to = std::min(s1, p.at + p.count);
            if (from < to) place(dst, out, total, p, got[k].pcm, from - p.at, to - p.at);
          }
        }
      },
      1);
}

/// The number of pieces the options ask for, once their device list is checked.
std::size_t checked_pieces(const DecodeOptions& o) {
  check_device_list(o.devices, cuda_devices().size());
  return o.parts ? o.parts : o.devices.size();
}

}  // namespace

bool multi_device(const DecodeOptions& o) {
  return !o.devices.empty();
}

std::vector<int> parse_devices(std::string_view spec) {
  const std::size_t visible = cuda_devices().size();
  std::vector<int> out;
  if (spec == "all") {
    if (!visible) throw UnsupportedError("--devices all: no CUDA device is visible");
    for (std::size_t i = 0; i < visible; ++i) out.push_back(static_cast<int>(i));
    return out;
  }
  for (std::size_t at = 0; at <= spec.size();) {
    const std::size_t comma = std::min(spec.find(',', at), spec.size());
    const std::string_view item = spec.substr(at, comma - at);
    int d = -1;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), d);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || d < 0)
      throw UsageError("device list '" + std::string(spec) + "': '" + std::string(item) +
                       "' is not a device index (give \"all\" or indices like 0,1)");
    out.push_back(d);
    at = comma + 1;
  }
  check_device_list(out, visible);
  return out;
}

Decoded decode_in_parts(std::span<const std::uint8_t> file, const DecodeOptions& o,
                        std::size_t parts, const PartDecoder& decode_part,
                        std::span<std::uint8_t> out) {
  Decoded d;
  d.stream = parse_stream(file);
  d.report.backend = resolve(o.backend);
  const StreamInfo& info = d.stream.info;
  const std::vector<StreamPart> cuts = split_at_frames(file, d.stream, parts);
  if (cuts.size() == 1) return decode_part(0, file, piece_options(o), out);  // all of it, as it is

  // The first part is the file's start, metadata and all; the others are runs of frames with
  // the stream's parameters.
  DecodeOptions po = piece_options(o);
  po.verify_md5 = false;
  po.stop_on_damage = false;
  if (!po.params && d.stream.has_streaminfo)
    po.params = StreamParams{info.sample_rate, info.channels, info.bits_per_sample};
  // Where the parts should go, when STREAMINFO gives the total and the output is interleaved:
  // each part's decoder may then write its PCM straight into the joined output.
  const std::size_t frame_bytes = std::size_t(info.channels) * bytes_per_sample(o.format);
  std::vector<Placement> predicted(cuts.size());
  const std::uint64_t first = cuts.front().first_sample;
  bool predict = d.stream.has_streaminfo && o.layout == Layout::interleaved &&
                 info.total_samples + first > cuts.back().first_sample;
  for (std::size_t k = 0; predict && k < cuts.size(); ++k) {
    const std::uint64_t next =
        k + 1 < cuts.size() ? cuts[k + 1].first_sample : info.total_samples + first;
    predicted[k] = {cuts[k].first_sample - first, next - cuts[k].first_sample};
  }
  const std::uint64_t predicted_total = predict ? info.total_samples : 0;
  if (o.max_output_bytes && predicted_total * frame_bytes > o.max_output_bytes) predict = false;
  // The caller's memory when it is the predicted size, else a buffer of our own.
  const bool external = predict && !out.empty() && out.size() == predicted_total * frame_bytes;
  ByteBuffer own(predict && !external ? predicted_total * frame_bytes : 0);
  const std::span<std::uint8_t> joined = external ? out : std::span<std::uint8_t>(own);
  std::vector<Decoded> got(cuts.size());
  const auto errors = run_pieces(cuts.size(), [&](std::size_t k) {
    const std::span<std::uint8_t> into =
        predict ? joined.subspan(predicted[k].at * frame_bytes, predicted[k].count * frame_bytes)
                : std::span<std::uint8_t>{};
    got[k] = decode_part(k, file.subspan(cuts[k].begin, cuts[k].end - cuts[k].begin), po, into);
  });
  for (std::size_t k = 0; k < cuts.size(); ++k)
    if (errors[k])
      throw Error("part " + std::to_string(k) + " (bytes " + std::to_string(cuts[k].begin) + ".." +
                  std::to_string(cuts[k].end) + "): " + message_of(errors[k]));

  // Where each part goes: the first where a whole decode starts, the others where their first
  // frame's number puts them after it. A part whose length disagrees with the next cut's
  // number (only damage could do that) is padded with silence or shortened.
  DecodeOutput r;
  std::vector<Placement> places(cuts.size());
  for (std::size_t k = 0; k < cuts.size(); ++k) {
    const Pcm& p = got[k].pcm;
    const Pcm& p0 = got[0].pcm;
    if (p.channels != p0.channels || p.bits_per_sample != p0.bits_per_sample ||
        p.sample_rate != p0.sample_rate)
      throw Error("part " + std::to_string(k) + " (byte " + std::to_string(cuts[k].begin) +
                  "): the stream's channel count, bit depth or sample rate changes");
    places[k].at = k == 0 ? 0 : p0.samples + (cuts[k].first_sample - cuts[1].first_sample);
    places[k].count =
        k > 0 && k + 1 < cuts.size() ? cuts[k + 1].first_sample - cuts[k].first_sample : p.samples;
    if (places[k].count != p.samples)
      r.warnings.push_back(
          "part " + std::to_string(k) + " (bytes " + std::to_string(cuts[k].begin) + ".." +
          std::to_string(cuts[k].end) + ") decoded to " + std::to_string(p.samples) +
          " samples, the frame numbers at its ends say " + std::to_string(places[k].count) + ": " +
          (p.samples < places[k].count ? "padded with silence" : "shortened"));
  }
  const std::uint64_t total = places.back().at + places.back().count;
  r.pcm = pcm_shape(got[0].pcm, total);
  const std::uint64_t bytes = total * r.pcm.channels * bytes_per_sample(r.pcm.format);
  if (o.max_output_bytes && bytes > o.max_output_bytes)
    throw Error("output would be " + std::to_string(bytes) + " bytes, over the limit of " +
                std::to_string(o.max_output_bytes));
  // Parts decoded into `joined` stay there when the prediction held; else they are taken out
  // and everything is joined afresh.
  std::vector<bool> in_place(cuts.size());
  const bool kept = predict && total == predicted_total;
  for (std::size_t k = 0; k < cuts.size(); ++k) {
    const Pcm& p = got[k].pcm;
    if (!predict || !p.bytes.empty() || p.samples != predicted[k].count || !p.samples) continue;
    if (kept && places[k].at == predicted[k].at && places[k].count == predicted[k].count) {
      in_place[k] = true;
    } else {
      const auto* at = joined.data() + predicted[k].at * frame_bytes;
      got[k].pcm.bytes.assign(at, at + p.samples * frame_bytes);
    }
  }
  if (kept && !external)
    r.pcm.bytes = std::move(own);
  else if (!kept)
    r.pcm.bytes.resize(bytes);
  std::uint8_t* dst = kept ? joined.data() : r.pcm.bytes.data();
  join(dst, r.pcm, places, got, in_place);

  std::uint64_t frames_before = 0, numbered_before = 0;
  for (std::size_t k = 0; k < cuts.size(); ++k) {
    DecodeReport& pr = got[k].report;
    for (Damage x : pr.damage) {
      // The first part's check of its length against STREAMINFO's total (which counts the
      // whole stream) is made again below, for the joined length.
      if (k == 0 && x.byte_length == 0 && x.byte_offset == cuts[0].end) continue;
      x.byte_offset += cuts[k].begin;
      x.first_sample += places[k].at;
      x.frame_number += numbered_before;
      r.damage.push_back(std::move(x));
    }
    // The first part's warnings start with the file's metadata warnings, which the joined
    // decode reports anyway.
    auto w = pr.warnings.begin();
    if (k == 0 && pr.warnings.size() >= d.stream.warnings.size() &&
        std::equal(d.stream.warnings.begin(), d.stream.warnings.end(), w))
      w += static_cast<std::ptrdiff_t>(d.stream.warnings.size());
    r.warnings.insert(r.warnings.end(), w, pr.warnings.end());
    frames_before += pr.frames;
    numbered_before += pr.frames_numbered;
  }
  r.frames = frames_before;
  r.frames_numbered = numbered_before;
  check_total_samples(total, d.stream, file.size(), r.frames_numbered, r.damage, r.warnings);
  finish_decode(d, std::move(r), o, true, nullptr, kept && external ? out.data() : nullptr);
  return d;
}

std::vector<BatchResult> decode_batch_in_shares(
    std::span<const std::span<const std::uint8_t>> files,
    std::span<const std::span<std::uint8_t>> outs, const DecodeOptions& o, std::size_t shares,
    const ShareDecoder& decode_share) {
  std::vector<std::uint64_t> sizes;
  for (const auto& f : files) sizes.push_back(f.size());
  const std::vector<std::size_t> bounds = share_by_bytes(sizes, shares);
  const DecodeOptions po = piece_options(o);
  std::vector<BatchResult> out(files.size());
  const auto errors = run_pieces(bounds.size() - 1, [&](std::size_t k) {
    if (bounds[k] == bounds[k + 1]) return;
    const std::size_t count = bounds[k + 1] - bounds[k];
    auto got = decode_share(k, files.subspan(bounds[k], count),
                            outs.empty() ? outs : outs.subspan(bounds[k], count), po);
    std::move(got.begin(), got.end(), out.begin() + static_cast<std::ptrdiff_t>(bounds[k]));
  });
  for (std::size_t k = 0; k + 1 < bounds.size(); ++k)
    if (errors[k])
      for (std::size_t i = bounds[k]; i < bounds[k + 1]; ++i) out[i].error = message_of(errors[k]);
  return out;
}

Decoded decode_multi_device(std::span<const std::uint8_t> file, const DecodeOptions& o,
                            std::span<std::uint8_t> out) {
  std::size_t parts = checked_pieces(o);
  const auto& devs = o.devices;
  // One split for everything: where one device would cut a pinned decode into parts to overlap
  // copies with kernels, every device takes that many parts of the whole.
  {
    EngineLease first(devs[0]);
    if (!o.parts) parts *= pinned_parts_for(*first, file, out, o);
    if (parts == 1) return gpu_decode_whole(*first, file, out, piece_options(o));
  }
  return decode_in_parts(
      file, o, parts,
      [&](std::size_t k, std::span<const std::uint8_t> part, const DecodeOptions& po,
          std::span<std::uint8_t> into) {
        return gpu_decode_whole(*EngineLease(devs[k % devs.size()]), part, into, po);
      },
      out);
}

std::vector<BatchResult> decode_batch_multi_device(
    std::span<const std::span<const std::uint8_t>> files,
    std::span<const std::span<std::uint8_t>> outs, const DecodeOptions& o) {
  const std::size_t shares = checked_pieces(o);
  const auto& devs = o.devices;
  if (shares == 1) return gpu_decode_batch(*EngineLease(devs[0]), files, outs, piece_options(o));
  return decode_batch_in_shares(
      files, outs, o, shares,
      [&](std::size_t k, std::span<const std::span<const std::uint8_t>> share,
          std::span<const std::span<std::uint8_t>> share_outs, const DecodeOptions& po) {
        return gpu_decode_batch(*EngineLease(devs[k % devs.size()]), share, share_outs, po);
      });
}

}  // namespace sigpu::flac
