#include "prores/raw_split.hpp"

#include <array>
#include <cstring>

namespace sigpu::prores {

bool has_icpf_tag(std::span<const std::uint8_t> b) {
  return b.size() >= 8 && std::memcmp(b.data() + 4, "icpf", 4) == 0;
}

bool looks_like_mov(std::span<const std::uint8_t> b) {
  if (b.size() < 8) return false;
  for (const char* atom : {"ftyp", "moov", "mdat", "wide", "free", "skip", "pnot"})
    if (std::memcmp(b.data() + 4, atom, 4) == 0) return true;
  return false;
}

std::optional<std::uint64_t> RawSplitter::find_tag(std::uint64_t from, std::uint64_t& end,
                                                   bool release) {
  // Chunks overlap by 3 bytes so that a tag across a chunk boundary is seen.
  constexpr std::size_t kChunk = 1 << 16;
  std::vector<std::uint8_t> buf(kChunk);
  std::uint64_t at = from + 4;  // the tag of a frame starting at `from`
  for (;;) {
    if (release && release_) release_(at - 4);
    const std::size_t n = read_(at, buf);
    for (std::size_t i = 0; i + 4 <= n; ++i)
      if (std::memcmp(buf.data() + i, "icpf", 4) == 0) return at + i - 4;
    if (n < kChunk) {
      // The last frame start that could still hold a whole 8-byte box is irrelevant here:
      // without a tag there is no frame, so the input's end is where the scan stopped.
      end = at + n;
      if (n == 0) {
        // `at` may lie past the end (a frame start near it): find where the input ends.
        std::uint8_t b;
        std::uint64_t lo = from;
        while (lo < at && read_(lo, {&b, 1}) == 1) ++lo;
        end = lo;
      }
      return std::nullopt;
    }
    at += n - 3;
  }
}

void RawSplitter::skip_to(std::uint64_t stop, std::uint64_t frame_number,
                          std::vector<Damage>& skipped, const std::string& why) {
  if (stop > pos_) {
    if (!skipped.empty() && skipped.back().offset + skipped.back().bytes == pos_) {
      skipped.back().bytes += stop - pos_;
    } else {
      Damage d;
      d.frame = frame_number;
      d.what = why;
      d.offset = pos_;
      d.bytes = stop - pos_;
      skipped.push_back(std::move(d));
    }
  }
  pos_ = stop;
}

bool RawSplitter::resync(std::uint64_t from, std::uint64_t frame_number,
                         std::vector<Damage>& skipped, const std::string& why) {
  std::uint64_t end = 0;
  const auto q = find_tag(from, end, true);
  skip_to(q ? *q : end, frame_number, skipped, why);
  return q.has_value();
}

std::optional<Clip::Span> RawSplitter::next(std::uint64_t frame_number,
                                            std::vector<Damage>& skipped) {
  for (;;) {
    std::array<std::uint8_t, 8> h{};
    const std::size_t n = read_(pos_, h);
    if (n == 0) return std::nullopt;
    if (n < 8 || !has_icpf_tag(h)) {
      if (!resync(pos_ + 1, frame_number, skipped, "no 'icpf' frame box")) return std::nullopt;
      continue;
    }
    const std::uint64_t size = (std::uint64_t{h[0]} << 24) | (std::uint64_t{h[1]} << 16) |
                               (std::uint64_t{h[2]} << 8) | h[3];
    if (size < kMinRawFrame) {
      if (!resync(pos_ + 1, frame_number, skipped,
                  "frame size field " + std::to_string(size) + " is smaller than a frame"))
        return std::nullopt;
      continue;
    }
    std::array<std::uint8_t, 8> t{};
    const std::size_t m = read_(pos_ + size, t);
    if (m == 8 && !has_icpf_tag(t)) {
      // With no frame anywhere after it, the size is taken as right and what follows as
      // trailing bytes (skipped by the next call).
      std::uint64_t end = 0;
      const auto q = find_tag(pos_ + 8, end, false);
      if (!q) {
        const Clip::Span f{pos_, size};
        pos_ += size;
        return f;
      }
      skip_to(*q, frame_number, skipped,
              "frame size field " + std::to_string(size) +
                  " does not lead to the next frame's 'icpf' tag");
      continue;
    }
    std::uint8_t last = 0;
    if (m > 0 || read_(pos_ + size - 1, {&last, 1}) == 1) {
      // Whole, and followed by a frame, by the end, or by bytes the next call skips.
      const Clip::Span f{pos_, size};
      pos_ += size;
      return f;
    }
    // The size runs past the end: a bad size field when another frame follows, else a last
    // frame cut short, kept (its missing slices are reported when decoding).
    std::uint64_t end = 0;
    if (const auto q = find_tag(pos_ + 8, end, false)) {
      skip_to(*q, frame_number, skipped,
              "frame size field " + std::to_string(size) + " runs past the next frame");
      continue;
    }
    const Clip::Span f{pos_, end - pos_};
    pos_ = end;
    return f;
  }
}

}  // namespace sigpu::prores
