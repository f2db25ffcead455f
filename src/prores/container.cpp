// Getting coded frames out of files: raw concatenated 'icpf' frames, or QuickTime/MOV through
// libavformat (every ProRes FourCC, 32- and 64-bit chunk offsets; other tracks ignored).
#include <cstring>
#include <fstream>
#include <string>

#include <sigpu/prores.hpp>

#include "prores/frame_parse.hpp"

#ifdef SIGPU_HAVE_LIBAVFORMAT
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
}
#endif

namespace sigpu::prores {
namespace {

std::vector<std::uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open");
  in.seekg(0, std::ios::end);
  const auto n = static_cast<std::size_t>(in.tellg());
  in.seekg(0);
  std::vector<std::uint8_t> bytes(n);
  if (n && !in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(n)))
    throw Error(path + ": read failed");
  return bytes;
}

bool starts_with_icpf(std::span<const std::uint8_t> b) {
  return b.size() >= 8 && std::memcmp(b.data() + 4, "icpf", 4) == 0;
}

}  // namespace

std::span<const std::uint8_t> Clip::frame(std::size_t i) const {
  return {bytes.data() + frames.at(i).offset, frames.at(i).size};
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
  Clip c;
  c.path = std::move(path);
  c.container = "raw";
  c.bytes = std::move(bytes);
  std::size_t pos = 0;
  while (pos < c.bytes.size()) {
    const std::size_t left = c.bytes.size() - pos;
    if (left < 8 || !starts_with_icpf({c.bytes.data() + pos, left}))
      throw Error(c.path + ": no 'icpf' frame at byte " + std::to_string(pos) + " (frame " +
                  std::to_string(c.frames.size()) + ")");
    const std::uint8_t* p = c.bytes.data() + pos;
    std::size_t size =
        (std::size_t{p[0]} << 24) | (std::size_t{p[1]} << 16) | (std::size_t{p[2]} << 8) | p[3];
    if (size < 8)
      throw Error(c.path + ": frame " + std::to_string(c.frames.size()) + " at byte " +
                  std::to_string(pos) + " has impossible size " + std::to_string(size));
    // A truncated last frame is kept: its missing slices are reported when decoding.
    if (size > left) size = left;
    c.frames.push_back({pos, size});
    pos += size;
  }
  if (!c.frames.empty()) {
    try {
      const FrameHeader h = parse_frame_header(c.frame(0));
      c.width = h.width;
      c.height = h.height;
    } catch (const Error&) {
      // Left for decode() to report with the frame number.
    }
  }
  return c;
}

#ifdef SIGPU_HAVE_LIBAVFORMAT
Clip read_mov(const std::string& path) {
  AVFormatContext* fmt = nullptr;
  if (avformat_open_input(&fmt, path.c_str(), nullptr, nullptr) < 0)
    throw Error(path + ": not a file libavformat can read");
  struct Closer {
    AVFormatContext** f;
    ~Closer() { avformat_close_input(f); }
  } closer{&fmt};
  if (avformat_find_stream_info(fmt, nullptr) < 0) throw Error(path + ": no stream information");
  int track = -1;
  for (unsigned i = 0; i < fmt->nb_streams; ++i)
    if (fmt->streams[i]->codecpar->codec_id == AV_CODEC_ID_PRORES) {
      track = static_cast<int>(i);
      break;
    }
  if (track < 0) throw Error(path + ": no ProRes video track");
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
  int err = 0;
  while ((err = av_read_frame(fmt, pkt)) >= 0) {
    if (pkt->stream_index == track) {
      const std::size_t offset = c.bytes.size();
      c.bytes.insert(c.bytes.end(), pkt->data, pkt->data + pkt->size);
      c.frames.push_back({offset, static_cast<std::size_t>(pkt->size)});
    }
    av_packet_unref(pkt);
  }
  av_packet_free(&pkt);
  if (err != AVERROR_EOF)
    throw Error(path + ": container read error after frame " + std::to_string(c.frames.size()));
  return c;
}
#else
Clip read_mov(const std::string& path) {
  throw Error(path + ": reading MOV needs libavformat, which this build of sigpu lacks");
}
#endif

Clip open_file(const std::string& path) {
  std::vector<std::uint8_t> head;
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path + ": cannot open");
    head.resize(8);
    in.read(reinterpret_cast<char*>(head.data()), 8);
    head.resize(static_cast<std::size_t>(in.gcount()));
  }
  if (starts_with_icpf(head)) return read_raw(read_all(path), path);
  return read_mov(path);
}

}  // namespace sigpu::prores
