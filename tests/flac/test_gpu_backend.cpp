// The CUDA backend against the CPU reference (support/twin.hpp): formats, layouts, damage, and
// output into the caller's memory between guard bands. Runs on the GPU machine (label `gpu`);
// skips cleanly without a device.
#include <gtest/gtest.h>

#include <sigpu/flac.hpp>

#include "support/libflac_oracle.hpp"
#include "support/signals.hpp"
#include "support/twin.hpp"

#ifdef SIGPU_HAVE_CUDA
#include <cuda_runtime.h>

#include "flac/cuda/decode_path.hpp"
#include "flac/gpu_driver.hpp"
#endif

namespace sigpu::flac {
namespace {

namespace twin = test::twin;

class FlacGpuBackend : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!twin::have_device()) GTEST_SKIP() << "no CUDA device";
  }
};

std::vector<std::uint8_t> encode(test::Signal sig, unsigned channels, unsigned bps, std::size_t n,
                                 unsigned level, unsigned blocksize = 0) {
  const auto pcm = test::make_signal(sig, channels, bps, n, 11);
  test::LibflacEncoderOptions o;
  o.level = level;
  o.blocksize = blocksize;
  return test::encode_with_libflac(pcm, channels, bps, 48000, o);
}

void expect_same(const Decoded& a, const Decoded& b, const std::string& what) {
  EXPECT_EQ(a.pcm.samples, b.pcm.samples) << what;
  EXPECT_TRUE(twin::equal(b.pcm.bytes, a.pcm.bytes)) << what << ": PCM bytes";
  ASSERT_EQ(a.report.damage.size(), b.report.damage.size()) << what;
  for (std::size_t k = 0; k < a.report.damage.size(); ++k) {
    EXPECT_EQ(a.report.damage[k].byte_offset, b.report.damage[k].byte_offset) << what;
    EXPECT_EQ(a.report.damage[k].samples, b.report.damage[k].samples) << what;
  }
}

TEST_F(FlacGpuBackend, EveryFormatAndLayoutMatchesTheCpu) {
  for (unsigned bps : {8u, 16u, 24u, 32u})
    for (unsigned ch : {1u, 2u, 6u}) {
      const auto f = encode(test::Signal::music, ch, bps, 40000, 8);
      for (auto fmt :
           {SampleFormat::raw32, SampleFormat::s16, SampleFormat::s32, SampleFormat::f32})
        for (auto layout : {Layout::interleaved, Layout::planar}) {
          DecodeOptions o{.backend = Backend::cpu_parallel, .format = fmt, .layout = layout};
          const Decoded cpu = decode(f, o);
          o.backend = Backend::cuda;
          const Decoded gpu = decode(f, o);
          const std::string what = std::to_string(bps) + " bit " + std::to_string(ch) + " ch fmt " +
                                   std::to_string(int(fmt)) + " layout " +
                                   std::to_string(int(layout));
          expect_same(gpu, cpu, what);
          EXPECT_EQ(gpu.report.md5, cpu.report.md5) << what;
        }
    }
}

// The output is not cleared before the frames are stored: damaged spans and failed frames are
// silenced where they lie. The clean stream is decoded first in each format and layout, so that
// the decoder's reused output buffer holds its samples where the damaged stream must be silent.
TEST_F(FlacGpuBackend, DamagedStreamsMatchTheCpu) {
  const auto clean = encode(test::Signal::music, 2, 16, 100000, 5, 1152);
  auto f = clean;
  f[f.size() / 3] ^= 0x40;
  f[f.size() / 2 + 5] ^= 0x01;
  f.resize(f.size() - 300);
  for (auto fmt : {SampleFormat::raw32, SampleFormat::s16, SampleFormat::f32})
    for (auto layout : {Layout::interleaved, Layout::planar}) {
      DecodeOptions o{.backend = Backend::cuda, .format = fmt, .layout = layout};
      CudaDecoder dec(0);
      ASSERT_TRUE(dec.decode(clean, o).report.ok());
      const Decoded gpu = dec.decode(f, o);
      o.backend = Backend::cpu_parallel;
      const Decoded cpu = decode(f, o);
      EXPECT_GE(gpu.report.damage.size(), 3u);
      expect_same(
          gpu, cpu,
          "damaged, fmt " + std::to_string(int(fmt)) + " layout " + std::to_string(int(layout)));
    }
}

#ifdef SIGPU_HAVE_CUDA  // cuda::search_on_device
// An unbroken stream is decoded before its links and index are ready (chained_frames); a
// stream whose damage only the links or its last frame's decode can show (a frame's CRC-16
// changed, the stream cut inside its last frame, a byte of it changed) is decoded that way
// first, and must then come out as the index says, as on the CPU.
TEST_F(FlacGpuBackend, DamageOnlyTheLinksOrTheLastFrameShowMatchesTheCpu) {
  const auto clean = encode(test::Signal::music, 2, 16, 100000, 5, 4096);
  const std::vector<Candidate> frames = cuda::search_on_device(clean);
  ASSERT_GT(frames.size(), 4u);
  auto crc = clean;
  crc[frames[frames.size() / 2 + 1].pos - 1] ^= 0x04;  // the CRC-16 of the frame before it
  auto cut = clean;
  cut.resize(cut.size() - 10);
  auto flipped = clean;
  flipped[flipped.size() - 40] ^= 0x21;
  for (const auto& [what, f] :
       {std::pair{"crc", crc}, std::pair{"cut", cut}, std::pair{"flipped", flipped}})
    for (auto fmt : {SampleFormat::raw32, SampleFormat::s16}) {
      DecodeOptions o{.backend = Backend::cuda, .format = fmt};
      CudaDecoder dec(0);
      const Decoded whole = dec.decode(clean, o);
      ASSERT_TRUE(whole.report.ok());
      const Decoded gpu = dec.decode(f, o);
      o.backend = Backend::cpu_parallel;
      const Decoded cpu = decode(f, o);
      EXPECT_GE(gpu.report.damage.size(), 1u) << what;
      expect_same(gpu, cpu, std::string(what) + ", fmt " + std::to_string(int(fmt)));
      // Twice on the same decoder: what the first decode left must not matter.
      expect_same(dec.decode(clean, o), whole, std::string(what) + ", clean again");
    }
}
#endif

TEST_F(FlacGpuBackend, FalseSyncsNeverChangeTheOutput) {
  const auto pcm = test::make_adversarial(2, 16, 80000, {48000, 4096, false}, 5);
  test::LibflacEncoderOptions o;
  o.level = 0;
  o.blocksize = 4096;
  o.disable_constant_subframes = o.disable_fixed_subframes = true;
  const auto f = test::encode_with_libflac(pcm, 2, 16, 48000, o);
  const Decoded gpu = decode(f, {.backend = Backend::cuda});
  EXPECT_TRUE(gpu.report.ok());
  EXPECT_EQ(gpu.report.md5, Md5Check::match);
  ASSERT_EQ(gpu.pcm.bytes.size(), pcm.size() * 4);
  EXPECT_TRUE(twin::equal(pcm, std::span(gpu.pcm.samples_as<std::int32_t>(), pcm.size())));
}

// The free functions keep their decoders between calls: buffers grown by a long file must not
// leak into a short one's output, a decode that throws must not leave its decoder half-used for
// the next, and release_gpu_memory() must leave the next call a working decoder.
TEST_F(FlacGpuBackend, KeptDecodersServeCallAfterCall) {
  const auto big = encode(test::Signal::music, 2, 24, 400000, 8);
  const auto small = encode(test::Signal::white_noise, 1, 16, 30000, 5, 1152);
  auto damaged = encode(test::Signal::music, 2, 16, 100000, 5, 1152);
  damaged[damaged.size() / 2] ^= 0x40;
  const Decoded big_cpu = decode(big, {.backend = Backend::cpu});
  const Decoded small_cpu = decode(small, {.backend = Backend::cpu});
  for (int round = 0; round < 3; ++round) {
    const std::string what = "round " + std::to_string(round);
    expect_same(decode(big, {.backend = Backend::cuda}), big_cpu, what + ", long file");
    EXPECT_THROW(decode(damaged, {.backend = Backend::cuda, .stop_on_damage = true}), Error);
    const Decoded s = decode(small, {.backend = Backend::cuda});
    expect_same(s, small_cpu, what + ", short file");
    EXPECT_EQ(s.report.md5, Md5Check::match) << what;
    if (round == 1) release_gpu_memory();
  }
}

#ifdef SIGPU_HAVE_CUDA
// decode_into: pinned buffers (whole, and cut into parts on streams of their own), pageable
// ones, and an output of the wrong size (the PCM then comes back as from decode()); each between
// guard bands, the file checked unchanged.
TEST_F(FlacGpuBackend, DecodeIntoCallerMemory) {
  const auto f = encode(test::Signal::music, 2, 16, 48000 * 20, 5);
  const DecodeOptions o{.format = SampleFormat::s16};
  DecodeOptions cpu_o = o;
  cpu_o.backend = Backend::cpu;
  const Decoded cpu = decode(f, cpu_o);
  const std::size_t n = cpu.pcm.bytes.size();
  twin::Arena pinned(twin::Memory::pinned);
  const std::span pin_in(pinned.input("file", f), f.size());
  std::uint8_t* out = pinned.output<std::uint8_t>("pcm", n);
  const std::span pin_out(out, n);
  CudaDecoder dec;
  for (std::size_t split : {std::size_t{64} << 20, std::size_t{1}}) {
    set_pinned_parts_min_bytes(split);
    for (int round = 0; round < 2; ++round) {
      const std::string what = split == 1 ? "pinned, in parts" : "pinned, whole";
      pinned.poison();
      const Decoded d = dec.decode_into(pin_in, pin_out, o);
      EXPECT_TRUE(d.pcm.bytes.empty()) << what;
      EXPECT_EQ(d.pcm.samples, cpu.pcm.samples) << what;
      EXPECT_EQ(d.report.md5, Md5Check::match) << what;
      EXPECT_TRUE(d.report.ok()) << what;
      EXPECT_TRUE(pinned.intact()) << what;
      EXPECT_TRUE(twin::equal(cpu.pcm.bytes, pinned.read(out, n))) << what;
    }
  }
  set_pinned_parts_min_bytes(std::size_t{64} << 20);
  twin::Arena host;
  std::uint8_t* pageable = host.output<std::uint8_t>("pageable", n);
  const Decoded p = dec.decode_into(f, std::span(pageable, n), o);
  EXPECT_TRUE(p.pcm.bytes.empty());
  EXPECT_TRUE(host.intact());
  EXPECT_TRUE(twin::equal(cpu.pcm.bytes, std::span<const std::uint8_t>(pageable, n)));
  const Decoded wrong = dec.decode_into(pin_in, pin_out.first(n - 2), o);
  expect_same(wrong, cpu, "output of the wrong size");
  EXPECT_TRUE(pinned.intact()) << "output of the wrong size";
  // Planar PCM in the caller's memory is not hashed as it lands: checked there afterwards.
  DecodeOptions planar = o;
  planar.layout = Layout::planar;
  DecodeOptions cpu_planar = planar;
  cpu_planar.backend = Backend::cpu;
  const Decoded cpu_p = decode(f, cpu_planar);
  std::uint8_t* planar_out = host.output<std::uint8_t>("planar", n);
  const Decoded pp = dec.decode_into(f, std::span(planar_out, n), planar);
  EXPECT_TRUE(pp.pcm.bytes.empty());
  EXPECT_EQ(pp.report.md5, Md5Check::match);
  EXPECT_TRUE(host.intact());
  EXPECT_TRUE(twin::equal(cpu_p.pcm.bytes, std::span<const std::uint8_t>(planar_out, n)));
}

// The file in guarded device memory, left as it was; the PCM the CPU's.
TEST_F(FlacGpuBackend, DeviceResidentOutputMatchesHostOutput) {
  const auto f = encode(test::Signal::music, 2, 24, 200000, 8);
  const Decoded cpu = decode(f, {.backend = Backend::cpu, .format = SampleFormat::s32});
  twin::Arena device(twin::Memory::device);
  const std::uint8_t* d_file = device.input("file", f);
  CudaDecoder dec;
  DecodeReport report;
  const Stream stream = parse_stream(f);
  DevicePcm pcm =
      dec.decode_device(d_file, f.size(), stream, {.format = SampleFormat::s32}, report);
  EXPECT_TRUE(report.ok());
  EXPECT_TRUE(device.intact());
  // The MD5 is checked on a host copy (the file has one: libFLAC wrote it).
  EXPECT_EQ(report.md5, cpu.report.md5);
  EXPECT_EQ(report.md5, Md5Check::match);
  ASSERT_EQ(pcm.size_bytes, cpu.pcm.bytes.size());
  std::vector<std::uint8_t> host(pcm.size_bytes);
  ASSERT_EQ(cudaMemcpy(host.data(), pcm.data, pcm.size_bytes, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_TRUE(twin::equal(cpu.pcm.bytes, host));
  DecodeReport unchecked;
  dec.decode_device(d_file, f.size(), stream, {.format = SampleFormat::s32, .verify_md5 = false},
                    unchecked);
  EXPECT_EQ(unchecked.md5, Md5Check::skipped);
}
#endif

TEST(FlacNoGpu, CudaBackendRefusesClearlyWithoutADevice) {
  if (!cuda_devices().empty()) GTEST_SKIP() << "a device is present";
  const auto f = encode(test::Signal::music, 1, 16, 1000, 0);
  EXPECT_THROW(decode(f, {.backend = Backend::cuda}), UnsupportedError);
  EXPECT_NO_THROW(decode(f, {.backend = Backend::automatic}));
}

}  // namespace
}  // namespace sigpu::flac
