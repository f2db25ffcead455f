// Public API glue: frames and formats, and decode() choosing a backend.
#include <algorithm>
#include <optional>
#include <string>

#include <sigpu/prores.hpp>

#include "prores/decode_cpu.hpp"
#include "prores/frame_parse.hpp"

namespace sigpu::prores {

std::string PixelFormat::name() const {
  return std::string(alpha ? "yuva" : "yuv") + (chroma == Chroma::c444 ? "444" : "422") + "p" +
         std::to_string(bit_depth) + "le";
}

int Frame::plane_width(int p) const {
  return (p == 1 || p == 2) && format.chroma == Chroma::c422 ? (width + 1) / 2 : width;
}
std::size_t Frame::plane_size(int p) const {
  return static_cast<std::size_t>(plane_width(p)) * static_cast<std::size_t>(height);
}
std::span<const std::uint16_t> Frame::plane(int p) const {
  std::size_t off = 0;
  for (int i = 0; i < p; ++i) off += plane_size(i);
  return {samples.data() + off, plane_size(p)};
}
std::span<std::uint16_t> Frame::plane(int p) {
  std::size_t off = 0;
  for (int i = 0; i < p; ++i) off += plane_size(i);
  return {samples.data() + off, plane_size(p)};
}

std::string Damage::message() const {
  if (bytes)
    return "bytes " + std::to_string(offset) + ".." + std::to_string(offset + bytes) + " (" +
           std::to_string(bytes) + ") skipped, before frame " + std::to_string(frame) + ": " + what;
  std::string s = "frame " + std::to_string(frame);
  if (slice >= 0) {
    if (picture) s += " field 2";
    s += " slice " + std::to_string(slice) + " (macroblock " + std::to_string(mb_x) + "," +
         std::to_string(mb_y) + ")";
  }
  return s + ": " + what;
}

namespace {

void check_size(const ParsedFrame& pf, const DecodeOptions& o) {
  const auto pixels = static_cast<std::uint64_t>(pf.shape.width) * pf.shape.height;
  if (o.max_pixels && pixels > o.max_pixels)
    throw Error(std::to_string(pf.shape.width) + "x" + std::to_string(pf.shape.height) +
                " exceeds the limit of " + std::to_string(o.max_pixels) + " pixels");
}

void throw_if_stopping(const DecodeOptions& o, const DecodeReport& r, std::size_t before) {
  if (o.stop_on_damage && r.damage.size() > before) throw Error(r.damage[before].message());
}

// Each skipped byte range once over calls that cover the clip: with the frame after it, or
// with the last frame when none follows (or with an empty clip's only call).
void report_skipped(const Clip& clip, std::size_t first, std::size_t end, DecodeReport& r) {
  const std::size_t n = clip.frames.size();
  for (const Damage& d : clip.skipped) {
    const std::uint64_t at = d.frame - std::min(d.frame, clip.first_frame);
    const bool here = at < n ? (at >= first && at < end) : (end == n && (first < end || n == 0));
    if (here) r.damage.push_back(d);
  }
}

}  // namespace

Frame decode_frame(std::span<const std::uint8_t> frame, int bit_depth, DecodeReport& report,
                   const DecodeOptions& options, std::uint64_t frame_number) {
  if (bit_depth != 10 && bit_depth != 12)
    throw Error("bit depth must be 10 or 12, not " + std::to_string(bit_depth));
  ParsedFrame pf;
  try {
    pf = parse_frame(frame, bit_depth);
    check_size(pf, options);
  } catch (const Error& e) {
    throw Error("frame " + std::to_string(frame_number) + ": " + e.what());
  }
  Frame out = make_frame(pf);
  const std::size_t before = report.damage.size();
  decode_slices_cpu(frame, pf, out.samples.data(), resolve(options.backend) != Backend::cpu,
                    frame_number, report.damage);
  ++report.frames;
  throw_if_stopping(options, report, before);
  return out;
}

Decoded decode(const Clip& clip, const DecodeOptions& options, std::size_t first, std::size_t count,
               CudaDecoder* gpu) {
  Decoded out;
  const Backend backend = resolve(options.backend);
  out.report.backend = backend;
  if (first > clip.frames.size()) first = clip.frames.size();
  const std::size_t end =
      count == 0 ? clip.frames.size() : std::min(clip.frames.size(), first + count);
  int depth = options.bit_depth;
  report_skipped(clip, first, end, out.report);
  throw_if_stopping(options, out.report, 0);
  // A frame whose header is unusable becomes a grey copy of the last good frame's shape.
  std::optional<ParsedFrame> last_good;
  auto conceal_frame = [&](std::uint64_t number, const std::string& why) {
    out.report.damage.push_back({number, 0, -1, 0, 0, why});
    if (!last_good) throw Error(clip.path + ": frame " + std::to_string(number) + ": " + why);
    out.frames.push_back(concealed_frame(*last_good));
    throw_if_stopping(options, out.report, out.report.damage.size() - 1);
  };
  if (backend == Backend::cuda) {
    std::optional<CudaDecoder> own;
    if (!gpu) gpu = &own.emplace(options.device);
    const std::size_t batch = options.batch > 0 ? static_cast<std::size_t>(options.batch) : 16;
    // One buffer per frame of a batch, reused: a file-backed clip is read a batch at a time.
    std::vector<std::vector<std::uint8_t>> buffers(std::min(batch, end - first));
    for (std::size_t i = first; i < end; i += batch) {
      std::vector<std::span<const std::uint8_t>> spans;
      for (std::size_t j = i; j < std::min(end, i + batch); ++j)
        spans.push_back(clip.frame(j, buffers[j - i]));
      for (std::size_t j = 0; !depth && j < spans.size(); ++j) {
        try {
          depth = clip.bit_depth(parse_frame_header(spans[j]));
        } catch (const Error&) {
          // reported by the decoder below
        }
      }
      const std::size_t before = out.report.damage.size();
      auto frames = gpu->decode(spans, depth ? depth : 10, out.report, clip.first_frame + i);
      throw_if_stopping(options, out.report, before);
      for (auto& f : frames) out.frames.push_back(std::move(f));
    }
    return out;
  }
  std::vector<std::uint8_t> buffer;  // a file-backed clip is read one frame at a time
  for (std::size_t i = first; i < end; ++i) {
    const std::uint64_t number = clip.first_frame + i;
    const auto bytes = clip.frame(i, buffer);
    ParsedFrame pf;
    try {
      if (!depth) depth = clip.bit_depth(parse_frame_header(bytes));
      pf = parse_frame(bytes, depth);
      check_size(pf, options);
    } catch (const Error& e) {
      conceal_frame(number, e.what());
      continue;
    }
    Frame f = make_frame(pf);
    const std::size_t before = out.report.damage.size();
    decode_slices_cpu(bytes, pf, f.samples.data(), backend == Backend::cpu_parallel, number,
                      out.report.damage);
    ++out.report.frames;
    throw_if_stopping(options, out.report, before);
    out.frames.push_back(std::move(f));
    last_good = std::move(pf);
  }
  return out;
}

}  // namespace sigpu::prores
