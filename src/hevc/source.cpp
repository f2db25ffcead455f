// hevc::Source: Annex B bytes from a file, a pipe or a container. The format is told by the
// first bytes; Annex B is read as it is, containers through libavformat with I/O over the
// descriptor (so that stdin and pipes work for MPEG-TS, and nothing is read twice).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <sigpu/hevc.hpp>

#include "hevc/length_prefixed.hpp"

#ifdef SIGPU_HEVC_HAVE_LIBAVFORMAT
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
}

#include "core/container_probe.hpp"
#endif

namespace sigpu::hevc {
namespace {

constexpr std::size_t kChunk = std::size_t{4} << 20;
constexpr std::size_t kProbe = 4096;

enum class Kind { annexb, mpegts, other };

Kind detect(std::span<const std::uint8_t> p) {
  std::size_t zeros = 0;
  while (zeros < p.size() && p[zeros] == 0) ++zeros;
  // All zeros (or nothing) is handed to the decoder as Annex B, which says what is wrong.
  if (zeros == p.size() || (zeros >= 2 && p[zeros] == 1)) return Kind::annexb;
  if (p[0] == 0x47 && (p.size() <= 188 || p[188] == 0x47)) return Kind::mpegts;
  return Kind::other;
}

bool looks_like_mp4_or_mkv(std::span<const std::uint8_t> p) {
  if (p.size() >= 4 && p[0] == 0x1a && p[1] == 0x45 && p[2] == 0xdf && p[3] == 0xa3) return true;
  if (p.size() < 8) return false;
  const std::string box(p.begin() + 4, p.begin() + 8);
  return box == "ftyp" || box == "moov" || box == "mdat" || box == "free" || box == "wide";
}

#ifdef SIGPU_HEVC_HAVE_LIBAVFORMAT
// A container to open, or null where the first bytes carry none: then the input is read as Annex
// B and the decoder says what is wrong with it. The raw HEVC demuxer's guess is Annex B's, which
// detect() has ruled out.
const AVInputFormat* container_format(std::span<const std::uint8_t> first) {
  const AVInputFormat* f = container_by_signature(first);
  return f && std::strcmp(f->name, "hevc") != 0 ? f : nullptr;
}
#endif

// read() that retries on signals; throws InputError on failure.
std::size_t read_some(int fd, std::uint8_t* to, std::size_t n, const std::string& name) {
  for (;;) {
    const ssize_t r = ::read(fd, to, n);
    if (r >= 0) return static_cast<std::size_t>(r);
    if (errno != EINTR) throw InputError(name + ": cannot read: " + std::strerror(errno));
  }
}

}  // namespace

struct Source::Impl {
  int fd = -1;
  bool owns_fd = false;
  bool seekable = false;
  off_t base = 0;  ///< where the descriptor stood when opened
  std::string name, format;
  std::vector<std::uint8_t> probe;  ///< the first bytes, handed on before any more are read
  std::size_t probe_used = 0;
  std::vector<std::uint8_t> buffer;
  std::vector<Problem> problems;
  bool ended = false;

#ifdef SIGPU_HEVC_HAVE_LIBAVFORMAT
  AVFormatContext* fmt = nullptr;
  AVIOContext* avio = nullptr;
  AVPacket* packet = nullptr;
  int track = -1;
  int length_size = 0;  ///< 0: packets are Annex B already
  std::size_t packets = 0;
  bool header_pending = false;

  void open_container(const AVInputFormat* hint);
  Chunk read_packet();
  static int avio_read(void* opaque, std::uint8_t* to, int n);
  static std::int64_t avio_seek(void* opaque, std::int64_t offset, int whence);
#endif

  ~Impl();
  std::size_t read_bytes(std::uint8_t* to, std::size_t n);
  Chunk read_annexb();
};

Source::Impl::~Impl() {
#ifdef SIGPU_HEVC_HAVE_LIBAVFORMAT
  av_packet_free(&packet);
  avformat_close_input(&fmt);
  if (avio) av_freep(&avio->buffer);
  avio_context_free(&avio);
#endif
  if (owns_fd && fd >= 0) ::close(fd);
}

// The probe's bytes first, then the descriptor's.
std::size_t Source::Impl::read_bytes(std::uint8_t* to, std::size_t n) {
  if (probe_used < probe.size()) {
    const std::size_t k = std::min(n, probe.size() - probe_used);
    std::memcpy(to, probe.data() + probe_used, k);
    probe_used += k;
    return k;
  }
  return read_some(fd, to, n, name);
}

Chunk Source::Impl::read_annexb() {
  if (probe_used < probe.size()) {
    probe_used = probe.size();
    return Chunk(probe.data(), probe.size());
  }
  buffer.resize(kChunk);
  const std::size_t n = read_some(fd, buffer.data(), buffer.size(), name);
  return Chunk(buffer.data(), n);
}

#ifdef SIGPU_HEVC_HAVE_LIBAVFORMAT
int Source::Impl::avio_read(void* opaque, std::uint8_t* to, int n) {
  auto* self = static_cast<Impl*>(opaque);
  try {
    const std::size_t got = self->read_bytes(to, static_cast<std::size_t>(n));
    return got ? static_cast<int>(got) : AVERROR_EOF;
  } catch (const Error&) {
    return AVERROR(EIO);
  }
}

std::int64_t Source::Impl::avio_seek(void* opaque, std::int64_t offset, int whence) {
  auto* self = static_cast<Impl*>(opaque);
  if (!self->seekable) return -1;
  if (whence & AVSEEK_SIZE) {
    struct stat st {};
    return ::fstat(self->fd, &st) == 0 ? st.st_size - self->base : -1;
  }
  whence &= ~AVSEEK_FORCE;
  if (whence == SEEK_SET) offset += self->base;
  const off_t at = ::lseek(self->fd, static_cast<off_t>(offset), whence);
  if (at < 0) return -1;
  self->probe_used = self->probe.size();
  return at - self->base;
}

void Source::Impl::open_container(const AVInputFormat* hint) {
  constexpr int kAvioBuffer = 1 << 16;
  auto* buf = static_cast<std::uint8_t*>(av_malloc(kAvioBuffer));
  avio = buf ? avio_alloc_context(buf, kAvioBuffer, 0, this, &avio_read, nullptr,
                                  seekable ? &avio_seek : nullptr)
             : nullptr;
  if (!avio) {
    av_free(buf);
    throw Error(name + ": out of memory");
  }
  avio->seekable = seekable ? AVIO_SEEKABLE_NORMAL : 0;
  fmt = avformat_alloc_context();
  if (!fmt) throw Error(name + ": out of memory");
  fmt->pb = avio;
  fmt->flags |= AVFMT_FLAG_CUSTOM_IO;
  if (const int err = avformat_open_input(&fmt, name.c_str(), hint, nullptr); err < 0) {
    char msg[AV_ERROR_MAX_STRING_SIZE] = {};
    av_strerror(err, msg, sizeof msg);
    throw InputError(name + ": not an HEVC byte stream, and not a container libavformat reads (" +
                     msg + ")");
  }
  format = fmt->iformat->name;
  const AVCodecParameters* other = nullptr;
  for (unsigned i = 0; i < fmt->nb_streams; ++i) {
    AVStream* st = fmt->streams[i];
    st->discard = AVDISCARD_ALL;
    if (st->codecpar->codec_type != AVMEDIA_TYPE_VIDEO ||
        (st->disposition & AV_DISPOSITION_ATTACHED_PIC))
      continue;
    if (st->codecpar->codec_id == AV_CODEC_ID_HEVC && track < 0) {
      track = static_cast<int>(i);
      st->discard = AVDISCARD_DEFAULT;
    } else if (!other) {
      other = st->codecpar;
    }
  }
  if (track < 0 && other)
    throw UnsupportedError(name + ": the video track is " + avcodec_get_name(other->codec_id) +
                           ", not HEVC");
  if (track < 0) throw InputError(name + ": no video track (" + format + ")");
  const AVCodecParameters* par = fmt->streams[track]->codecpar;
  const std::span<const std::uint8_t> extra(par->extradata,
                                            par->extradata ? par->extradata_size : 0);
  if (is_hvcc(extra)) {
    Hvcc h;
    try {
      h = parse_hvcc(extra);
    } catch (const InputError& e) {
      throw InputError(name + ": " + e.what());
    }
    length_size = h.length_size;
    buffer = std::move(h.annexb);
  } else {
    buffer.assign(extra.begin(), extra.end());  // parameter sets in Annex B, or nothing
  }
  header_pending = !buffer.empty();
  packet = av_packet_alloc();
  if (!packet) throw Error(name + ": out of memory");
}

Chunk Source::Impl::read_packet() {
  if (header_pending) {
    header_pending = false;
    return Chunk(buffer.data(), buffer.size());
  }
  for (;;) {
    av_packet_unref(packet);
    if (const int err = av_read_frame(fmt, packet); err < 0) {
      if (err != AVERROR_EOF) {
        char msg[AV_ERROR_MAX_STRING_SIZE] = {};
        av_strerror(err, msg, sizeof msg);
        problems.push_back({packets, -1, 0,
                            "container read error after packet " + std::to_string(packets) + ": " +
                                msg + "; the rest of the input is not read"});
      }
      return {};
    }
    if (packet->stream_index != track) continue;
    const std::size_t index = packets++;
    const std::span<const std::uint8_t> data(packet->data, static_cast<std::size_t>(packet->size));
    if (!length_size) return Chunk(data);
    buffer.clear();
    if (const std::string bad = append_annexb(data, length_size, buffer); !bad.empty()) {
      const std::size_t pos = packet->pos < 0 ? 0 : static_cast<std::size_t>(packet->pos);
      problems.push_back({index, -1, pos,
                          "packet " + std::to_string(index) + " (byte " + std::to_string(pos) +
                              "): " + bad + "; the rest of the packet is dropped"});
    }
    if (!buffer.empty()) return Chunk(buffer.data(), buffer.size());
  }
}
#endif

Source::Source(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Source::Source(Source&&) noexcept = default;
Source& Source::operator=(Source&&) noexcept = default;
Source::~Source() = default;

Source Source::open(const std::string& path) {
  if (path == "-") return from_fd(STDIN_FILENO, "stdin");
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw InputError(path + ": is a directory");
  }
  // from_fd takes the descriptor only once it returns; until then it is closed here.
  struct Guard {
    int fd;
    ~Guard() {
      if (fd >= 0) ::close(fd);
    }
  } guard{fd};
  Source s = from_fd(fd, path);
  s.impl_->owns_fd = true;
  guard.fd = -1;
  return s;
}

Source Source::from_fd(int fd, const std::string& name) {
  auto impl = std::make_unique<Impl>();
  impl->fd = fd;
  impl->name = name;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) throw InputError(name + ": is a directory");
  impl->base = ::lseek(fd, 0, SEEK_CUR);
  impl->seekable = impl->base >= 0 && S_ISREG(st.st_mode);
  if (!impl->seekable) impl->base = 0;
  impl->probe.resize(kProbe);
  std::size_t got = 0;
  while (got < kProbe) {
    const std::size_t n = read_some(fd, impl->probe.data() + got, kProbe - got, name);
    if (n == 0) break;
    got += n;
  }
  impl->probe.resize(got);
  const Kind kind = detect(impl->probe);
  if (kind == Kind::annexb) {
    impl->format = "Annex B";
    return Source(std::move(impl));
  }
  if (kind == Kind::other && !impl->seekable) {
    if (looks_like_mp4_or_mkv(impl->probe))
      throw InputError(name + ": MP4/MKV need a seekable file (not a pipe or stdin)");
    impl->format = "Annex B";  // the decoder says what is wrong with it
    return Source(std::move(impl));
  }
#ifdef SIGPU_HEVC_HAVE_LIBAVFORMAT
  const AVInputFormat* container =
      kind == Kind::mpegts ? av_find_input_format("mpegts") : container_format(impl->probe);
  if (!container) {
    impl->format = "Annex B";  // the decoder says what is wrong with it
    return Source(std::move(impl));
  }
  if (impl->seekable) {
    if (::lseek(fd, impl->base, SEEK_SET) < 0)
      throw InputError(name + ": cannot seek: " + std::strerror(errno));
    impl->probe.clear();
  }
  impl->open_container(container);
  return Source(std::move(impl));
#else
  if (kind == Kind::mpegts || looks_like_mp4_or_mkv(impl->probe))
    throw UnsupportedError(name + ": this build reads HEVC in containers only with libavformat");
  impl->format = "Annex B";
  return Source(std::move(impl));
#endif
}

Chunk Source::read() {
  Impl& s = *impl_;
  if (s.ended) return {};
  Chunk c;
#ifdef SIGPU_HEVC_HAVE_LIBAVFORMAT
  c = s.fmt ? s.read_packet() : s.read_annexb();
#else
  c = s.read_annexb();
#endif
  if (c.empty()) s.ended = true;
  return c;
}

const std::string& Source::format() const {
  return impl_->format;
}

const std::vector<Problem>& Source::problems() const {
  return impl_->problems;
}

}  // namespace sigpu::hevc
