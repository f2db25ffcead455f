// sigpu.flac: decode FLAC files, bytes or GPU-resident streams into arrays.
#include <sigpu/flac.hpp>

#include <map>
#include <mutex>
#include <optional>

#include "array.hpp"
#include "modules.hpp"

namespace sigpu::python {

namespace flac = sigpu::flac;

namespace {

/// Decoded PCM with its stream's shape and the decoder's report.
struct Audio : Array {
  std::uint32_t sample_rate = 0, channels = 0, bits_per_sample = 0;
  std::uint64_t samples = 0;
  flac::DecodeReport report;
};

struct Settings {
  Placement where;
  flac::DecodeOptions options;
};

Settings settings(const std::string& device, const std::string& dtype, bool channels_first,
                  bool verify, bool strict) {
  Settings s;
  s.where = parse_device(device);
  auto& o = s.options;
  o.backend = s.where.cuda ? Backend::cuda : Backend::cpu_parallel;
  o.device = s.where.index;
  if (dtype == "int16")
    o.format = flac::SampleFormat::s16;
  else if (dtype == "int32")
    o.format = flac::SampleFormat::s32;
  else if (dtype == "float32")
    o.format = flac::SampleFormat::f32;
  else
    throw UsageError("dtype must be \"int16\", \"int32\" or \"float32\", not \"" + dtype + "\"");
  o.layout = channels_first ? flac::Layout::planar : flac::Layout::interleaved;
  o.verify_md5 = verify;
  o.stop_on_damage = strict;
  return s;
}

DLDataType sample_type(flac::SampleFormat f) {
  switch (f) {
    case flac::SampleFormat::s16:
      return dl_type<std::int16_t>();
    case flac::SampleFormat::f32:
      return dl_type<float>();
    default:
      return dl_type<std::int32_t>();
  }
}

std::vector<std::int64_t> pcm_shape(flac::Layout layout, std::uint64_t samples,
                                    std::uint32_t channels) {
  if (layout == flac::Layout::planar) return {std::int64_t(channels), std::int64_t(samples)};
  return {std::int64_t(samples), std::int64_t(channels)};
}

template <typename P>
void set_shape(Audio& a, const P& pcm) {
  a.sample_rate = pcm.sample_rate;
  a.channels = pcm.channels;
  a.bits_per_sample = pcm.bits_per_sample;
  a.samples = pcm.samples;
  a.shape = pcm_shape(pcm.layout, pcm.samples, pcm.channels);
  a.dtype = sample_type(pcm.format);
}

/// Host PCM as an Audio: in host memory, or copied to the device for device output.
Audio from_host(flac::Decoded&& d, const Placement& where) {
  Audio a;
  set_shape(a, d.pcm);
  if (where.cuda) {
    static_cast<Array&>(a) =
        device_array(d.pcm.bytes.data(), d.pcm.bytes.size(), a.shape, a.dtype, where.index);
  } else {
    auto owner = std::make_shared<flac::ByteBuffer>(std::move(d.pcm.bytes));
    a.data = owner->data();
    a.owner = owner;
  }
  a.report = std::move(d.report);
  return a;
}

// GPU decoders kept between calls (streams, device buffers), one per caller at a time: calls
// from several Python threads run concurrently on decoders of their own.
class DecoderPool {
 public:
  struct Lease {
    DecoderPool* pool;
    int device;
    std::unique_ptr<flac::CudaDecoder> decoder;
    ~Lease() { pool->put(device, std::move(decoder)); }
  };
  Lease take(int device) {
    std::unique_ptr<flac::CudaDecoder> decoder;
    {
      std::lock_guard lock(mutex_);
      for (auto it = idle_.begin(); it != idle_.end(); ++it)
        if (it->first == device) {
          decoder = std::move(it->second);
          idle_.erase(it);
          break;
        }
    }
    if (!decoder) decoder = std::make_unique<flac::CudaDecoder>(device);
    return Lease{this, device, std::move(decoder)};
  }

 private:
  void put(int device, std::unique_ptr<flac::CudaDecoder> d) {
    std::lock_guard lock(mutex_);
    idle_.emplace_back(device, std::move(d));
  }
  std::mutex mutex_;
  std::vector<std::pair<int, std::unique_ptr<flac::CudaDecoder>>> idle_;
};

DecoderPool& pool() {
  // Never destroyed: decoders outliving the interpreter must not free device memory at exit,
  // when the CUDA runtime may already be gone.
  static auto* p = new DecoderPool;
  return *p;
}

/// The metadata of a stream whose bytes are in device memory, from host copies of its start
/// growing until the metadata fits.
flac::Stream parse_device_stream(const InputBytes& in) {
  std::vector<std::uint8_t> head;
  for (std::size_t n = std::min<std::size_t>(in.bytes.size(), 1 << 16);; n *= 4) {
    n = std::min(n, in.bytes.size());
    head.resize(n);
    copy_to_host(head.data(), in.bytes.data(), n, in.device.device_id);
    try {
      return flac::parse_stream(head);
    } catch (const Error&) {
      if (n == in.bytes.size()) throw;
    }
  }
}

/// Decodes on the GPU into device memory: the compressed bytes are copied there first unless
/// they already are.
Audio decode_device(const InputBytes& in, const Settings& s) {
  const int device = in.device.device_type == kDLCUDA ? in.device.device_id : s.where.index;
  flac::Stream stream =
      in.device.device_type == kDLCUDA ? parse_device_stream(in) : flac::parse_stream(in.bytes);
  std::shared_ptr<DeviceMemory> staged;  // read by the decode, which has finished on return
  const std::uint8_t* d_file = in.bytes.data();
  if (in.device.device_type == kDLCUDA) {
    if (reinterpret_cast<std::uintptr_t>(d_file) % 4)
      throw UsageError("a FLAC stream in GPU memory must start 4-byte aligned");
  } else {
    staged = device_alloc(in.bytes.size(), device);
    copy_to_device(*staged, in.bytes.data(), in.bytes.size());
    d_file = static_cast<const std::uint8_t*>(staged->data());
  }
  flac::DecodeOptions o = s.options;
  o.device = device;
  auto lease = pool().take(device);
  Audio a;
  flac::DevicePcm pcm = lease.decoder->decode_device(d_file, in.bytes.size(), stream, o, a.report);
  set_shape(a, pcm);
  a.data = pcm.data;
  a.owner = pcm.owner;
  a.device = {kDLCUDA, device};
  return a;
}

flac::SampleRange sample_range(std::span<const std::uint8_t> file,
                               std::optional<std::int64_t> start,
                               std::optional<std::int64_t> stop) {
  const std::uint64_t total = flac::parse_stream(file).info.total_samples;
  auto resolve = [&](std::optional<std::int64_t> v, std::uint64_t fallback) -> std::uint64_t {
    if (!v) return fallback;
    if (*v < 0) return std::uint64_t(std::max<std::int64_t>(0, std::int64_t(total) + *v));
    return std::min<std::uint64_t>(std::uint64_t(*v), total);
  };
  const std::uint64_t first = resolve(start, 0), last = resolve(stop, total);
  return {first, last > first ? last - first : 0};
}

Audio decode(py::handle src, const std::string& device, const std::string& dtype,
             std::optional<std::int64_t> start, std::optional<std::int64_t> stop,
             bool channels_first, bool verify, bool strict) {
  const Settings s = settings(device, dtype, channels_first, verify, strict);
  const bool ranged = start || stop;
  InputBytes in = input_bytes(src, s.where.cuda && !ranged);
  py::gil_scoped_release nogil;
  if (ranged) {
    return from_host(flac::decode_range(in.bytes, sample_range(in.bytes, start, stop), s.options),
                     s.where);
  }
  if (s.where.cuda) return decode_device(in, s);
  return from_host(flac::decode(in.bytes, s.options), s.where);
}

std::vector<Audio> decode_batch(const py::iterable& srcs, const std::string& device,
                                const std::string& dtype, bool channels_first, bool verify,
                                bool strict) {
  const Settings s = settings(device, dtype, channels_first, verify, strict);
  std::vector<InputBytes> inputs;
  for (py::handle src : srcs) inputs.push_back(input_bytes(src, false));
  std::vector<std::span<const std::uint8_t>> files;
  for (const auto& in : inputs) files.push_back(in.bytes);
  std::vector<Audio> out;
  py::gil_scoped_release nogil;
  auto results = flac::decode_batch(files, s.options);
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!results[i].error.empty()) {
      throw InputError((inputs[i].name.empty() ? "input " + std::to_string(i) : inputs[i].name) +
                       ": " + results[i].error);
    }
    out.push_back(from_host(std::move(results[i].decoded), s.where));
  }
  return out;
}

/// Clips of `length` samples, clip i from srcs[i] at starts[i], decoded into one array (clips,
/// length, channels) (or (clips, channels, length)) where the batch lives (flac::decode_clips:
/// on the GPU, written there by the decoder). A clip running past its stream's end is padded with
/// zeros. `mono` averages each clip's channels into one (clips of any channel count may then
/// share the batch).
Audio decode_clips(const py::sequence& srcs, const std::vector<std::uint64_t>& starts,
                   std::uint64_t length, const std::string& device, const std::string& dtype,
                   bool channels_first, bool mono) {
  Settings s = settings(device, dtype, channels_first, false, false);
  if (std::size_t(py::len(srcs)) != starts.size())
    throw UsageError("decode_clips takes one start per source");
  if (starts.empty()) throw UsageError("decode_clips needs at least one clip");
  std::vector<InputBytes> inputs;
  for (py::handle src : srcs) inputs.push_back(input_bytes(src, false));
  py::gil_scoped_release nogil;
  auto name = [&](std::size_t i) {
    return inputs[i].name.empty() ? "clip " + std::to_string(i) : inputs[i].name;
  };
  std::vector<flac::FileRange> ranges;
  // A path drawn twice is one file to the decoder (its metadata parsed once).
  std::map<std::string, std::span<const std::uint8_t>> by_path;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    std::span<const std::uint8_t> bytes = inputs[i].bytes;
    if (!inputs[i].name.empty()) bytes = by_path.try_emplace(inputs[i].name, bytes).first->second;
    ranges.push_back({bytes, {starts[i], length}});
  }
  // The batch has the first clip's channel count (one with mono).
  std::uint32_t channels = 1;
  if (!mono) {
    try {
      channels = flac::parse_stream(ranges[0].file).info.channels;
    } catch (const Error& e) {
      throw Error(name(0) + ": " + e.what());
    }
  }
  const std::size_t width = flac::bytes_per_sample(s.options.format);
  const std::size_t bytes = inputs.size() * length * channels * width;
  Audio a;
  if (s.where.cuda) {
    a.memory = device_alloc(bytes, s.where.index);
    a.owner = a.memory;
    a.data = a.memory->data();
    a.device = {kDLCUDA, s.where.index};
  } else {
    auto host = std::make_shared<flac::ByteBuffer>(bytes);
    a.data = host->data();
    a.owner = host;
  }
  // On the GPU the batch is written after the memory's previous users (their events), and is
  // complete on return.
  const flac::ClipsReport r = flac::decode_clips(
      ranges, a.data, mono, s.options, a.memory ? a.memory->after() : std::span<void* const>{});
  if (a.memory) a.memory->waited();
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (!r.errors[i].empty()) throw Error(name(i) + ": " + r.errors[i]);
  a.sample_rate = r.sample_rate;
  a.channels = r.channels;
  a.bits_per_sample = r.bits_per_sample;
  a.report.backend = r.backend;
  a.report.frames = r.frames;
  a.report.damage = r.damage;
  a.samples = length;
  a.dtype = sample_type(s.options.format);
  const auto n = std::int64_t(inputs.size()), len = std::int64_t(length),
             ch = std::int64_t(a.channels);
  a.shape = channels_first ? std::vector<std::int64_t>{n, ch, len}
                           : std::vector<std::int64_t>{n, len, ch};
  return a;
}

std::string hex(const std::array<std::uint8_t, 16>& md5) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (auto b : md5) s += {digits[b >> 4], digits[b & 15]};
  return s;
}

std::string md5_status(flac::Md5Check c) {
  switch (c) {
    case flac::Md5Check::match:
      return "match";
    case flac::Md5Check::mismatch:
      return "mismatch";
    case flac::Md5Check::not_set:
      return "not_set";
    default:
      return "skipped";
  }
}

}  // namespace

void init_flac(py::module_& m) {
  m.doc() = "FLAC decoding on the GPU or all CPU cores, bit-exact with libFLAC.";

  py::class_<flac::Damage>(m, "Damage", "One damaged frame (or gap), filled with silence.")
      .def_readonly("byte_offset", &flac::Damage::byte_offset)
      .def_readonly("byte_length", &flac::Damage::byte_length)
      .def_readonly("frame_number", &flac::Damage::frame_number)
      .def_readonly("first_sample", &flac::Damage::first_sample)
      .def_readonly("samples", &flac::Damage::samples)
      .def_readonly("what", &flac::Damage::what)
      .def_property_readonly("message", &flac::Damage::message)
      .def("__repr__",
           [](const flac::Damage& d) { return "<sigpu.flac.Damage " + d.message() + ">"; });

  py::class_<flac::DecodeReport>(m, "Report", "What a decode found: frames, damage, MD5 check.")
      .def_property_readonly(
          "backend", [](const flac::DecodeReport& r) { return std::string(to_string(r.backend)); })
      .def_readonly("frames", &flac::DecodeReport::frames)
      .def_readonly("damage", &flac::DecodeReport::damage)
      .def_property_readonly(
          "md5", [](const flac::DecodeReport& r) { return md5_status(r.md5); },
          "\"match\", \"mismatch\", \"not_set\" or \"skipped\".")
      .def_readonly("warnings", &flac::DecodeReport::warnings)
      .def_property_readonly("ok", &flac::DecodeReport::ok, "No damage and no MD5 mismatch.");

  py::class_<Audio, Array>(m, "Audio", R"doc(
Decoded PCM: an array of shape (samples, channels), or (channels, samples) with
channels_first=True, in host or GPU memory, with the stream's parameters and the decoder's
report.
)doc")
      .def_readonly("sample_rate", &Audio::sample_rate)
      .def_readonly("channels", &Audio::channels)
      .def_readonly("bits_per_sample", &Audio::bits_per_sample)
      .def_readonly("samples", &Audio::samples, "Samples per channel.")
      .def_readonly("report", &Audio::report);

  py::class_<flac::Stream>(m, "Info", "A FLAC stream's metadata (everything before the audio).")
      .def_property_readonly("sample_rate",
                             [](const flac::Stream& s) { return s.info.sample_rate; })
      .def_property_readonly("channels", [](const flac::Stream& s) { return s.info.channels; })
      .def_property_readonly("bits_per_sample",
                             [](const flac::Stream& s) { return s.info.bits_per_sample; })
      .def_property_readonly(
          "total_samples",
          [](const flac::Stream& s) -> std::optional<std::uint64_t> {
            if (!s.info.total_samples) return std::nullopt;
            return s.info.total_samples;
          },
          "Samples per channel, None when STREAMINFO does not say.")
      .def_property_readonly(
          "duration",
          [](const flac::Stream& s) -> std::optional<double> {
            if (!s.info.total_samples || !s.info.sample_rate) return std::nullopt;
            return double(s.info.total_samples) / s.info.sample_rate;
          },
          "Seconds, None when unknown.")
      .def_property_readonly(
          "md5",
          [](const flac::Stream& s) -> std::optional<std::string> {
            if (!s.info.md5_set()) return std::nullopt;
            return hex(s.info.md5);
          },
          "STREAMINFO's MD5 of the PCM (hex), None when unset.")
      .def_readonly("has_streaminfo", &flac::Stream::has_streaminfo)
      .def_readonly("vendor", &flac::Stream::vendor)
      .def_readonly("comments", &flac::Stream::comments, "Vorbis comments, \"NAME=value\".")
      .def_readonly("audio_offset", &flac::Stream::audio_offset)
      .def("__repr__", [](const flac::Stream& s) {
        return "<sigpu.flac.Info " + std::to_string(s.info.sample_rate) + " Hz, " +
               std::to_string(s.info.channels) + " ch, " + std::to_string(s.info.bits_per_sample) +
               " bit, " + std::to_string(s.info.total_samples) + " samples>";
      });

  m.def(
      "info",
      [](py::handle src) {
        InputBytes in = input_bytes(src, false);
        py::gil_scoped_release nogil;
        return flac::parse_stream(in.bytes);
      },
      py::arg("src"), "Reads the metadata of a FLAC file (path, bytes or host array).");

  m.def("decode", &decode, py::arg("src"), py::kw_only(), py::arg("device") = "auto",
        py::arg("dtype") = "float32", py::arg("start") = py::none(), py::arg("stop") = py::none(),
        py::arg("channels_first") = false, py::arg("verify") = true, py::arg("strict") = false,
        R"doc(
Decodes a FLAC stream into an Audio array.

src: a path, bytes, a NumPy/host array of the file's bytes, or a DLPack array holding them in
GPU memory (decoded there without passing through the host).
device: "auto" (cuda when a GPU is visible), "cpu" (all cores), "cuda" or "cuda:N"; the result
lives there.
dtype: "int16", "int32" (full scale) or "float32" (in [-1, 1)).
start, stop: decode only samples [start, stop) per channel (negative counts from the end);
only the frames around them are decoded.
verify: check the STREAMINFO MD5 (integer dtypes that hold every bit only).
strict: raise at the first damaged frame instead of filling it with silence.
)doc");

  m.def("decode_clips", &decode_clips, py::arg("srcs"), py::arg("starts"), py::kw_only(),
        py::arg("length"), py::arg("device") = "auto", py::arg("dtype") = "float32",
        py::arg("channels_first") = false, py::arg("mono") = false, R"doc(
Decodes clips of `length` samples, clip i from srcs[i] starting at sample starts[i], into one
array (clips, length, channels) (channels_first: (clips, channels, length)) on the device asked
for: a training batch. Only the frames around each clip are decoded (on the GPU with cuda); a
clip past its stream's end is padded with zeros. Paths are memory-mapped; the sources of a batch
decode concurrently. The clips must share the sample rate and the channel count; with mono=True
each clip's channels are averaged into one (any channel counts may then be mixed).
)doc");

  m.def("decode_batch", &decode_batch, py::arg("srcs"), py::kw_only(), py::arg("device") = "auto",
        py::arg("dtype") = "float32", py::arg("channels_first") = false, py::arg("verify") = true,
        py::arg("strict") = false,
        R"doc(
Decodes many FLAC files (paths, bytes or host arrays) in one call: on the GPU, files of one
channel count and bit depth share launches; on the CPU, small files run one per core. Returns
one Audio per input, in order; raises InputError naming the first file that could not be
decoded at all.
)doc");
}

}  // namespace sigpu::python
