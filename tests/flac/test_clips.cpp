// decode_clips: a batch of clips equals the signals the files were encoded from (converted as
// the API says: float32 scaled by 2^-(bits-1), channels averaged for mono, zeros past the end),
// for files of different shapes (16 and 24 bits; 1, 2 and 3 channels; fixed and variable
// blocks), clips at a file's start, at its end and past it, in both layouts; the cuda batch,
// written on the device, equals the CPU's value for value, a damaged window included, and is
// written only after the events it is told to wait for. The host's plan (plan_ranges) is checked
// on its own: every window it finds starts at a frame, holds its range and, where its frames have
// verified successors, carries an index that decodes to the range's samples.
#include <gtest/gtest.h>

#include <sigpu/flac.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <thread>
#include <tuple>
#include <vector>

#include "flac/backends.hpp"
#include "flac/range_window.hpp"
#include "support/libflac_oracle.hpp"
#include "support/rng.hpp"
#include "support/signals.hpp"
#include "support/twin.hpp"
#include "support/var_encoder.hpp"

#ifdef SIGPU_HAVE_CUDA
#include <cuda_runtime.h>

#include "flac/gpu_engine.hpp"
#endif

namespace sigpu::flac {
namespace {

namespace twin = test::twin;

/// A FLAC file and the signal it was encoded from.
struct Source {
  std::vector<std::int32_t> pcm;  ///< interleaved
  unsigned channels = 0, bps = 0;
  std::vector<std::uint8_t> file;
  std::uint64_t samples() const { return pcm.size() / channels; }
};

Source libflac_source(unsigned channels, unsigned bps, std::size_t samples, std::uint64_t seed) {
  Source s{test::make_signal(test::Signal::music, channels, bps, samples, seed), channels, bps, {}};
  s.file = test::encode_with_libflac(s.pcm, channels, bps, 44100, {});
  return s;
}

Source var_source(unsigned channels, unsigned bps, std::size_t samples, std::uint64_t seed) {
  Source s{test::make_signal(test::Signal::music, channels, bps, samples, seed), channels, bps, {}};
  test::VarEncoderOptions o;
  o.channels = channels;
  o.bits_per_sample = bps;
  o.max_block = 8192;
  o.seed = seed;
  s.file = test::var_encode(s.pcm, o);
  return s;
}

struct Sources {
  Source stereo16, stereo24, mono16, three24;
};

const Sources& sources() {
  static const Sources s{libflac_source(2, 16, 44100 * 6, 1), libflac_source(2, 24, 44100 * 5, 2),
                         libflac_source(1, 16, 44100 * 4, 3), var_source(3, 24, 44100 * 4, 4)};
  return s;
}

struct Clip {
  const Source* src;
  std::uint64_t first;
};

/// Clips of `length` samples: at each file's start, ending at its end, running past it, and
/// some anywhere.
std::vector<Clip> some_clips(std::vector<const Source*> files, std::uint64_t length,
                             std::uint64_t seed) {
  std::vector<Clip> c;
  for (const Source* s : files) {
    c.push_back({s, 0});
    c.push_back({s, s->samples() - length});
    c.push_back({s, s->samples() - length / 3});
  }
  test::Rng rng{seed};
  for (int i = 0; i < 9; ++i) {
    const Source* s = files[i % files.size()];
    c.push_back({s, rng.next() % (s->samples() - length)});
  }
  return c;
}

std::vector<FileRange> ranges_of(const std::vector<Clip>& clips, std::uint64_t length) {
  std::vector<FileRange> r;
  for (const Clip& c : clips) r.push_back({c.src->file, {c.first, length}});
  return r;
}

/// The float32 batch the clips should give, from the encoded signals.
std::vector<float> expected(const std::vector<Clip>& clips, std::uint64_t length, bool planar,
                            bool mono) {
  const unsigned channels = mono ? 1 : clips[0].src->channels;
  std::vector<float> out(clips.size() * length * channels, 0.0f);
  for (std::size_t i = 0; i < clips.size(); ++i) {
    const Source& s = *clips[i].src;
    auto value = [&](std::uint64_t t, unsigned c) {
      return std::ldexp(float(s.pcm[t * s.channels + c]), -int(s.bps - 1));
    };
    for (std::uint64_t t = 0; t < length && clips[i].first + t < s.samples(); ++t) {
      const std::uint64_t at = clips[i].first + t;
      for (unsigned c = 0; c < channels; ++c) {
        double x = value(at, c);
        if (mono && s.channels > 1) {
          x = 0;
          for (unsigned k = 0; k < s.channels; ++k) x += value(at, k);
          x /= s.channels;
        }
        out[i * length * channels + (planar ? c * length + t : t * channels + c)] = float(x);
      }
    }
  }
  return out;
}

std::vector<float> clips_on_host(const std::vector<FileRange>& ranges, unsigned channels, bool mono,
                                 const DecodeOptions& o, ClipsReport* report = nullptr) {
  std::vector<float> out(ranges.size() * ranges[0].range.count * channels, -7.0f);
  ClipsReport r = decode_clips(ranges, out.data(), mono, o);
  for (const std::string& e : r.errors) EXPECT_TRUE(e.empty()) << e;
  EXPECT_EQ(r.channels, channels);
  if (report) *report = std::move(r);
  return out;
}

TEST(FlacClips, EqualTheEncodedSignal) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  const Sources& s = sources();
  const std::uint64_t length = 44100;
  for (const Backend b : {Backend::cpu, Backend::cpu_parallel}) {
    SCOPED_TRACE(to_string(b));
    const auto stereo = some_clips({&s.stereo16, &s.stereo24}, length, 5);
    for (const Layout layout : {Layout::planar, Layout::interleaved}) {
      const DecodeOptions o{.backend = b, .format = SampleFormat::f32, .layout = layout};
      const bool planar = layout == Layout::planar;
      EXPECT_TRUE(twin::equal(expected(stereo, length, planar, false),
                              clips_on_host(ranges_of(stereo, length), 2, false, o)));
    }
    const auto mixed = some_clips({&s.stereo16, &s.mono16, &s.three24}, length, 6);
    const DecodeOptions o{.backend = b, .format = SampleFormat::f32, .layout = Layout::planar};
    EXPECT_TRUE(twin::equal(expected(mixed, length, true, true),
                            clips_on_host(ranges_of(mixed, length), 1, true, o)));
    const auto three = some_clips({&s.three24}, length, 7);
    EXPECT_TRUE(twin::equal(expected(three, length, true, false),
                            clips_on_host(ranges_of(three, length), 3, false, o)));
  }
}

TEST(FlacClips, OneClipAndIntegerFormats) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  const Source& s = sources().stereo24;
  const std::vector<FileRange> one = {{s.file, {1000, 3000}}};
  const std::vector<Clip> clip = {{&s, 1000}};
  EXPECT_TRUE(twin::equal(expected(clip, 3000, true, false),
                          clips_on_host(one, 2, false,
                                        {.backend = Backend::cpu_parallel,
                                         .format = SampleFormat::f32,
                                         .layout = Layout::planar})));
  // s16 of 24-bit samples keeps their top 16 bits.
  std::vector<std::int16_t> out(2 * 3000);
  const ClipsReport r = decode_clips(one, out.data(), false,
                                     {.format = SampleFormat::s16, .layout = Layout::interleaved});
  ASSERT_TRUE(r.errors[0].empty()) << r.errors[0];
  for (std::size_t k = 0; k < out.size(); ++k)
    ASSERT_EQ(out[k], std::int16_t(s.pcm[1000 * 2 + k] >> 8)) << k;
}

TEST(FlacClips, RefuseBatchesThatDoNotFit) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  const Sources& s = sources();
  std::vector<float> out(4 * 100);
  const std::vector<FileRange> mixed = {{s.stereo16.file, {0, 100}}, {s.mono16.file, {0, 100}}};
  EXPECT_THROW(decode_clips(mixed, out.data(), false, {.backend = Backend::cpu_parallel}),
               UsageError);
  EXPECT_NO_THROW(decode_clips(mixed, out.data(), true, {.backend = Backend::cpu_parallel}));
  const std::vector<FileRange> lengths = {{s.stereo16.file, {0, 100}}, {s.stereo16.file, {0, 50}}};
  EXPECT_THROW(decode_clips(lengths, out.data(), false), UsageError);
  const std::vector<std::uint8_t> junk(70000, 0x5a);
  const std::vector<FileRange> bad = {{s.stereo16.file, {0, 100}}, {junk, {0, 100}}};
  const ClipsReport r = decode_clips(bad, out.data(), false, {.backend = Backend::cpu_parallel});
  EXPECT_TRUE(r.errors[0].empty());
  EXPECT_FALSE(r.errors[1].empty());
}

// The host's plan, checked against a whole decode: each window starts at a frame (its first
// sample is the whole decode's there), holds its range, and its index (when it has one) lists
// frames end to end whose decode is the range's samples. Links made by numbers alone give the
// same windows and indexes as links the CRC-16 verified, on streams without damage.
TEST(FlacClips, PlanFindsWindowsAndTheirIndexes) {
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  const Sources& s = sources();
  const std::uint64_t length = 30000;
  const auto clips = some_clips({&s.stereo16, &s.three24, &s.mono16}, length, 8);
  const std::vector<FileRange> ranges = ranges_of(clips, length);
  const RangePlan plan = plan_ranges(ranges);
  ASSERT_EQ(plan.windows.size(), ranges.size());
  const RangePlan numbered = plan_ranges(ranges, Links::numbered);
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    SCOPED_TRACE("numbered links, clip " + std::to_string(i));
    ASSERT_TRUE(numbered.errors[i].empty()) << numbered.errors[i];
    const Window &a = plan.windows[i], &b = numbered.windows[i];
    EXPECT_EQ(std::tie(a.begin, a.end, a.first_sample), std::tie(b.begin, b.end, b.first_sample));
    ASSERT_EQ(a.index.frames.size(), b.index.frames.size());
    for (std::size_t k = 0; k < a.index.frames.size(); ++k) {
      const FrameEntry &x = a.index.frames[k], &y = b.index.frames[k];
      EXPECT_EQ(std::tie(x.pos, x.end, x.out_sample, x.block_size),
                std::tie(y.pos, y.end, y.out_sample, y.block_size));
    }
    EXPECT_EQ(a.index.total_samples, b.index.total_samples);
  }
  std::size_t indexed = 0;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    SCOPED_TRACE("clip " + std::to_string(i));
    ASSERT_TRUE(plan.errors[i].empty()) << plan.errors[i];
    const Window& w = plan.windows[i];
    const Source& src = *clips[i].src;
    EXPECT_EQ(plan.streams[plan.stream_of[i]].info.channels, src.channels);
    EXPECT_LE(w.first_sample, clips[i].first);
    EXPECT_LE(w.end, src.file.size());
    if (w.index.frames.empty()) continue;
    ++indexed;
    const FrameIndex& x = w.index;
    EXPECT_EQ(x.frames.front().pos, 0u);
    EXPECT_EQ(x.frames.back().end, w.end - w.begin);
    for (std::size_t k = 1; k < x.frames.size(); ++k) {
      EXPECT_EQ(x.frames[k].pos, x.frames[k - 1].end);
      EXPECT_EQ(x.frames[k].out_sample, x.frames[k - 1].out_sample + x.frames[k - 1].block_size);
    }
    EXPECT_GE(w.first_sample + x.total_samples, clips[i].first + length);
    const std::uint64_t first = clips[i].first - w.first_sample;
    const auto got = decode_index_cpu(
        std::span(src.file).subspan(w.begin, w.end - w.begin), x,
        {.backend = Backend::cpu_parallel, .format = SampleFormat::raw32}, {first, first + length});
    ASSERT_TRUE(got.has_value());
    const auto* raw = reinterpret_cast<const std::int32_t*>(got->pcm.bytes.data());
    EXPECT_TRUE(twin::equal(
        std::span(src.pcm).subspan(clips[i].first * src.channels, length * src.channels),
        std::span(raw, length * src.channels)));
  }
  // Only the clips that reach a file's last frame lack an index.
  EXPECT_GE(indexed, ranges.size() - 6);
}

#ifdef SIGPU_HAVE_CUDA
/// Device memory for a batch, read back as floats.
struct DeviceBatch {
  explicit DeviceBatch(std::size_t values) : n(values) {
    EXPECT_EQ(cudaMalloc(&p, n * sizeof(float)), cudaSuccess);
    EXPECT_EQ(cudaMemset(p, 0x7f, n * sizeof(float)), cudaSuccess);  // poison
  }
  ~DeviceBatch() { cudaFree(p); }
  std::vector<float> read() const {
    std::vector<float> h(n);
    EXPECT_EQ(cudaMemcpy(h.data(), p, n * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
    return h;
  }
  void* p = nullptr;
  std::size_t n;
};

/// The batch decode_clips writes on the device, against the CPU's.
void expect_gpu_equals_cpu(const std::vector<FileRange>& ranges, unsigned channels, bool mono,
                           Layout layout) {
  const std::uint64_t length = ranges[0].range.count;
  ClipsReport want;
  const std::vector<float> cpu = clips_on_host(
      ranges, channels, mono,
      {.backend = Backend::cpu_parallel, .format = SampleFormat::f32, .layout = layout}, &want);
  DeviceBatch batch(ranges.size() * length * channels);
  const ClipsReport got =
      decode_clips(ranges, batch.p, mono,
                   {.backend = Backend::cuda, .format = SampleFormat::f32, .layout = layout});
  for (const std::string& e : got.errors) EXPECT_TRUE(e.empty()) << e;
  // One clip alone is decoded by the host's cores and uploaded (clip_decode.cpp).
  EXPECT_EQ(got.backend, ranges.size() == 1 ? Backend::cpu_parallel : Backend::cuda);
  EXPECT_EQ(got.channels, channels);
  EXPECT_TRUE(twin::equal(cpu, batch.read()));
  ASSERT_EQ(got.damage.size(), want.damage.size());
  for (std::size_t k = 0; k < got.damage.size(); ++k) {
    EXPECT_EQ(got.damage[k].byte_offset, want.damage[k].byte_offset);
    EXPECT_EQ(got.damage[k].first_sample, want.damage[k].first_sample);
  }
}

TEST(FlacClipsGpu, EqualTheCpu) {
  if (cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  const Sources& s = sources();
  const std::uint64_t length = 44100;
  const auto stereo = some_clips({&s.stereo16, &s.stereo24}, length, 15);
  expect_gpu_equals_cpu(ranges_of(stereo, length), 2, false, Layout::planar);
  expect_gpu_equals_cpu(ranges_of(stereo, length), 2, false, Layout::interleaved);
  const auto mixed = some_clips({&s.stereo16, &s.mono16, &s.three24}, length, 16);
  expect_gpu_equals_cpu(ranges_of(mixed, length), 1, true, Layout::planar);
  const auto three = some_clips({&s.three24}, length, 17);
  expect_gpu_equals_cpu(ranges_of(three, length), 3, false, Layout::planar);
  expect_gpu_equals_cpu({{s.stereo24.file, {777, length}}}, 2, false, Layout::planar);
  // The batch is the signal itself.
  DeviceBatch batch(stereo.size() * length * 2);
  decode_clips(ranges_of(stereo, length), batch.p, false,
               {.backend = Backend::cuda, .format = SampleFormat::f32, .layout = Layout::planar});
  EXPECT_TRUE(twin::equal(expected(stereo, length, true, false), batch.read()));
  // Host memory for a cuda batch is refused; left to choose, a host batch is the host's.
  std::vector<float> host(stereo.size() * length * 2);
  EXPECT_THROW(decode_clips(ranges_of(stereo, length), host.data(), false,
                            {.backend = Backend::cuda, .format = SampleFormat::f32}),
               UsageError);
  const ClipsReport r = decode_clips(ranges_of(stereo, length), host.data(), false,
                                     {.format = SampleFormat::f32, .layout = Layout::planar});
  EXPECT_NE(r.backend, Backend::cuda);
  EXPECT_TRUE(twin::equal(expected(stereo, length, true, false), host));
}

// `after`: the batch is written only once the events' work is done. Here that work holds its
// stream (a host function sleeping), then poisons the batch: a batch written before it would end
// poisoned. One clip (uploaded) and a batch of them (clips at and past a file's end, uploaded
// the general way, the others written by the engine).
TEST(FlacClipsGpu, WritesWaitForTheEventsAfter) {
  if (cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  const Sources& s = sources();
  const std::uint64_t length = 44100;
  const auto many = some_clips({&s.stereo16}, length, 18);
  for (const std::vector<Clip>& clips : {std::vector<Clip>{many[4]}, many}) {
    DeviceBatch batch(clips.size() * length * 2);
    cudaStream_t other = nullptr;
    cudaEvent_t done = nullptr;
    ASSERT_EQ(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking), cudaSuccess);
    ASSERT_EQ(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), cudaSuccess);
    ASSERT_EQ(cudaLaunchHostFunc(
                  other, [](void*) { std::this_thread::sleep_for(std::chrono::milliseconds(300)); },
                  nullptr),
              cudaSuccess);
    ASSERT_EQ(cudaMemsetAsync(batch.p, 0x7f, batch.n * sizeof(float), other), cudaSuccess);
    ASSERT_EQ(cudaEventRecord(done, other), cudaSuccess);
    void* after[] = {done};
    decode_clips(ranges_of(clips, length), batch.p, false,
                 {.backend = Backend::cuda, .format = SampleFormat::f32, .layout = Layout::planar},
                 after);
    EXPECT_EQ(cudaEventQuery(done), cudaSuccess);
    EXPECT_TRUE(twin::equal(expected(clips, length, true, false), batch.read()));
    cudaEventDestroy(done);
    cudaStreamDestroy(other);
  }
}

// A clip whose window holds a damaged frame takes the general way (its damage reported as the
// CPU reports it); the batch's other clips still come from their indexes. Two kinds of damage: a
// byte in the middle of the file, and a frame's CRC-16 alone (the frame still parses as its
// header says, so only the engine's check of the CRC, owed to the host's links by numbers,
// finds it).
TEST(FlacClipsGpu, DamagedWindowFallsBack) {
  if (cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  const Source& clean = sources().stereo16;
  const RangePlan frames = plan_ranges(std::vector<FileRange>{{clean.file, {0, 200000}}});
  ASSERT_GT(frames.windows[0].index.frames.size(), 20u);
  const std::size_t crc_byte = frames.windows[0].begin + frames.windows[0].index.frames[20].end - 1;
  for (const std::size_t at : {clean.file.size() / 2, crc_byte}) {
    SCOPED_TRACE("damage at byte " + std::to_string(at));
    Source damaged = clean;
    damaged.file[at] ^= 0x5a;
    const Decoded whole = decode(damaged.file, {.backend = Backend::cpu});
    ASSERT_FALSE(whole.report.damage.empty());
    const std::uint64_t length = 44100;
    const std::uint64_t hit = whole.report.damage[0].first_sample;
    const std::vector<Clip> clips = {{&damaged, hit > length / 2 ? hit - length / 2 : 0},
                                     {&damaged, hit + 3 * length},
                                     {&sources().stereo24, 5000}};
    const std::vector<FileRange> ranges = ranges_of(clips, length);
    ClipsReport cpu;
    clips_on_host(ranges, 2, false, {.backend = Backend::cpu_parallel, .format = SampleFormat::f32},
                  &cpu);
    ASSERT_FALSE(cpu.damage.empty());
    expect_gpu_equals_cpu(ranges, 2, false, Layout::planar);
    expect_gpu_equals_cpu(ranges, 2, false, Layout::interleaved);
  }
}

// The engine alone: a window whose bytes no longer match its index fails (its clip left as it
// was); the others are written.
TEST(FlacClipsGpu, EngineRefusesAWindowItsIndexDoesNotFit) {
  if (cuda_devices().empty()) GTEST_SKIP() << "no CUDA device";
  if (!test::libflac_available()) GTEST_SKIP() << "no libFLAC";
  const Source& s = sources().stereo16;
  const std::uint64_t length = 20000;
  const std::vector<Clip> clips = {{&s, 3000}, {&s, 90000}, {&s, 150000}};
  const std::vector<FileRange> ranges = ranges_of(clips, length);
  const RangePlan plan = plan_ranges(ranges);
  std::vector<std::uint8_t> broken = s.file;
  std::vector<ClipWindow> windows;
  for (std::size_t i = 0; i < clips.size(); ++i) {
    const Window& w = plan.windows[i];
    ASSERT_FALSE(w.index.frames.empty());
    const std::span<const std::uint8_t> bytes =
        std::span<const std::uint8_t>(i == 1 ? broken : s.file).subspan(w.begin, w.end - w.begin);
    windows.push_back({bytes, &w.index, clips[i].first - w.first_sample, i});
  }
  // Its second frame's sync code gone: the bytes no longer parse as the index says.
  const FrameEntry& f = plan.windows[1].index.frames[1];
  broken[plan.windows[1].begin + f.pos] = 0x00;
  // Window 2's third frame keeps its shape, but not its CRC-16: seen only where the engine checks
  // the CRC (links by numbers); with verified links it trusts the host's check.
  std::vector<std::uint8_t> crc_broken = s.file;
  crc_broken[plan.windows[2].begin + plan.windows[2].index.frames[2].end - 1] ^= 0x01;
  windows[2].bytes =
      std::span<const std::uint8_t>(crc_broken)
          .subspan(plan.windows[2].begin, plan.windows[2].end - plan.windows[2].begin);
  const std::unique_ptr<GpuEngine> engine = GpuEngine::create(0);
  const std::vector<float> want = expected(clips, length, true, false);
  for (const bool crc_checked : {true, false}) {
    SCOPED_TRACE(crc_checked ? "verified links" : "links by numbers");
    for (ClipWindow& w : windows) w.crc_checked = crc_checked;
    DeviceBatch batch(clips.size() * length * 2);
    const ClipTarget t{batch.p, SampleFormat::f32, Layout::planar, 2, length, false};
    const std::vector<bool> ok = engine->decode_clips(windows, t, {});
    EXPECT_EQ(ok, (std::vector<bool>{true, false, crc_checked}));
    const std::vector<float> got = batch.read();
    for (std::size_t i : {0, 2}) {
      if (i == 2 && !crc_checked) continue;
      EXPECT_TRUE(twin::equal(std::span(want).subspan(i * length * 2, length * 2),
                              std::span(got).subspan(i * length * 2, length * 2)));
    }
  }
}
#endif

}  // namespace
}  // namespace sigpu::flac
