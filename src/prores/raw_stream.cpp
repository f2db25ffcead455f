// RawStream: raw 'icpf' frames from a file descriptor in one pass. A window of the input is
// buffered from the oldest byte the splitter may still need; each call copies its frames out
// and drops the window's head, so memory follows the frames of one call.
#include <algorithm>
#include <array>
#include <cstring>

#include <sigpu/prores.hpp>

#include "prores/clip_source.hpp"
#include "prores/raw_split.hpp"

namespace sigpu::prores {

struct RawStream::Impl {
  int fd = -1;
  std::string name;
  std::vector<std::uint8_t> window;  ///< input bytes from `base` on
  std::uint64_t base = 0;
  bool ended = false;
  std::uint64_t frames = 0;
  RawSplitter split{[this](std::uint64_t at, std::span<std::uint8_t> dst) { return read(at, dst); },
                    [this](std::uint64_t at) { release(at); }};

  std::size_t read(std::uint64_t at, std::span<std::uint8_t> dst) {
    if (at < base) throw Error(name + ": stream read before byte " + std::to_string(base));
    // Grows the window only by bytes that arrive, never by a size read from the input.
    while (!ended && base + window.size() < at + dst.size()) {
      const std::size_t have = window.size();
      const std::size_t want = std::max<std::size_t>(1 << 16, at + dst.size() - base - have);
      window.resize(have + std::min<std::size_t>(want, 1 << 24));
      const std::size_t n = read_fully(fd, {window.data() + have, window.size() - have}, name);
      window.resize(have + n);
      if (n == 0) ended = true;
    }
    if (at >= base + window.size()) return 0;
    const std::size_t off = static_cast<std::size_t>(at - base);
    const std::size_t n = std::min(dst.size(), window.size() - off);
    std::memcpy(dst.data(), window.data() + off, n);
    return n;
  }

  void release(std::uint64_t at) {
    if (at <= base) return;
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(at - base, window.size()));
    window.erase(window.begin(), window.begin() + static_cast<std::ptrdiff_t>(n));
    base += n;
  }
};

RawStream::RawStream(int fd, std::string name) : impl_(std::make_unique<Impl>()) {
  impl_->fd = fd;
  impl_->name = std::move(name);
  std::array<std::uint8_t, 8> head{};
  const std::size_t n = impl_->read(0, head);
  if (n == 0) throw InputError(impl_->name + ": empty input");
  if (looks_like_mov({head.data(), n}))
    throw UnsupportedError(impl_->name + ": MOV needs a seekable file (not a pipe)");
}

RawStream::~RawStream() = default;
RawStream::RawStream(RawStream&&) noexcept = default;
RawStream& RawStream::operator=(RawStream&&) noexcept = default;

Clip RawStream::next(std::size_t max_frames) {
  Impl& s = *impl_;
  Clip c;
  c.path = s.name;
  c.container = "raw";
  c.first_frame = s.frames;
  std::vector<std::uint8_t>& bytes = c.bytes;
  for (std::size_t i = 0; i < std::max<std::size_t>(max_frames, 1); ++i) {
    const auto f = s.split.next(s.frames, c.skipped);
    if (!f) break;
    const std::size_t at = bytes.size();
    bytes.resize(at + f->size);
    s.read(f->offset, {bytes.data() + at, f->size});
    s.release(f->offset + f->size);
    c.frames.push_back({at, f->size});
    ++s.frames;
  }
  if (s.frames == 0) throw InputError(s.name + ": no ProRes frame found");
  return c;
}

}  // namespace sigpu::prores
