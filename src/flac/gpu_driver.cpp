#include "flac/gpu_driver.hpp"

#include <algorithm>
#include <atomic>
#include <optional>

#include "core/thread_pool.hpp"
#include "flac/decoder_common.hpp"
#include "flac/gpu_pool.hpp"
#include "flac/multi_device.hpp"
#include "flac/pcm_md5.hpp"

namespace sigpu::flac {
namespace {

std::atomic<std::size_t> pinned_parts_min{std::size_t{64} << 20};
std::atomic<std::size_t> pinned_part_count{2};

}  // namespace

Decoded gpu_decode_whole(GpuEngine& engine, std::span<const std::uint8_t> file,
                         std::span<std::uint8_t> out, const DecodeOptions& o) {
  Decoded d;
  d.stream = parse_stream(file);
  d.report.backend = Backend::cuda;
  if (o.device_memory_budget) {
    finish_decode(d, engine.decode_streaming(file, d.stream, o), o, true);
    return d;
  }
  // The PCM is hashed as it lands, when it is wanted: known once the engine has decoded.
  std::optional<FollowingMd5> md5;
  bool decided = false;
  auto landed = [&](const DecodeOutput& so_far, const std::uint8_t* pcm, std::size_t end) {
    if (!decided) {
      decided = true;
      if (!audio_damaged(so_far.damage) && md5_wanted(d.stream, o, so_far.pcm) &&
          o.layout == Layout::interleaved)
        md5.emplace(so_far.pcm, pcm);
    }
    if (md5) md5->landed(end);
  };
  DecodeOutput r = engine.decode(file, d.stream, o, out, landed);
  std::array<std::uint8_t, 16> digest{};
  if (md5) digest = md5->finish();
  // PCM left in the caller's memory and not hashed on its way (planar) is hashed there.
  const std::uint8_t* at = r.pcm.bytes.empty() && !out.empty() ? out.data() : nullptr;
  finish_decode(d, std::move(r), o, true, md5 ? &digest : nullptr, at);
  return d;
}

void set_pinned_parts_min_bytes(std::size_t bytes) {
  pinned_parts_min = bytes;
}
std::size_t pinned_parts_min_bytes() {
  return pinned_parts_min;
}
void set_pinned_parts(std::size_t parts) {
  pinned_part_count = parts;
}
std::size_t pinned_parts() {
  return pinned_part_count;
}

std::size_t pinned_parts_for(GpuEngine& engine, std::span<const std::uint8_t> file,
                             std::span<std::uint8_t> out, const DecodeOptions& o) {
  // Pinned in and out: the copies are the DMA engines' alone, so parts on streams of their own
  // overlap one part's copies with another's kernels. The first part's copy in goes alone, and
  // the last part's copy out; more parts shorten those ends but give each kernel fewer frames
  // (flac_bench's pinned rows compare 1, 2, 4 and 8 parts).
  const bool split = !o.device_memory_budget && file.size() >= pinned_parts_min_bytes() &&
                     !out.empty() && engine.pinned(file.data()) && engine.pinned(out.data());
  return split ? std::max<std::size_t>(1, pinned_parts()) : 1;
}

Decoded gpu_decode(GpuEngine& engine, std::span<const std::uint8_t> file,
                   std::span<std::uint8_t> out, const DecodeOptions& o) {
  const std::size_t parts = pinned_parts_for(engine, file, out, o);
  if (parts == 1) return gpu_decode_whole(engine, file, out, o);
  const int device = engine.device();
  return decode_in_parts(
      file, o, parts,
      [&](std::size_t k, std::span<const std::uint8_t> part, const DecodeOptions& po,
          std::span<std::uint8_t> into) {
        if (k == 0) return gpu_decode_whole(engine, part, into, po);
        EngineLease other(device);
        return gpu_decode_whole(*other, part, into, po);
      },
      out);
}

std::vector<BatchResult> gpu_decode_batch(GpuEngine& engine,
                                          std::span<const std::span<const std::uint8_t>> files,
                                          std::span<const std::span<std::uint8_t>> outs,
                                          const DecodeOptions& o) {
  std::vector<EngineFile> got = engine.decode_batch(files, outs, o);
  std::vector<BatchResult> out(got.size());
  ThreadPool::shared().parallel_for(
      got.size(),
      [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) {
          if (!got[i].error.empty()) {
            out[i].error = std::move(got[i].error);
            continue;
          }
          try {
            Decoded& d = out[i].decoded;
            d.stream = std::move(got[i].stream);
            d.report.backend = Backend::cuda;
            // PCM without bytes landed in the caller's output.
            const std::uint8_t* at =
                got[i].out.pcm.bytes.empty() && !outs.empty() ? outs[i].data() : nullptr;
            finish_decode(d, std::move(got[i].out), o, true, nullptr, at);
          } catch (const std::exception& ex) {
            out[i].error = ex.what();
          }
        }
      },
      1);
  return out;
}

// The public CudaDecoder: one engine of its own, through the driver.
struct CudaDecoder::Impl {
  std::unique_ptr<GpuEngine> engine;
};

CudaDecoder::CudaDecoder(int device) : impl_(std::make_unique<Impl>()) {
  impl_->engine = GpuEngine::create(device);
}
CudaDecoder::~CudaDecoder() = default;
CudaDecoder::CudaDecoder(CudaDecoder&&) noexcept = default;
CudaDecoder& CudaDecoder::operator=(CudaDecoder&&) noexcept = default;

Decoded CudaDecoder::decode(std::span<const std::uint8_t> file, const DecodeOptions& o) {
  return gpu_decode(*impl_->engine, file, {}, o);
}

Decoded CudaDecoder::decode_into(std::span<const std::uint8_t> file, std::span<std::uint8_t> out,
                                 const DecodeOptions& o) {
  return gpu_decode(*impl_->engine, file, out, o);
}

std::vector<BatchResult> CudaDecoder::decode_batch(
    std::span<const std::span<const std::uint8_t>> files, const DecodeOptions& o) {
  return gpu_decode_batch(*impl_->engine, files, {}, o);
}

DevicePcm CudaDecoder::decode_device(const std::uint8_t* d_file, std::size_t size,
                                     const Stream& stream, const DecodeOptions& o,
                                     DecodeReport& report) {
  DeviceOutput got = impl_->engine->decode_device(d_file, size, stream, o);
  const Pcm shape = got.out.pcm;
  Decoded d;
  d.stream = stream;
  d.report.backend = Backend::cuda;
  // The MD5 covers the samples: to check it, a copy of the PCM comes to the host and is hashed
  // there (verify_md5 = false leaves the PCM on the device alone).
  const bool hash = !audio_damaged(got.out.damage) && md5_wanted(stream, o, shape);
  ByteBuffer host(hash ? shape.samples * shape.channels * bytes_per_sample(shape.format) : 0);
  if (hash) impl_->engine->download(host.data(), got.data, host.size());
  finish_decode(d, std::move(got.out), o, hash, nullptr, hash ? host.data() : nullptr);
  report = std::move(d.report);
  DevicePcm p;
  p.format = shape.format;
  p.layout = shape.layout;
  p.sample_rate = shape.sample_rate;
  p.channels = shape.channels;
  p.bits_per_sample = shape.bits_per_sample;
  p.samples = shape.samples;
  p.size_bytes = shape.samples * shape.channels * bytes_per_sample(shape.format);
  p.data = got.data;
  p.owner = std::move(got.owner);
  return p;
}

}  // namespace sigpu::flac
