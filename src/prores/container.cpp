// Getting coded frames out of files: raw concatenated 'icpf' frames, or QuickTime/MOV through
// libavformat (every ProRes FourCC, 32- and 64-bit chunk offsets; other tracks ignored). Frames
// are located once and read on demand from the file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include <sigpu/prores.hpp>

#include "prores/clip_source.hpp"
#include "prores/frame_parse.hpp"
#include "prores/raw_split.hpp"

#ifdef SIGPU_HAVE_LIBAVFORMAT
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
}

#include "core/container_probe.hpp"
#endif

namespace sigpu::prores {
namespace {

// Splits a whole raw input (the clip's file or bytes) and takes the frame size from the first
// frame.
Clip split_raw(Clip c) {
  c.container = "raw";
  const ClipSource* file = c.source.get();
  const std::vector<std::uint8_t>& bytes = c.bytes;
  RawSplitter split([file, &bytes](std::uint64_t at, std::span<std::uint8_t> dst) {
    if (file) return file->read(at, dst);
    if (at >= bytes.size()) return std::size_t{0};
    const std::size_t n = std::min<std::uint64_t>(dst.size(), bytes.size() - at);
    std::memcpy(dst.data(), bytes.data() + at, n);
    return n;
  });
  while (const auto f = split.next(c.frames.size(), c.skipped)) c.frames.push_back(*f);
  if (c.frames.empty()) throw InputError(c.path + ": no ProRes frame found");
  try {
    std::vector<std::uint8_t> buf;
    const FrameHeader h = parse_frame_header(c.frame(0, buf));
    c.width = h.width;
    c.height = h.height;
  } catch (const Error&) {
    // Left for decode() to report with the frame number.
  }
  return c;
}

Clip split_raw_file(std::shared_ptr<const ClipSource> file, std::string path) {
  Clip c;
  c.path = std::move(path);
  c.source = std::move(file);
  return split_raw(std::move(c));
}

void check_span(const Clip& c, std::size_t i, std::uint64_t length) {
  const Clip::Span f = c.frames.at(i);
  if (f.offset > length || f.size > length - f.offset)
    throw Error(c.path + ": frame " + std::to_string(c.first_frame + i) + " (bytes " +
                std::to_string(f.offset) + "+" + std::to_string(f.size) + ") lies past the end");
}

}  // namespace

std::span<const std::uint8_t> Clip::frame(std::size_t i, std::vector<std::uint8_t>& buffer) const {
  if (!source) {
    check_span(*this, i, bytes.size());
    return std::span<const std::uint8_t>(bytes).subspan(frames[i].offset, frames[i].size);
  }
  check_span(*this, i, source->length());
  const Span f = frames[i];
  buffer.resize(f.size);
  if (source->read(f.offset, buffer) != f.size)
    throw InputError(path + ": frame " + std::to_string(first_frame + i) + " at byte " +
                     std::to_string(f.offset) + ": the file ends early (changed since opened?)");
  return buffer;
}

std::span<const std::uint8_t> Clip::frame(std::size_t i) const {
  std::vector<std::uint8_t> unused;
  if (!source) return frame(i, unused);
  check_span(*this, i, source->length());
  return source->kept(frames[i].offset, frames[i].size);
}

std::uint64_t Clip::coded_bytes() const {
  std::uint64_t n = 0;
  for (const Span& f : frames) n += f.size;
  return n;
}

std::string Clip::fourcc_string() const {
  if (!fourcc) return "none";
  std::string s(4, ' ');
  for (int i = 0; i < 4; ++i) s[i] = static_cast<char>((fourcc >> (24 - 8 * i)) & 0xFF);
  return s;
}

int Clip::bit_depth(const FrameHeader& first) const {
  return default_bit_depth(fourcc, first);
}

Clip read_raw(std::vector<std::uint8_t> bytes, std::string path) {
  if (path.empty()) path = "input";
  if (bytes.empty()) throw InputError(path + ": empty input");
  Clip c;
  c.path = std::move(path);
  c.bytes = std::move(bytes);
  return split_raw(std::move(c));
}

#ifdef SIGPU_HAVE_LIBAVFORMAT
namespace {

// True when the packet's bytes are the file's at pkt->pos (MOV stores samples as they are;
// Matroska, for one, strips and restores the 'icpf' box). First and last bytes are compared.
bool packet_is_in_file(const AVPacket* pkt, const ClipSource& file) {
  if (pkt->pos < 0 || pkt->size <= 0) return false;
  const auto pos = static_cast<std::uint64_t>(pkt->pos),
             size = static_cast<std::uint64_t>(pkt->size);
  if (pos > file.length() || size > file.length() - pos) return false;
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(size, 16));
  std::array<std::uint8_t, 16> b{};
  if (file.read(pos, {b.data(), n}) != n || std::memcmp(b.data(), pkt->data, n) != 0) return false;
  return file.read(pos + size - n, {b.data(), n}) == n &&
         std::memcmp(b.data(), pkt->data + size - n, n) == 0;
}

}  // namespace

namespace {

// The container of `file`'s first bytes, if libavformat knows it by its signature.
const AVInputFormat* signature_of(const ClipSource& file) {
  std::vector<std::uint8_t> head(
      static_cast<std::size_t>(std::min<std::uint64_t>(file.length(), 4096)));
  head.resize(file.read(0, head));
  return container_by_signature(head);
}

}  // namespace

Clip read_mov(const std::string& path) {
  auto file = std::make_shared<ClipSource>(path);
  AVFormatContext* fmt = nullptr;
  if (avformat_open_input(&fmt, path.c_str(), signature_of(*file), nullptr) < 0)
    throw InputError(path + ": not a file libavformat can read");
  struct Closer {
    AVFormatContext** f;
    ~Closer() { avformat_close_input(f); }
  } closer{&fmt};
  if (avformat_find_stream_info(fmt, nullptr) < 0)
    throw InputError(path + ": no stream information");
  int track = -1;
  for (unsigned i = 0; i < fmt->nb_streams; ++i)
    if (fmt->streams[i]->codecpar->codec_id == AV_CODEC_ID_PRORES) {
      track = static_cast<int>(i);
      break;
    }
  if (track < 0) throw InputError(path + ": no ProRes video track");
  const AVStream* st = fmt->streams[track];
  Clip c;
  c.path = path;
  c.container = "mov";
  const std::uint32_t tag = st->codecpar->codec_tag;  // MKTAG: first character lowest
  c.fourcc =
      ((tag & 0xFF) << 24) | ((tag >> 8 & 0xFF) << 16) | ((tag >> 16 & 0xFF) << 8) | (tag >> 24);
  c.width = st->codecpar->width;
  c.height = st->codecpar->height;
  const AVRational r = st->avg_frame_rate.num ? st->avg_frame_rate : st->r_frame_rate;
  c.fps_num = r.num;
  c.fps_den = r.den ? r.den : 1;
  const AVRational sar = av_guess_sample_aspect_ratio(fmt, const_cast<AVStream*>(st), nullptr);
  c.sar_num = sar.num;
  c.sar_den = sar.den;
  AVPacket* pkt = av_packet_alloc();
  if (!pkt) throw Error("out of memory");
  struct PacketFree {
    AVPacket** p;
    ~PacketFree() { av_packet_free(p); }
  } packet_free{&pkt};
  // Frames stay in the file while every packet is found there; from the first that is not,
  // the clip holds all frames in memory.
  std::vector<std::uint8_t>& held = c.bytes;
  bool in_file = true;
  int err = 0;
  while ((err = av_read_frame(fmt, pkt)) >= 0) {
    if (pkt->stream_index == track) {
      if (in_file && !packet_is_in_file(pkt, *file)) {
        in_file = false;
        for (Clip::Span& f : c.frames) {
          const std::size_t at = held.size();
          held.resize(at + f.size);
          file->read(f.offset, {held.data() + at, f.size});
          f.offset = at;
        }
      }
      if (in_file) {
        c.frames.push_back(
            {static_cast<std::uint64_t>(pkt->pos), static_cast<std::uint64_t>(pkt->size)});
      } else {
        c.frames.push_back({held.size(), static_cast<std::uint64_t>(pkt->size)});
        held.insert(held.end(), pkt->data, pkt->data + pkt->size);
      }
    }
    av_packet_unref(pkt);
  }
  if (err != AVERROR_EOF)
    throw InputError(path + ": container read error after frame " +
                     std::to_string(c.frames.size()));
  if (c.frames.empty()) throw InputError(path + ": no ProRes frame found");
  if (in_file) c.source = std::move(file);
  return c;
}
#else
Clip read_mov(const std::string& path) {
  throw UnsupportedError(path + ": reading MOV needs libavformat, which this build of sigpu lacks");
}
#endif

Clip open_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw InputError(path + ": cannot open: " + std::strerror(errno));
  if (S_ISDIR(st.st_mode)) throw InputError(path + ": is a directory");
  if (!S_ISREG(st.st_mode)) {
    // A pipe or device cannot be read on demand: raw frames are read whole.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
    struct Closer {
      int fd;
      ~Closer() { ::close(fd); }
    } closer{fd};
    std::array<std::uint8_t, 8> head{};
    const std::size_t n = read_fully(fd, head, path);
    if (n == 0) throw InputError(path + ": empty input");
    if (looks_like_mov({head.data(), n}))
      throw UnsupportedError(path + ": MOV needs a seekable file (not a pipe)");
    std::vector<std::uint8_t> bytes(head.begin(), head.begin() + n);
    const auto rest = read_to_end(fd, path);
    bytes.insert(bytes.end(), rest.begin(), rest.end());
    return read_raw(std::move(bytes), path);
  }
  auto file = std::make_shared<ClipSource>(path);
  if (file->length() == 0) throw InputError(path + ": empty file");
  std::array<std::uint8_t, 8> head{};
  const std::size_t n = file->read(0, head);
  if (has_icpf_tag({head.data(), n})) return split_raw_file(std::move(file), path);
  if (looks_like_mov({head.data(), n})) return read_mov(path);
    // Neither starts as expected: a container libavformat knows by its signature, or raw frames
    // after junk.
#ifdef SIGPU_HAVE_LIBAVFORMAT
  if (signature_of(*file)) {
    try {
      return read_mov(path);
    } catch (const InputError&) {
    }
  }
  try {
    return split_raw_file(std::move(file), path);
  } catch (const InputError&) {
    throw InputError(path + ": no ProRes frame found (neither raw 'icpf' frames nor a " +
                     "container with a ProRes track)");
  }
#else
  return split_raw_file(std::move(file), path);
#endif
}

}  // namespace sigpu::prores
