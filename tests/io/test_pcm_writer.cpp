// The WAV/raw writer, read back with libsndfile (an independent reader) and by parsing the
// header bytes ourselves for what libsndfile does not expose (valid bits, ds64 sizes).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <sigpu/io.hpp>

#ifdef SIGPU_HAVE_SNDFILE
#include <sndfile.h>
#endif

namespace sigpu::io {
namespace {

namespace fs = std::filesystem;

// The tests build PCM the way a decoder holds it and write it the way a command does.
using SampleFormat = SampleType;
using FileFormat = PcmFormat;
enum class Layout { interleaved, planar };

struct Pcm {
  SampleType format = SampleType::raw32;
  Layout layout = Layout::interleaved;
  std::uint32_t sample_rate = 0, channels = 0, bits_per_sample = 0;
  std::uint64_t samples = 0;
  std::vector<std::uint8_t> bytes;
  template <typename T>
  const T* samples_as() const {
    return reinterpret_cast<const T*>(bytes.data());
  }
};

PcmView view(const Pcm& p) {
  return {p.format,      p.layout == Layout::planar, p.sample_rate,
          p.channels,    p.bits_per_sample,          p.samples,
          p.bytes.data()};
}

struct WriterOptions {
  PcmFormat format = PcmFormat::wav;
  std::uint64_t expected_samples = 0;
  std::uint64_t max_riff_size = 0xFFFFFFFFu;
};

/// An Output and its PcmWriter, as a command holds them.
class FileWriter {
 public:
  FileWriter(const std::string& path, const Pcm& shape, const WriterOptions& o = {})
      : out_(path, {.force = true}), w_(make(out_, shape, o)) {}
  ~FileWriter() { PcmWriter::set_max_riff_size_for_testing(0xFFFFFFFFu); }
  void append(const Pcm& p, std::uint64_t first, std::uint64_t count) {
    w_.append(view(p), first, count);
  }
  void append(const Pcm& p) { w_.append(view(p)); }
  void finalize() { w_.finish(); }
  std::uint64_t samples_written() const { return w_.samples_written(); }

 private:
  static PcmWriter make(Output& out, const Pcm& shape, const WriterOptions& o) {
    PcmWriter::set_max_riff_size_for_testing(o.max_riff_size);
    return PcmWriter(out, o.format, view(shape), o.expected_samples);
  }
  Output out_;
  PcmWriter w_;
};

/// The WAVE_FORMAT_EXTENSIBLE speaker masks of FLAC's channel orders (RFC 9639 9.1.3).
std::uint32_t default_channel_mask(std::uint32_t channels) {
  static const std::uint32_t kMasks[] = {0, 0x4, 0x3, 0x7, 0x33, 0x37, 0x3F, 0x70F, 0x63F};
  return channels < std::size(kMasks) ? kMasks[channels] : 0;
}

void write_pcm_file(const std::string& path, const Pcm& pcm, PcmFormat format) {
  FileWriter w(path, pcm, {.format = format, .expected_samples = pcm.samples});
  w.append(pcm);
  w.finalize();
}

class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("sigpu_wav_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

std::vector<std::uint8_t> read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

std::uint64_t le(const std::vector<std::uint8_t>& b, std::size_t at, unsigned bytes) {
  std::uint64_t v = 0;
  for (unsigned i = 0; i < bytes; ++i) v |= std::uint64_t{b.at(at + i)} << (8 * i);
  return v;
}

struct Chunk {
  std::string id;
  std::size_t body = 0;  ///< offset of the chunk body
  std::uint32_t size = 0;
};

std::vector<Chunk> chunks(const std::vector<std::uint8_t>& f) {
  std::vector<Chunk> out;
  for (std::size_t at = 12; at + 8 <= f.size();) {
    Chunk c{std::string(f.begin() + at, f.begin() + at + 4), at + 8,
            static_cast<std::uint32_t>(le(f, at + 4, 4))};
    out.push_back(c);
    if (c.id == "data") break;  // its size may be 0xFFFFFFFF in RF64
    at = c.body + c.size + (c.size & 1);
  }
  return out;
}

const Chunk& find(const std::vector<Chunk>& cs, const std::string& id) {
  for (const auto& c : cs)
    if (c.id == id) return c;
  throw std::runtime_error("no " + id + " chunk");
}

struct Fmt {
  unsigned tag = 0, channels = 0, rate = 0, block_align = 0, bits = 0, valid = 0, mask = 0;
  unsigned sub_tag = 0;
};

Fmt parse_fmt(const std::vector<std::uint8_t>& f) {
  const auto c = find(chunks(f), "fmt ");
  Fmt m{unsigned(le(f, c.body, 2)), unsigned(le(f, c.body + 2, 2)), unsigned(le(f, c.body + 4, 4)),
        unsigned(le(f, c.body + 12, 2)), unsigned(le(f, c.body + 14, 2))};
  if (m.tag == 0xFFFE) {
    EXPECT_EQ(c.size, 40u);
    m.valid = unsigned(le(f, c.body + 18, 2));
    m.mask = unsigned(le(f, c.body + 20, 4));
    m.sub_tag = unsigned(le(f, c.body + 24, 4));
    static constexpr std::uint8_t kTail[] = {0x00, 0x00, 0x10, 0x00, 0x80, 0x00,
                                             0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71};
    EXPECT_EQ(std::memcmp(f.data() + c.body + 28, kTail, sizeof kTail), 0) << "GUID tail";
  }
  return m;
}

/// Random coded integers over the full range of `bps`, with both extremes included.
Pcm random_raw32(std::uint32_t channels, std::uint32_t bps, std::uint64_t frames,
                 std::uint32_t seed) {
  Pcm p;
  p.format = SampleFormat::raw32;
  p.sample_rate = 48000;
  p.channels = channels;
  p.bits_per_sample = bps;
  p.samples = frames;
  const std::int64_t lo = -(std::int64_t{1} << (bps - 1)), hi = (std::int64_t{1} << (bps - 1)) - 1;
  std::mt19937_64 rng(seed);
  std::vector<std::int32_t> v(frames * channels);
  for (auto& x : v)
    x = static_cast<std::int32_t>(lo + std::int64_t(rng() % std::uint64_t(hi - lo + 1)));
  v[0] = static_cast<std::int32_t>(lo);
  v[1 % v.size()] = static_cast<std::int32_t>(hi);
  const auto* b = reinterpret_cast<const std::uint8_t*>(v.data());
  p.bytes.assign(b, b + v.size() * 4);
  return p;
}

template <typename T>
Pcm make_pcm(SampleFormat format, std::uint32_t channels, std::uint32_t bps,
             const std::vector<T>& v) {
  Pcm p;
  p.format = format;
  p.sample_rate = 44100;
  p.channels = channels;
  p.bits_per_sample = bps;
  p.samples = v.size() / channels;
  const auto* b = reinterpret_cast<const std::uint8_t*>(v.data());
  p.bytes.assign(b, b + v.size() * sizeof(T));
  return p;
}

std::vector<std::uint8_t> data_of(const std::vector<std::uint8_t>& f, std::uint64_t bytes) {
  const auto c = find(chunks(f), "data");
  return {f.begin() + c.body, f.begin() + c.body + bytes};
}

#ifdef SIGPU_HAVE_SNDFILE
struct SndFile {
  SF_INFO info{};
  SNDFILE* f = nullptr;
  explicit SndFile(const std::string& path) { f = sf_open(path.c_str(), SFM_READ, &info); }
  ~SndFile() {
    if (f) sf_close(f);
  }
  std::vector<int> ints() {
    std::vector<int> v(info.frames * info.channels);
    EXPECT_EQ(sf_readf_int(f, v.data(), info.frames), info.frames);
    return v;
  }
  std::vector<float> floats() {
    std::vector<float> v(info.frames * info.channels);
    EXPECT_EQ(sf_readf_float(f, v.data(), info.frames), info.frames);
    return v;
  }
  std::vector<int> channel_map() {
    std::vector<int> m(info.channels);
    if (!sf_command(f, SFC_GET_CHANNEL_MAP_INFO, m.data(), int(m.size() * sizeof(int)))) m.clear();
    return m;
  }
};

int sndfile_subformat(std::uint32_t container_bytes) {
  switch (container_bytes) {
    case 1:
      return SF_FORMAT_PCM_U8;
    case 2:
      return SF_FORMAT_PCM_16;
    case 3:
      return SF_FORMAT_PCM_24;
    default:
      return SF_FORMAT_PCM_32;
  }
}

/// libsndfile's names for the speaker bits, in mask bit order.
std::vector<int> expected_map(std::uint32_t mask) {
  static constexpr int kBits[] = {SF_CHANNEL_MAP_LEFT,
                                  SF_CHANNEL_MAP_RIGHT,
                                  SF_CHANNEL_MAP_CENTER,
                                  SF_CHANNEL_MAP_LFE,
                                  SF_CHANNEL_MAP_REAR_LEFT,
                                  SF_CHANNEL_MAP_REAR_RIGHT,
                                  SF_CHANNEL_MAP_FRONT_LEFT_OF_CENTER,
                                  SF_CHANNEL_MAP_FRONT_RIGHT_OF_CENTER,
                                  SF_CHANNEL_MAP_REAR_CENTER,
                                  SF_CHANNEL_MAP_SIDE_LEFT,
                                  SF_CHANNEL_MAP_SIDE_RIGHT};
  std::vector<int> m;
  for (unsigned b = 0; b < std::size(kBits); ++b)
    if (mask & (1u << b)) m.push_back(kBits[b]);
  return m;
}
#endif

TEST(WavWriter, DefaultChannelMasksFollowFlacOrder) {
  TempDir dir;
  for (std::uint32_t ch = 1; ch <= 8; ++ch) {
    write_pcm_file(dir.file("m.wav"), random_raw32(ch, 24, 10, ch), FileFormat::wav);
    EXPECT_EQ(parse_fmt(read_all(dir.file("m.wav"))).mask, default_channel_mask(ch))
        << ch << " channels";
  }
}

TEST(WavWriter, CanonicalHeaderFor16BitStereo) {
  TempDir dir;
  const auto pcm = make_pcm<std::int32_t>(SampleFormat::raw32, 2, 16, {1, -1, 32767, -32768});
  write_pcm_file(dir.file("a.wav"), pcm, FileFormat::wav);
  const auto f = read_all(dir.file("a.wav"));
  ASSERT_EQ(f.size(), 44u + 8);
  EXPECT_EQ(std::string(f.begin(), f.begin() + 4), "RIFF");
  EXPECT_EQ(le(f, 4, 4), 36u + 8);
  EXPECT_EQ(std::string(f.begin() + 8, f.begin() + 16), "WAVEfmt ");
  EXPECT_EQ(le(f, 16, 4), 16u);
  const auto fmt = parse_fmt(f);
  EXPECT_EQ(fmt.tag, 1u);
  EXPECT_EQ(fmt.channels, 2u);
  EXPECT_EQ(fmt.rate, 44100u);
  EXPECT_EQ(le(f, 28, 4), 44100u * 4);
  EXPECT_EQ(fmt.block_align, 4u);
  EXPECT_EQ(fmt.bits, 16u);
  EXPECT_EQ(std::string(f.begin() + 36, f.begin() + 40), "data");
  EXPECT_EQ(le(f, 40, 4), 8u);
  const std::vector<std::uint8_t> data = {1, 0, 0xFF, 0xFF, 0xFF, 0x7F, 0x00, 0x80};
  EXPECT_EQ(data_of(f, 8), data);
}

TEST(WavWriter, EightBitIsUnsigned) {
  TempDir dir;
  const auto pcm = make_pcm<std::int32_t>(SampleFormat::raw32, 1, 8, {-128, -1, 0, 1, 127});
  write_pcm_file(dir.file("a.wav"), pcm, FileFormat::wav);
  const auto f = read_all(dir.file("a.wav"));
  EXPECT_EQ(parse_fmt(f).tag, 1u);
  const std::vector<std::uint8_t> data = {0x00, 0x7F, 0x80, 0x81, 0xFF};
  EXPECT_EQ(data_of(f, 5), data);
  EXPECT_EQ(f.size(), 44u + 6) << "odd data is padded to a word";
  EXPECT_EQ(le(f, 4, 4), f.size() - 8) << "RIFF size counts the pad byte";
  EXPECT_EQ(le(f, 40, 4), 5u) << "data size does not";
}

#ifdef SIGPU_HAVE_SNDFILE
TEST(WavWriter, IntegerDepthsAndChannelsReadBackExactly) {
  TempDir dir;
  for (std::uint32_t bps : {8u, 12u, 16u, 20u, 24u, 32u}) {
    for (std::uint32_t ch = 1; ch <= 8; ++ch) {
      SCOPED_TRACE(std::to_string(bps) + " bits, " + std::to_string(ch) + " channels");
      const auto pcm = random_raw32(ch, bps, 1001, bps * 100 + ch);
      const auto path = dir.file("t.wav");
      write_pcm_file(path, pcm, FileFormat::wav);

      const std::uint32_t container = (bps + 7) / 8;
      const auto fmt = parse_fmt(read_all(path));
      const bool ext = ch > 2 || bps > 16 || bps % 8 != 0;
      EXPECT_EQ(fmt.tag, ext ? 0xFFFEu : 1u);
      EXPECT_EQ(fmt.bits, container * 8);
      EXPECT_EQ(fmt.block_align, container * ch);
      if (ext) {
        EXPECT_EQ(fmt.valid, bps);
        EXPECT_EQ(fmt.mask, default_channel_mask(ch));
        EXPECT_EQ(fmt.sub_tag, 1u);
      }

      SndFile sf(path);
      ASSERT_NE(sf.f, nullptr) << sf_strerror(nullptr);
      EXPECT_EQ(sf.info.format,
                (ext ? SF_FORMAT_WAVEX : SF_FORMAT_WAV) | sndfile_subformat(container));
      EXPECT_EQ(sf.info.channels, int(ch));
      EXPECT_EQ(sf.info.samplerate, 48000);
      ASSERT_EQ(sf.info.frames, 1001);
      if (ext) {
        EXPECT_EQ(sf.channel_map(), expected_map(default_channel_mask(ch)));
      }
      const auto got = sf.ints();
      const auto* want = pcm.samples_as<std::int32_t>();
      std::size_t bad = 0;
      for (std::size_t i = 0; i < got.size(); ++i)
        bad += got[i] != std::int32_t(std::uint32_t(want[i]) << (32 - bps));
      EXPECT_EQ(bad, 0u);
    }
  }
}

TEST(WavWriter, FloatIsIeeeFloat) {
  TempDir dir;
  for (std::uint32_t ch : {1u, 2u, 6u}) {
    SCOPED_TRACE(std::to_string(ch) + " channels");
    std::vector<float> v(999 * ch);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = float(std::sin(0.01 * double(i)) * 0.999);
    v[0] = -1.0f;
    const auto pcm = make_pcm(SampleFormat::f32, ch, 24, v);
    const auto path = dir.file("f.wav");
    write_pcm_file(path, pcm, FileFormat::wav);
    const auto f = read_all(path);
    const auto fmt = parse_fmt(f);
    EXPECT_EQ(fmt.tag, ch > 2 ? 0xFFFEu : 3u);
    if (ch > 2) {
      EXPECT_EQ(fmt.sub_tag, 3u);
    }
    EXPECT_EQ(fmt.bits, 32u);
    EXPECT_EQ(le(f, find(chunks(f), "fact").body, 4), 999u);

    SndFile sf(path);
    ASSERT_NE(sf.f, nullptr) << sf_strerror(nullptr);
    EXPECT_EQ(sf.info.format, (ch > 2 ? SF_FORMAT_WAVEX : SF_FORMAT_WAV) | SF_FORMAT_FLOAT);
    EXPECT_EQ(sf.floats(), v);
  }
}

TEST(WavWriter, FullScaleFormatsKeepTheirWidth) {
  TempDir dir;
  const std::vector<std::int16_t> s16 = {-32768, -1, 0, 1, 32767, 1234};
  auto pcm = make_pcm(SampleFormat::s16, 2, 24, s16);  // 24-bit source truncated to 16
  write_pcm_file(dir.file("a.wav"), pcm, FileFormat::wav);
  auto fmt = parse_fmt(read_all(dir.file("a.wav")));
  EXPECT_EQ(fmt.tag, 1u);
  EXPECT_EQ(fmt.bits, 16u);
  {
    SndFile sf(dir.file("a.wav"));
    const auto got = sf.ints();
    for (std::size_t i = 0; i < s16.size(); ++i) EXPECT_EQ(got[i], s16[i] * 65536);
  }

  const std::vector<std::int32_t> s32 = {INT32_MIN, -256, 0, 256, INT32_MAX - 255, 0x12345600};
  pcm = make_pcm(SampleFormat::s32, 2, 24, s32);  // 24 bits, left-aligned
  write_pcm_file(dir.file("b.wav"), pcm, FileFormat::wav);
  fmt = parse_fmt(read_all(dir.file("b.wav")));
  EXPECT_EQ(fmt.tag, 0xFFFEu);
  EXPECT_EQ(fmt.bits, 32u);
  EXPECT_EQ(fmt.valid, 24u);
  SndFile sf(dir.file("b.wav"));
  EXPECT_EQ(sf.ints(), std::vector<int>(s32.begin(), s32.end()));
}
#endif  // SIGPU_HAVE_SNDFILE

TEST(WavWriter, PlanarInputIsInterleaved) {
  TempDir dir;
  // planar: channel 0 = 1 2 3, channel 1 = -1 -2 -3
  auto planar = make_pcm<std::int32_t>(SampleFormat::raw32, 2, 16, {1, 2, 3, -1, -2, -3});
  planar.layout = Layout::planar;
  const auto inter = make_pcm<std::int32_t>(SampleFormat::raw32, 2, 16, {1, -1, 2, -2, 3, -3});
  write_pcm_file(dir.file("p.wav"), planar, FileFormat::wav);
  write_pcm_file(dir.file("i.wav"), inter, FileFormat::wav);
  EXPECT_EQ(read_all(dir.file("p.wav")), read_all(dir.file("i.wav")));
  write_pcm_file(dir.file("p.raw"), planar, FileFormat::raw);
  write_pcm_file(dir.file("i.raw"), inter, FileFormat::raw);
  EXPECT_EQ(read_all(dir.file("p.raw")), read_all(dir.file("i.raw")));
}

TEST(WavWriter, RawKeepsTheCodedIntegerSigned) {
  TempDir dir;
  struct Case {
    std::uint32_t bps;
    std::vector<std::int32_t> in;
    std::vector<std::uint8_t> out;
  };
  const Case cases[] = {
      {8, {-128, -1, 0, 127}, {0x80, 0xFF, 0x00, 0x7F}},
      {12, {-2048, 2047}, {0x00, 0xF8, 0xFF, 0x07}},
      {24, {-8388608, 0x123456}, {0x00, 0x00, 0x80, 0x56, 0x34, 0x12}},
      {32, {INT32_MIN, 1}, {0, 0, 0, 0x80, 1, 0, 0, 0}},
  };
  for (const auto& c : cases) {
    write_pcm_file(dir.file("r.raw"), make_pcm(SampleFormat::raw32, 1, c.bps, c.in),
                   FileFormat::raw);
    EXPECT_EQ(read_all(dir.file("r.raw")), c.out) << c.bps << " bits";
  }
  const std::vector<float> fl = {0.5f, -0.25f};
  write_pcm_file(dir.file("f.raw"), make_pcm(SampleFormat::f32, 1, 16, fl), FileFormat::raw);
  const auto f = read_all(dir.file("f.raw"));
  ASSERT_EQ(f.size(), 8u);
  EXPECT_EQ(std::memcmp(f.data(), fl.data(), 8), 0);
  const std::vector<std::int16_t> s = {-2, 0x1234};
  write_pcm_file(dir.file("s.raw"), make_pcm(SampleFormat::s16, 1, 16, s), FileFormat::raw);
  EXPECT_EQ(read_all(dir.file("s.raw")), (std::vector<std::uint8_t>{0xFE, 0xFF, 0x34, 0x12}));
}

TEST(WavWriter, ChunkedAppendsMatchOneShot) {
  TempDir dir;
  const auto pcm = random_raw32(3, 24, 5000, 7);
  write_pcm_file(dir.file("one.wav"), pcm, FileFormat::wav);
  {
    FileWriter w(dir.file("parts.wav"), pcm, {.expected_samples = pcm.samples});
    for (std::uint64_t at = 0; at < pcm.samples; at += 777)
      w.append(pcm, at, std::min<std::uint64_t>(777, pcm.samples - at));
    w.finalize();
    EXPECT_EQ(w.samples_written(), 5000u);
  }
  EXPECT_EQ(read_all(dir.file("one.wav")), read_all(dir.file("parts.wav")));
}

TEST(WavWriter, UnknownLengthKeepsRoomInAJunkChunk) {
  TempDir dir;
  const auto pcm = random_raw32(2, 16, 300, 3);
  {
    FileWriter w(dir.file("u.wav"), pcm);
    w.append(pcm);
    w.finalize();
  }
  const auto f = read_all(dir.file("u.wav"));
  EXPECT_EQ(std::string(f.begin(), f.begin() + 4), "RIFF");
  const auto cs = chunks(f);
  ASSERT_GE(cs.size(), 3u);
  EXPECT_EQ(cs[0].id, "JUNK");
  EXPECT_EQ(cs[0].size, 28u);
  EXPECT_EQ(le(f, 4, 4), f.size() - 8);
  EXPECT_EQ(find(cs, "data").size, 1200u);
#ifdef SIGPU_HAVE_SNDFILE
  SndFile sf(dir.file("u.wav"));
  ASSERT_NE(sf.f, nullptr);
  EXPECT_EQ(sf.info.frames, 300);
#endif
}

/// Checks an RF64 file's ds64 against its real sizes and returns the data chunk.
void expect_rf64(const std::vector<std::uint8_t>& f, std::uint64_t data_bytes,
                 std::uint64_t samples) {
  EXPECT_EQ(std::string(f.begin(), f.begin() + 4), "RF64");
  EXPECT_EQ(le(f, 4, 4), 0xFFFFFFFFu);
  const auto cs = chunks(f);
  ASSERT_EQ(cs.at(0).id, "ds64") << "ds64 must be the first chunk";
  EXPECT_EQ(cs[0].size, 28u);
  EXPECT_EQ(le(f, cs[0].body, 8), f.size() - 8) << "riff size";
  EXPECT_EQ(le(f, cs[0].body + 8, 8), data_bytes) << "data size";
  EXPECT_EQ(le(f, cs[0].body + 16, 8), samples) << "sample count";
  EXPECT_EQ(le(f, cs[0].body + 24, 4), 0u) << "table length";
  const auto data = find(cs, "data");
  EXPECT_EQ(data.size, 0xFFFFFFFFu);
  EXPECT_EQ(f.size(), data.body + data_bytes + (data_bytes & 1));
}

TEST(WavWriter, BecomesRf64AboveTheThreshold) {
  TempDir dir;
  const auto pcm = random_raw32(1, 24, 1001, 11);  // 3003 data bytes: odd, padded
  for (std::uint64_t expected : {std::uint64_t{0}, pcm.samples}) {
    SCOPED_TRACE(expected ? "length announced" : "length unknown");
    const auto path = dir.file("big.wav");
    {
      FileWriter w(path, pcm, {.expected_samples = expected, .max_riff_size = 2000});
      w.append(pcm, 0, 500);
      w.append(pcm, 500, 501);
      w.finalize();
    }
    const auto f = read_all(path);
    expect_rf64(f, 3003, 1001);
    EXPECT_EQ(data_of(f, 3), (std::vector<std::uint8_t>{0x00, 0x00, 0x80})) << "first sample";
#ifdef SIGPU_HAVE_SNDFILE
    SndFile sf(path);
    ASSERT_NE(sf.f, nullptr) << sf_strerror(nullptr);
    EXPECT_EQ(sf.info.format, SF_FORMAT_RF64 | SF_FORMAT_PCM_24);
    ASSERT_EQ(sf.info.frames, 1001);
    const auto got = sf.ints();
    for (std::size_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(got[i], pcm.samples_as<std::int32_t>()[i] * 256) << "sample " << i;
#endif
  }
}

TEST(WavWriter, Rf64FloatCarriesFactAndDs64) {
  TempDir dir;
  const std::vector<float> v(600, 0.125f);
  const auto pcm = make_pcm(SampleFormat::f32, 2, 16, v);
  {
    FileWriter w(dir.file("f.wav"), pcm, {.max_riff_size = 1000});
    w.append(pcm);
    w.finalize();
  }
  const auto f = read_all(dir.file("f.wav"));
  expect_rf64(f, 2400, 300);
  EXPECT_EQ(le(f, find(chunks(f), "fact").body, 4), 300u);
}

TEST(WavWriter, StaysRiffWhenAnnouncedRf64IsNotNeeded) {
  TempDir dir;
  const auto pcm = random_raw32(2, 16, 100, 5);
  {
    FileWriter w(dir.file("s.wav"), pcm, {.expected_samples = 100000, .max_riff_size = 2000});
    w.append(pcm);
    w.finalize();
  }
  const auto f = read_all(dir.file("s.wav"));
  EXPECT_EQ(std::string(f.begin(), f.begin() + 4), "RIFF");
  EXPECT_EQ(chunks(f).at(0).id, "JUNK");
  EXPECT_EQ(le(f, 4, 4), f.size() - 8);
}

TEST(WavWriter, TooFewAnnouncedSamplesForRf64Fails) {
  TempDir dir;
  const auto pcm = random_raw32(2, 16, 1000, 5);
  const auto path = dir.file("x.wav");
  {
    FileWriter w(path, pcm, {.expected_samples = 10, .max_riff_size = 2000});
    w.append(pcm);
    EXPECT_THROW(w.finalize(), Error);
  }
  EXPECT_FALSE(fs::exists(path)) << "a failed file is removed";
}

TEST(WavWriter, UnfinishedFileIsRemoved) {
  TempDir dir;
  const auto pcm = random_raw32(2, 16, 100, 5);
  {
    FileWriter w(dir.file("x.wav"), pcm);
    w.append(pcm);
    EXPECT_FALSE(fs::exists(dir.file("x.wav"))) << "the name appears only when complete";
  }
  EXPECT_FALSE(fs::exists(dir.file("x.wav")));
  EXPECT_TRUE(fs::is_empty(dir.file(""))) << "the temporary file is gone too";
}

TEST(WavWriter, ErrorsNameThePath) {
  TempDir dir;
  const auto pcm = random_raw32(2, 16, 100, 5);
  const auto missing = dir.file("no/such/dir/x.wav");
  try {
    write_pcm_file(missing, pcm, FileFormat::wav);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos) << e.what();
  }
  if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  try {
    write_pcm_file("/dev/full", random_raw32(2, 16, 1 << 20, 1), FileFormat::raw);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/full"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::exists("/dev/full")) << "devices are never removed";
}

TEST(WavWriter, MismatchedBlocksAreRejected) {
  TempDir dir;
  const auto pcm = random_raw32(2, 16, 100, 5);
  FileWriter w(dir.file("x.wav"), pcm);
  EXPECT_THROW(w.append(random_raw32(3, 16, 10, 1)), Error);
  EXPECT_THROW(w.append(pcm, 50, 51), Error);
}

}  // namespace
}  // namespace sigpu::io
