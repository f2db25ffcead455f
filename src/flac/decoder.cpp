// The public entry points: parse, pick a backend, decode, check MD5, report.
#include <algorithm>
#include <cstring>
#include <fstream>

#include "core/thread_pool.hpp"

#include "core/md5.hpp"
#include "flac/backends.hpp"
#include "flac/decoder_common.hpp"
#include "flac/gpu_driver.hpp"
#include "flac/gpu_pool.hpp"
#include "flac/multi_device.hpp"
#include "flac/pcm_md5.hpp"
#include "flac/pcm_store.hpp"

namespace sigpu::flac {

std::size_t bytes_per_sample(SampleFormat f) {
  return pcm_value_bytes(f);
}

std::string Damage::message() const {
  std::string m = "byte " + std::to_string(byte_offset) + " (frame " +
                  std::to_string(frame_number) + "): " + what;
  if (samples)
    m += "; samples " + std::to_string(first_sample) + ".." +
         std::to_string(first_sample + samples) + " filled with silence";
  return m;
}

namespace {

/// The serial reference produces raw32 interleaved; other formats are converted here.
Pcm convert(Pcm raw, SampleFormat format, Layout layout) {
  if (format == SampleFormat::raw32 && layout == Layout::interleaved) return raw;
  Pcm out = pcm_shape(raw, raw.samples);
  out.format = format;
  out.layout = layout;
  out.bytes.resize(raw.samples * raw.channels * bytes_per_sample(format));
  PcmTarget t{out.bytes.data(), format, layout, raw.channels, raw.bits_per_sample, raw.samples};
  const auto* src = raw.samples_as<std::int32_t>();
  for (std::uint64_t i = 0; i < raw.samples; ++i)
    for (unsigned c = 0; c < raw.channels; ++c) store_sample(t, i, c, src[i * raw.channels + c]);
  return out;
}

}  // namespace

bool audio_damaged(const std::vector<Damage>& damage) {
  return std::any_of(damage.begin(), damage.end(),
                     [](const Damage& d) { return d.what != kAfterLastFrame; });
}

bool md5_wanted(const Stream& stream, const DecodeOptions& o, const Pcm& shape) {
  return o.verify_md5 && stream.has_streaminfo && stream.info.md5_set() &&
         lossless_for(shape.format, shape.bits_per_sample);
}

void finish_decode(Decoded& d, DecodeOutput&& r, const DecodeOptions& o, bool check_md5,
                   const std::array<std::uint8_t, 16>* computed, const std::uint8_t* pcm_at) {
  std::sort(r.damage.begin(), r.damage.end(), [](const Damage& a, const Damage& b) {
    return a.first_sample != b.first_sample ? a.first_sample < b.first_sample
                                            : a.byte_offset < b.byte_offset;
  });
  d.report.frames = r.frames;
  d.report.frames_numbered = r.frames_numbered;
  d.report.damage = std::move(r.damage);
  // A stream without STREAMINFO whose parameters the caller gave (o.params: a cut, a ranged
  // decode's window) starts at a frame by the caller's word: its parse's "no fLaC marker" is
  // no news.
  if (o.params && !d.stream.has_streaminfo) d.stream.warnings.clear();
  d.report.warnings = std::move(d.stream.warnings);
  d.report.warnings.insert(d.report.warnings.end(), r.warnings.begin(), r.warnings.end());
  d.pcm = std::move(r.pcm);
  if (o.stop_on_damage && !d.report.damage.empty()) throw Error(d.report.damage.front().message());

  const StreamInfo& info = d.stream.info;
  if (!d.stream.has_streaminfo || !info.md5_set()) {
    d.report.md5 = Md5Check::not_set;
    return;
  }
  d.report.md5_expected = to_hex(info.md5.data(), 16);
  if (!o.verify_md5 || !check_md5 || audio_damaged(d.report.damage) ||
      !lossless_for(d.pcm.format, d.pcm.bits_per_sample)) {
    d.report.md5 = Md5Check::skipped;
    return;
  }
  const auto got = computed ? *computed : pcm_md5(d.pcm, pcm_at);
  d.report.md5_computed = to_hex(got.data(), 16);
  d.report.md5 = got == info.md5 ? Md5Check::match : Md5Check::mismatch;
}

Decoded decode_into(std::span<const std::uint8_t> file, std::span<std::uint8_t> out,
                    const DecodeOptions& o) {
  if (resolve(o.backend) == Backend::cuda)
    return multi_device(o) ? decode_multi_device(file, o, out)
                           : gpu_decode(*EngineLease(o.device), file, out, o);
  Decoded d = decode(file, o);
  if (d.pcm.bytes.size() == out.size() && !out.empty()) {
    std::memcpy(out.data(), d.pcm.bytes.data(), out.size());
    d.pcm.bytes = {};
  }
  return d;
}

Decoded decode(std::span<const std::uint8_t> file, const DecodeOptions& o) {
  const Backend backend = resolve(o.backend);
  if (backend == Backend::cuda) return decode_into(file, {}, o);
  Decoded d;
  d.stream = parse_stream(file);
  d.report.backend = backend;
  DecodeOutput r;
  if (backend == Backend::cpu) {
    r = decode_serial(file, d.stream, o.params);
    const std::uint64_t bytes = r.pcm.samples * r.pcm.channels * bytes_per_sample(o.format);
    if (o.max_output_bytes && bytes > o.max_output_bytes)
      throw Error("output would be " + std::to_string(bytes) + " bytes, over the limit of " +
                  std::to_string(o.max_output_bytes));
    r.pcm = convert(std::move(r.pcm), o.format, o.layout);
  } else {
    r = decode_parallel_cpu(file, d.stream, o);
  }
  finish_decode(d, std::move(r), o, true);
  return d;
}

std::vector<BatchResult> decode_batch(std::span<const std::span<const std::uint8_t>> files,
                                      const DecodeOptions& o) {
  return decode_batch_into(files, {}, o);
}

std::vector<BatchResult> decode_batch_into(std::span<const std::span<const std::uint8_t>> files,
                                           std::span<const std::span<std::uint8_t>> outs,
                                           const DecodeOptions& o) {
  if (!outs.empty() && outs.size() != files.size())
    throw UsageError("decode_batch_into: " + std::to_string(outs.size()) + " outputs for " +
                     std::to_string(files.size()) + " files");
  const Backend backend = resolve(o.backend);
  if (backend == Backend::cuda)
    return multi_device(o) ? decode_batch_multi_device(files, outs, o)
                           : gpu_decode_batch(*EngineLease(o.device), files, outs, o);
  std::vector<BatchResult> out(files.size());
  auto one = [&](std::size_t i, Backend b) {
    DecodeOptions opt = o;
    opt.backend = b;
    try {
      out[i].decoded =
          decode_into(files[i], outs.empty() ? std::span<std::uint8_t>{} : outs[i], opt);
    } catch (const std::exception& e) {
      out[i].error = e.what();
    }
  };
  if (backend == Backend::cpu) {
    for (std::size_t i = 0; i < files.size(); ++i) one(i, Backend::cpu);
    return out;
  }
  // Short files gain nothing from splitting one over all cores (the search and index have a
  // fixed cost): they take one core each; long ones still get all cores, one after another.
  constexpr std::size_t kLongFile = 32u << 20;
  std::vector<std::size_t> short_files;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (files[i].size() > kLongFile)
      one(i, Backend::cpu_parallel);
    else
      short_files.push_back(i);
  }
  ThreadPool::shared().parallel_for(
      short_files.size(),
      [&](std::size_t b, std::size_t e) {
        for (std::size_t j = b; j < e; ++j) one(short_files[j], Backend::cpu);
      },
      1);
  return out;
}

ByteBuffer read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw Error(path + ": cannot open");
  const auto size = static_cast<std::size_t>(in.tellg());
  ByteBuffer bytes(size);
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(size)))
    throw Error(path + ": read failed");
  return bytes;
}

Decoded decode_file(const std::string& path, const DecodeOptions& o) {
  const ByteBuffer bytes = read_file(path);
  try {
    return decode(bytes, o);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace sigpu::flac
