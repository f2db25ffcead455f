// Container parsing: optional ID3v2 tag, the fLaC marker and the metadata blocks
// (RFC 9639 section 8). Every length is checked against the bytes that remain.
#include <sigpu/flac.hpp>

#include <cstring>
#include <string>

#include "flac/frame_header.hpp"
#include "flac/frame_host.hpp"
#include "flac/stream_start.hpp"

namespace sigpu::flac {
namespace {

class ByteCursor {
 public:
  ByteCursor(const std::uint8_t* p, std::size_t n, std::uint64_t base, const char* what)
      : p_(p), n_(n), base_(base), what_(what) {}
  std::size_t left() const { return n_ - pos_; }
  void need(std::size_t k) const {
    if (k > left())
      throw InputError(std::string(what_) + " at byte " + std::to_string(base_ + pos_) +
                       ": needs " + std::to_string(k) + " more bytes, only " +
                       std::to_string(left()) + " remain");
  }
  std::uint64_t be(unsigned bytes) {
    need(bytes);
    std::uint64_t v = 0;
    for (unsigned i = 0; i < bytes; ++i) v = (v << 8) | p_[pos_++];
    return v;
  }
  std::uint32_t le32() {
    need(4);
    std::uint32_t v =
        p_[pos_] | (p_[pos_ + 1] << 8) | (p_[pos_ + 2] << 16) | (std::uint32_t(p_[pos_ + 3]) << 24);
    pos_ += 4;
    return v;
  }
  std::string str(std::size_t k) {
    need(k);
    std::string s(reinterpret_cast<const char*>(p_ + pos_), k);
    pos_ += k;
    return s;
  }
  void skip(std::size_t k) {
    need(k);
    pos_ += k;
  }
  const std::uint8_t* here() const { return p_ + pos_; }

 private:
  const std::uint8_t* p_;
  std::size_t n_, pos_ = 0;
  std::uint64_t base_;
  const char* what_;
};

std::size_t skip_id3v2(std::span<const std::uint8_t> f) {
  const std::size_t total = id3v2_tag_bytes(f);
  if (total > f.size())
    throw InputError("ID3v2 tag at byte 0: its size runs past the end of the file");
  return total;
}

void parse_streaminfo(ByteCursor c, Stream& s) {
  StreamInfo& i = s.info;
  i.min_block_size = static_cast<std::uint32_t>(c.be(2));
  i.max_block_size = static_cast<std::uint32_t>(c.be(2));
  i.min_frame_size = static_cast<std::uint32_t>(c.be(3));
  i.max_frame_size = static_cast<std::uint32_t>(c.be(3));
  const std::uint64_t packed = c.be(8);
  i.sample_rate = static_cast<std::uint32_t>(packed >> 44);
  i.channels = static_cast<std::uint32_t>((packed >> 41) & 7) + 1;
  i.bits_per_sample = static_cast<std::uint32_t>((packed >> 36) & 31) + 1;
  i.total_samples = packed & ((std::uint64_t{1} << 36) - 1);
  std::memcpy(i.md5.data(), c.here(), 16);
  s.has_streaminfo = true;
  if (i.bits_per_sample < 4)
    throw InputError("STREAMINFO: " + std::to_string(i.bits_per_sample) +
                     " bits per sample is below the minimum of 4");
  if (i.sample_rate == 0) s.warnings.push_back("STREAMINFO: sample rate is 0");
  if (i.max_block_size < 16 && !(i.min_block_size == i.max_block_size))
    s.warnings.push_back("STREAMINFO: maximum block size " + std::to_string(i.max_block_size) +
                         " is below 16");
  if (i.min_block_size > i.max_block_size)
    s.warnings.push_back("STREAMINFO: minimum block size exceeds maximum");
  if (i.min_frame_size && i.max_frame_size && i.min_frame_size > i.max_frame_size)
    s.warnings.push_back("STREAMINFO: minimum frame size exceeds maximum");
}

std::string parse_vorbis_comment(ByteCursor c, Stream& s) {
  s.vendor = c.str(c.le32());
  const std::uint32_t n = c.le32();
  for (std::uint32_t k = 0; k < n; ++k) s.comments.push_back(c.str(c.le32()));
  return "vendor \"" + s.vendor + "\", " + std::to_string(n) + " comments";
}

std::string parse_seektable(ByteCursor c, std::uint32_t length, Stream& s) {
  if (length % 18)
    throw InputError("SEEKTABLE: length " + std::to_string(length) + " is not a multiple of 18");
  for (std::uint32_t k = 0; k < length / 18; ++k) {
    SeekPoint p;
    p.sample = c.be(8);
    p.offset = c.be(8);
    p.samples = static_cast<std::uint16_t>(c.be(2));
    if (p.sample != ~std::uint64_t{0}) s.seek_points.push_back(p);
  }
  return std::to_string(length / 18) + " seek points";
}

std::string parse_cuesheet(ByteCursor c) {
  c.skip(128 + 8 + 1 + 258);
  const unsigned tracks = static_cast<unsigned>(c.be(1));
  for (unsigned t = 0; t < tracks; ++t) {
    c.skip(8 + 1 + 12 + 1 + 13);
    const unsigned indexes = static_cast<unsigned>(c.be(1));
    c.skip(indexes * 12u);
  }
  return std::to_string(tracks) + " tracks";
}

std::string parse_picture(ByteCursor c) {
  const std::uint32_t type = static_cast<std::uint32_t>(c.be(4));
  const std::string mime = c.str(static_cast<std::size_t>(c.be(4)));
  c.skip(static_cast<std::size_t>(c.be(4)));  // description
  const std::uint32_t w = static_cast<std::uint32_t>(c.be(4)),
                      h = static_cast<std::uint32_t>(c.be(4));
  c.skip(8);  // colour depth, palette size
  const std::uint32_t n = static_cast<std::uint32_t>(c.be(4));
  c.skip(n);
  return "type " + std::to_string(type) + ", " + mime + ", " + std::to_string(w) + "x" +
         std::to_string(h) + ", " + std::to_string(n) + " bytes";
}

/// Blocks that only describe the audio: libFLAC skips them unread unless asked for them, and
/// reads past a malformed one, so a bad one costs its contents, not the stream.
bool informational(unsigned type) {
  return type == 4 || type == 5 || type == 6;
}

const char* block_name(unsigned type) {
  static const char* names[] = {"STREAMINFO",     "PADDING",  "APPLICATION", "SEEKTABLE",
                                "VORBIS_COMMENT", "CUESHEET", "PICTURE"};
  return type < 7 ? names[type] : "unknown";
}

}  // namespace

bool StreamInfo::md5_set() const {
  for (auto b : md5)
    if (b) return true;
  return false;
}

std::size_t id3v2_tag_bytes(std::span<const std::uint8_t> h) {
  if (h.size() < 10 || std::memcmp(h.data(), "ID3", 3) != 0) return 0;
  std::size_t size = 0;
  for (int i = 6; i < 10; ++i) {
    if (h[i] & 0x80)
      throw InputError("ID3v2 tag at byte 0: size byte " + std::to_string(i) + " is not syncsafe");
    size = (size << 7) | h[i];
  }
  return 10 + size + ((h[5] & 0x10) ? 10 : 0);
}

std::optional<std::size_t> find_stream_start(std::span<const std::uint8_t> bytes, std::size_t pos) {
  std::vector<std::int64_t> scratch;
  const std::size_t last = std::min(bytes.size(), pos + kMaxLeadingJunk);
  for (std::size_t p = pos; p < last && p + 4 <= bytes.size(); ++p) {
    if (std::memcmp(bytes.data() + p, "fLaC", 4) == 0) return p;
    if (is_sync(bytes.data() + p) && decode_frame_host(
                                         bytes.data(), bytes.size(), {p, 0}, 0, true, scratch,
                                         [](unsigned, unsigned, std::int32_t) {
                                         }).error == FrameError::ok)
      return p;
  }
  return std::nullopt;
}

void throw_not_flac(std::span<const std::uint8_t> bytes, std::size_t pos) {
  if (bytes.size() >= pos + 4 && std::memcmp(bytes.data() + pos, "OggS", 4) == 0)
    throw UnsupportedError("an Ogg container at byte " + std::to_string(pos) +
                           ": FLAC in Ogg is not read by sigpu (`ffmpeg -i x.oga -c:a copy "
                           "x.flac` takes the stream out)");
  throw InputError("not a FLAC stream: no fLaC marker or frame sync at byte " +
                   std::to_string(pos));
}

Stream parse_stream(std::span<const std::uint8_t> f) {
  Stream s;
  std::size_t pos = skip_id3v2(f);
  if (f.size() >= pos + 2 && is_sync(f.data() + pos)) {
    // No marker: the data starts at a frame (e.g. a cut or a raw FLAC stream).
    s.audio_offset = pos;
    s.warnings.push_back("no fLaC marker: stream starts at a frame header");
    return s;
  }
  if (f.size() < pos + 4 || std::memcmp(f.data() + pos, "fLaC", 4) != 0) {
    const auto start = find_stream_start(f, pos);
    if (!start || (f.size() >= pos + 4 && std::memcmp(f.data() + pos, "OggS", 4) == 0))
      throw_not_flac(f, pos);
    const std::string junk =
        std::to_string(*start - pos) + " bytes of junk at byte " + std::to_string(pos) + " skipped";
    if (f[*start] != 'f') {
      // Frames after junk: the junk is the stream's leading gap, reported as damage.
      s.audio_offset = pos;
      s.warnings.push_back("no fLaC marker: " + junk + " to the first frame at byte " +
                           std::to_string(*start));
      return s;
    }
    s.warnings.push_back(junk + " to the fLaC marker at byte " + std::to_string(*start));
    pos = *start;
  }
  pos += 4;
  for (bool last = false; !last;) {
    if (f.size() < pos + 4)
      throw InputError("metadata block header at byte " + std::to_string(pos) +
                       " runs past the end of the file");
    last = f[pos] & 0x80;
    const unsigned type = f[pos] & 0x7F;
    const std::uint32_t length = (std::uint32_t(f[pos + 1]) << 16) | (f[pos + 2] << 8) | f[pos + 3];
    const std::string where =
        std::string(block_name(type)) + " block at byte " + std::to_string(pos);
    if (type == 127) throw InputError(where + ": block type 127 is invalid");
    if (f.size() - pos - 4 < length)
      throw InputError(where + ": length " + std::to_string(length) +
                       " runs past the end of the file");
    MetadataBlock b{static_cast<std::uint8_t>(type), pos, length, {}};
    ByteCursor body(f.data() + pos + 4, length, pos + 4, block_name(type));
    if (informational(type)) {
      try {
        b.summary = type == 4   ? parse_vorbis_comment(body, s)
                    : type == 5 ? parse_cuesheet(body)
                                : parse_picture(body);
      } catch (const InputError& e) {
        b.summary = "malformed, skipped";
        s.warnings.push_back(std::string(e.what()) + "; the block is skipped");
      }
      s.blocks.push_back(std::move(b));
      pos += 4 + length;
      continue;
    }
    switch (type) {
      case 0:
        if (length != 34)
          throw InputError(where + ": length " + std::to_string(length) + ", expected 34");
        if (s.has_streaminfo) throw InputError(where + ": second STREAMINFO block");
        if (!s.blocks.empty()) s.warnings.push_back("STREAMINFO is not the first metadata block");
        parse_streaminfo(body, s);
        b.summary = std::to_string(s.info.sample_rate) + " Hz, " + std::to_string(s.info.channels) +
                    " ch, " + std::to_string(s.info.bits_per_sample) + " bit, " +
                    std::to_string(s.info.total_samples) + " samples";
        break;
      case 1:
        b.summary = std::to_string(length) + " bytes";
        break;
      case 2:
        b.summary = "id \"" + body.str(4) + "\"";
        break;
      case 3:
        b.summary = parse_seektable(body, length, s);
        break;
      default:
        b.summary = "unknown type " + std::to_string(type) + ", skipped";
        break;
    }
    s.blocks.push_back(std::move(b));
    pos += 4 + length;
  }
  s.audio_offset = pos;
  return s;
}

}  // namespace sigpu::flac
