// FLAC on several GPUs against one, host to host, in one run on one machine: a long file
// (decode_into with DecodeOptions::devices, the PCM straight into the caller's buffer) and a
// batch of short clips, both into the caller's buffers (decode_batch_into, one arena) and into
// fresh buffers of the library's (decode_batch), from pageable and from pinned host memory,
// on 1, 2, 4, ... of the visible devices. libFLAC decodes the file once beside them (the peer, one
// thread) and gives the reference every output is checked against, sample for sample.
//
//   flac_devices_bench FILE [--clips N] [--clip-seconds S] [--distinct D] [--repeat R]
//                      [--memory pinned|pageable|both]
//
// Rows: "file" the long file, "clips" the clips into the arena, "fresh" the clips into fresh
// buffers (pinned or pageable is then the input's memory alone). --clips 0 leaves the clips out.
// The clips are D distinct --clip-seconds pieces of FILE's audio, encoded by libFLAC (level 5) in
// process, repeated to N files. Every row is int16 output without MD5 (the serial MD5 is a host
// cost no device count changes), the median of R runs after a warm-up, and is printed with its
// ratio to one GPU and its bounds measured in the same run: each device's PCIe link (pinned H2D and
// D2H; the devices' links in parallel), what the devices used move together from and to pinned
// memory (up, down, and both at once, all devices started together: they share the host's memory
// and root ports) and, for pageable memory, the host's copy rate over all cores (staging copies
// every byte once on the host); for fresh buffers, the time all cores take to write that much PCM
// into new buffers of a clip's size (page faults included), which no device count changes.
#include <sigpu/core.hpp>
#include <sigpu/flac.hpp>

#include <FLAC/stream_decoder.h>
#include <FLAC/stream_encoder.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "pcie_probe.hpp"

#ifdef SIGPU_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;
namespace flac = sigpu::flac;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Reference {
  unsigned channels = 0, rate = 0, bits = 0;
  std::vector<std::int16_t> pcm;  // interleaved
};

FLAC__StreamDecoderWriteStatus on_write(const FLAC__StreamDecoder*, const FLAC__Frame* frame,
                                        const FLAC__int32* const buffer[], void* data) {
  auto& ref = *static_cast<Reference*>(data);
  ref.channels = frame->header.channels;
  ref.rate = frame->header.sample_rate;
  ref.bits = frame->header.bits_per_sample;
  for (unsigned i = 0; i < frame->header.blocksize; ++i)
    for (unsigned c = 0; c < frame->header.channels; ++c)
      ref.pcm.push_back(static_cast<std::int16_t>(buffer[c][i]));
  return FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE;
}
void on_error(const FLAC__StreamDecoder*, FLAC__StreamDecoderErrorStatus, void*) {}

Reference libflac_decode(const std::string& path) {
  Reference ref;
  FLAC__StreamDecoder* d = FLAC__stream_decoder_new();
  FLAC__stream_decoder_set_md5_checking(d, false);
  if (FLAC__stream_decoder_init_file(d, path.c_str(), on_write, nullptr, on_error, &ref) !=
          FLAC__STREAM_DECODER_INIT_STATUS_OK ||
      !FLAC__stream_decoder_process_until_end_of_stream(d)) {
    std::fprintf(stderr, "libFLAC cannot decode %s\n", path.c_str());
    std::exit(2);
  }
  FLAC__stream_decoder_delete(d);
  return ref;
}

FLAC__StreamEncoderWriteStatus on_encoded(const FLAC__StreamEncoder*, const FLAC__byte buffer[],
                                          size_t bytes, uint32_t, uint32_t, void* data) {
  auto& out = *static_cast<std::vector<std::uint8_t>*>(data);
  out.insert(out.end(), buffer, buffer + bytes);
  return FLAC__STREAM_ENCODER_WRITE_STATUS_OK;
}

/// `frames` interleaved int16 frames encoded by libFLAC at level 5.
std::vector<std::uint8_t> libflac_encode(const std::int16_t* pcm, std::size_t frames,
                                         const Reference& ref) {
  std::vector<std::uint8_t> out;
  FLAC__StreamEncoder* e = FLAC__stream_encoder_new();
  FLAC__stream_encoder_set_channels(e, ref.channels);
  FLAC__stream_encoder_set_bits_per_sample(e, 16);
  FLAC__stream_encoder_set_sample_rate(e, ref.rate);
  FLAC__stream_encoder_set_compression_level(e, 5);
  FLAC__stream_encoder_set_total_samples_estimate(e, frames);
  FLAC__stream_encoder_init_stream(e, on_encoded, nullptr, nullptr, nullptr, &out);
  std::vector<FLAC__int32> wide(frames * ref.channels);
  for (std::size_t i = 0; i < wide.size(); ++i) wide[i] = pcm[i];
  FLAC__stream_encoder_process_interleaved(e, wide.data(), static_cast<unsigned>(frames));
  FLAC__stream_encoder_finish(e);
  FLAC__stream_encoder_delete(e);
  return out;
}

/// GB/s of memcpy between two pre-touched buffers over all hardware threads (each byte read and
/// written once), the median of 5.
double host_copy_rate(std::size_t bytes) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::uint8_t> a(bytes, 1), b(bytes, 2);
  std::vector<double> rates;
  for (int rep = 0; rep < 6; ++rep) {
    const auto t0 = Clock::now();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        const std::size_t lo = bytes * t / threads, hi = bytes * (t + 1) / threads;
        std::memcpy(b.data() + lo, a.data() + lo, hi - lo);
      });
    for (auto& t : pool) t.join();
    if (rep) rates.push_back(double(bytes) / seconds_since(t0) / 1e9);
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

/// Seconds all hardware threads take to allocate `count` buffers of `bytes` and write them once
/// (as decode_batch's results are: fresh pages), then free them; the median of 3.
double fresh_write_seconds(std::size_t count, std::size_t bytes) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<double> s;
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<flac::ByteBuffer> bufs(count);
    const auto t0 = Clock::now();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        for (std::size_t i = t; i < count; i += threads) {
          bufs[i].resize(bytes);
          std::memset(bufs[i].data(), 1, bytes);
        }
      });
    for (auto& t : pool) t.join();
    s.push_back(seconds_since(t0));
  }
  std::sort(s.begin(), s.end());
  return s[1];
}

/// Host memory of either kind; pinned through cudaMallocHost.
class HostBuffer {
 public:
  HostBuffer(std::size_t bytes, bool pinned) : pinned_(pinned), size_(bytes) {
#ifdef SIGPU_HAVE_CUDA
    if (pinned) {
      void* p = nullptr;
      if (cudaMallocHost(&p, bytes) != cudaSuccess) {
        std::fprintf(stderr, "cannot allocate %zu pinned bytes\n", bytes);
        std::exit(2);
      }
      data_ = static_cast<std::uint8_t*>(p);
    }
#endif
    if (!pinned) {
      own_.resize(bytes);
      data_ = own_.data();
    }
    std::memset(data_, 0, bytes);  // touched, as a loader's reused buffer is
  }
  ~HostBuffer() {
#ifdef SIGPU_HAVE_CUDA
    if (pinned_) cudaFreeHost(data_);
#endif
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  std::uint8_t* data() {
    return data_;
  }
  std::size_t size() const {
    return size_;
  }

 private:
  bool pinned_;
  std::size_t size_;
  std::uint8_t* data_ = nullptr;
  std::vector<std::uint8_t> own_;
};

struct Timing {
  double median = 0, min = 0;
  bool exact = true;
};

/// R timed runs after a warm-up; `check` looks at the warm-up's output.
Timing time_runs(int repeat, const std::function<void()>& run, const std::function<bool()>& check) {
  run();
  Timing t;
  t.exact = check();
  std::vector<double> s;
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = Clock::now();
    run();
    s.push_back(seconds_since(t0));
  }
  std::sort(s.begin(), s.end());
  t.median = s[s.size() / 2];
  t.min = s.front();
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path;
  std::size_t clips = 10000, distinct = 200;
  double clip_seconds = 5;
  int repeat = 5;
  std::string memory = "both";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&] {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return std::string(argv[++i]);
    };
    if (a == "--clips")
      clips = std::stoul(value());
    else if (a == "--clip-seconds")
      clip_seconds = std::stod(value());
    else if (a == "--distinct")
      distinct = std::max<std::size_t>(1, std::stoul(value()));
    else if (a == "--repeat")
      repeat = std::max(1, std::stoi(value()));
    else if (a == "--memory") {
      memory = value();
      if (memory != "pinned" && memory != "pageable" && memory != "both") {
        std::fprintf(stderr, "--memory: '%s' is not pinned, pageable or both\n", memory.c_str());
        return 2;
      }
    } else if (path.empty() && a[0] != '-')
      path = a;
    else {
      std::fprintf(stderr,
                   "usage: flac_devices_bench FILE [--clips N] [--clip-seconds S] [--distinct D] "
                   "[--repeat R] [--memory pinned|pageable|both]\n");
      return 2;
    }
  }
  const auto devices = sigpu::cuda_devices();
  if (path.empty() || devices.empty()) {
    std::fprintf(stderr, "flac_devices_bench: needs FILE and a CUDA device\n");
    return 2;
  }
  std::ifstream in(path, std::ios::binary);
  std::vector<std::uint8_t> file((std::istreambuf_iterator<char>(in)), {});

  auto t0 = Clock::now();
  const Reference ref = libflac_decode(path);
  const double libflac_s = seconds_since(t0);
  const std::size_t frames = ref.pcm.size() / ref.channels;
  const std::size_t pcm_bytes = ref.pcm.size() * 2;
  std::printf("file: %s, %.1f MB, %zu samples x %u channels, %u Hz, %u bits\n", path.c_str(),
              file.size() / 1e6, frames, ref.channels, ref.rate, ref.bits);
  std::printf("devices: %zu x %s; host threads: %u\n", devices.size(), devices[0].name.c_str(),
              std::thread::hardware_concurrency());

  // The clips: `distinct` pieces spread over the file, encoded in parallel, repeated.
  const std::size_t clip_frames =
      std::min<std::size_t>(frames, static_cast<std::size_t>(clip_seconds * ref.rate));
  distinct = std::max<std::size_t>(1, std::min(distinct, clips));
  std::vector<std::vector<std::uint8_t>> encoded(distinct);
  std::vector<std::size_t> clip_at(distinct);
  {
    std::vector<std::thread> pool;
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        for (std::size_t k = t; k < distinct; k += threads) {
          clip_at[k] = (frames - clip_frames) / distinct * k;
          encoded[k] = libflac_encode(ref.pcm.data() + clip_at[k] * ref.channels, clip_frames, ref);
        }
      });
    for (auto& t : pool) t.join();
  }
  std::size_t clip_bytes = 0;
  for (std::size_t i = 0; i < clips; ++i) clip_bytes += encoded[i % distinct].size();
  const std::size_t clips_pcm_bytes = clips * clip_frames * ref.channels * 2;
  std::printf("clips: %zu of %.1f s (%zu distinct), %.1f MB of FLAC, %.1f MB of PCM\n", clips,
              clip_seconds, distinct, clip_bytes / 1e6, clips_pcm_bytes / 1e6);

  const double host_rate = host_copy_rate(std::size_t{1} << 30);
  const double fresh_s = clips ? fresh_write_seconds(clips, clip_frames * ref.channels * 2) : 0;
  std::vector<sigpu::bench::Bandwidth> links;
  for (const auto& d : devices) {
    auto bw = sigpu::bench::probe_bandwidth(d.index);
    if (!bw) {
      std::fprintf(stderr, "cannot measure device %d's PCIe link\n", d.index);
      return 2;
    }
    links.push_back(*bw);
  }
  std::printf("host copy over all threads: %.1f GB/s\n", host_rate);
  if (clips)
    std::printf("the clips' PCM written into fresh buffers over all threads: %.3f s (%.1f GB/s)\n",
                fresh_s, clips_pcm_bytes / fresh_s / 1e9);
  for (std::size_t i = 0; i < links.size(); ++i)
    std::printf("device %zu: %s\n", i, links[i].summary().c_str());
  std::vector<std::size_t> counts;
  for (std::size_t n = 1; n < devices.size(); n *= 2) counts.push_back(n);
  counts.push_back(devices.size());
  std::vector<sigpu::bench::Together> together;  // per entry of counts
  for (std::size_t n : counts) {
    std::vector<int> first;
    for (std::size_t d = 0; d < n; ++d) first.push_back(devices[d].index);
    const auto t = sigpu::bench::probe_together(first);
    if (!t) {
      std::fprintf(stderr, "cannot measure what %zu devices move together\n", n);
      return 2;
    }
    together.push_back(*t);
    std::printf(
        "%zu device%s together, pinned: up %.1f GB/s, down %.1f GB/s, up and down at once "
        "%.1f GB/s\n",
        n, n == 1 ? "" : "s", together.back().h2d, together.back().d2h, together.back().both);
  }
  std::printf("libFLAC, one thread: the file in %.3f s\n\n", libflac_s);

  std::printf("%-6s %-9s %4s %10s %10s %8s %10s %10s %10s %8s %s\n", "what", "memory", "GPUs",
              "median s", "min s", "vs 1 GPU", "PCIe s", "together s", "host s", "of bound",
              "check");
  bool all_exact = true;
  for (bool pinned : {false, true}) {
    if (memory != "both" && pinned != (memory == "pinned")) continue;
    // The long file into the caller's buffer.
    HostBuffer src(file.size(), pinned), dst(pcm_bytes, pinned);
    std::memcpy(src.data(), file.data(), file.size());
    // The clips side by side in one buffer of the same kind, and their PCM's.
    HostBuffer arena(clip_bytes, pinned), clip_out(clips ? clips_pcm_bytes : 0, pinned);
    std::vector<std::span<std::uint8_t>> outs;
    for (std::size_t i = 0; i < clips; ++i)
      outs.emplace_back(clip_out.data() + i * clip_frames * ref.channels * 2,
                        clip_frames * ref.channels * 2);
    std::vector<std::span<const std::uint8_t>> spans;
    for (std::size_t i = 0, at = 0; i < clips; ++i) {
      const auto& e = encoded[i % distinct];
      std::memcpy(arena.data() + at, e.data(), e.size());
      spans.emplace_back(arena.data() + at, e.size());
      at += e.size();
    }
    // 0: the file; 1: the clips into the arena; 2: the clips into fresh buffers.
    for (int what : {0, 1, 2}) {
      const bool batch = what > 0, into = what == 1;
      if (batch && !clips) continue;  // --clips 0: the file only
      double one = 0;
      for (std::size_t c = 0; c < counts.size(); ++c) {
        const std::size_t n = counts[c];
        flac::DecodeOptions o;
        o.backend = sigpu::Backend::cuda;
        o.format = flac::SampleFormat::s16;
        o.verify_md5 = false;
        for (std::size_t d = 0; d < n; ++d) o.devices.push_back(devices[d].index);
        std::vector<flac::BatchResult> results;
        std::string error;
        const std::span<const std::uint8_t> whole(src.data(), src.size());
        const std::span<std::uint8_t> out(dst.data(), dst.size());
        Timing t = time_runs(
            repeat,
            [&] {
              try {
                if (into) {
                  results = flac::decode_batch_into(spans, outs, o);
                } else if (batch) {
                  results = flac::decode_batch(spans, o);
                } else {
                  flac::Decoded d = flac::decode_into(whole, out, o);
                  if (!d.pcm.bytes.empty()) error = "the PCM did not land in the caller's buffer";
                }
              } catch (const std::exception& e) {
                error = e.what();
              }
            },
            [&] {
              if (!error.empty()) return false;
              if (!batch) return std::memcmp(dst.data(), ref.pcm.data(), pcm_bytes) == 0;
              for (std::size_t i = 0; i < clips; ++i) {
                const auto& r = results[i];
                const std::size_t k = i % distinct;
                const std::uint8_t* got = into ? outs[i].data() : r.decoded.pcm.bytes.data();
                if (!r.ok() || r.decoded.pcm.samples != clip_frames ||
                    r.decoded.pcm.bytes.empty() != into ||
                    std::memcmp(got, ref.pcm.data() + clip_at[k] * ref.channels,
                                clip_frames * ref.channels * 2) != 0)
                  return false;
              }
              return true;
            });
        if (n == 1) one = t.median;
        const double in_bytes = batch ? clip_bytes : file.size();
        const double out_bytes = batch ? clips_pcm_bytes : pcm_bytes;
        double pcie = 0;  // the devices' links in parallel, each taking 1/n of the bytes
        for (std::size_t d = 0; d < n; ++d)
          pcie = std::max(pcie, in_bytes / n / (links[d].h2d_pinned * 1e9) +
                                    out_bytes / n / (links[d].d2h_pinned * 1e9));
        // What the n devices move together: each direction alone, and both at once.
        const sigpu::bench::Together& all = together[c];
        const double dma = std::max({in_bytes / (all.h2d * 1e9), out_bytes / (all.d2h * 1e9),
                                     (in_bytes + out_bytes) / (all.both * 1e9)});
        // Staging copies pageable bytes once on the host; fresh buffers take fresh_s to write.
        const double host = batch && !into ? (pinned ? 0 : in_bytes / (host_rate * 1e9)) + fresh_s
                            : pinned       ? 0
                                           : (in_bytes + out_bytes) / (host_rate * 1e9);
        const double bound = std::max({pcie, dma, host});
        all_exact = all_exact && t.exact;
        std::printf("%-6s %-9s %4zu %10.4f %10.4f %7.2fx %10.4f %10.4f %10.4f %7.0f%% %s\n",
                    into    ? "clips"
                    : batch ? "fresh"
                            : "file",
                    pinned ? "pinned" : "pageable", n, t.median, t.min, one / t.median, pcie, dma,
                    host, 100 * bound / t.median,
                    t.exact ? "bit-exact" : ("MISMATCH " + error).c_str());
        std::fflush(stdout);
      }
    }
  }
  return all_exact ? 0 : 1;
}
