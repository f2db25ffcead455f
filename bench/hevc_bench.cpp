// Whole-stream HEVC decoding (All-Intra, or random access with P and B pictures), side by side
// in one run: sigpu on the CPU (`cpu`: the serial reference; `cpu-parallel`: whole pictures on
// all cores) and with the GPU (`cuda`: parsing on all cores, reconstruction and filters on the
// device, the frames copied to the host, and `cuda-dev`, the frames left in device memory;
// `cuda-f`: parsing and reconstruction on all cores, deblocking + SAO on the device),
// against FFmpeg's HEVC decoder (libavcodec, frame + slice threads on all cores) and libde265's
// dec265 CLI (`-t N`; Debian names it libde265-dec265) when it is installed.
//
//   hevc_bench [--input DIR] [--frames N] [--repeat N] [--reps N] [--sizes 1080p,4k]
//              [--bit-depths 8,10] [--random-access KBPS,...] [--skip-missing-peers]
//              [--no-serial] [--no-cpu-parallel] [--no-cuda-f] [--streams N]
//
// Two like-for-like tables. sigpu checks every picture against its MD5 SEI by default; FFmpeg
// does only with `-err_detect crccheck` (AV_EF_CRCCHECK: hevcdec.c's verify_md5 then hashes
// every plane). So the first table times sigpu checking hashes against FFmpeg with crccheck,
// the second sigpu with DecodeOptions::check_hash off against FFmpeg's default (and dec265,
// which checks none without -c).
//
// --repeat N decodes each stream N times back to back as one stream (N x frames pictures): every
// picture is an IDR picture with its own parameter sets, so nothing carries from one copy to the
// next and the decoders see a longer stream (steady-state throughput rather than one picture's
// latency on each core) without longer files to make and carry.
//
// --random-access 40000,8000 replaces the All-Intra streams by random-access ones, x265 --preset
// medium at each bitrate (kb/s; B pictures, references, weighted prediction as x265 chooses),
// ra_<size>_<depth>bit_<K>k_<N>f.hevc. Each copy of a repeated stream starts with its IDR picture.
//
// Inputs: ai_<size>_<depth>bit_<N>f.hevc in --input DIR, else $SIGPU_DATA_DIR/hevc-bench (the
// GPU machine's bundle), else ${SIGPU_CACHE:-~/.cache/sigpu}/hevc-bench, where a missing one is
// made with x265 (--keyint 1 --hash 1 --preset fast --qp 30, FFmpeg's testsrc2 with temporal
// noise); without x265 a missing input is an error naming the file.
//
// --streams N (N >= 2) adds a table of N copies of each stream decoded at once, each by a decoder
// of its own on a thread of its own (a server decoding many streams; NVDEC's figure for this is
// its engines' aggregate): the frames per second of all of them together, without the hash
// check, for cpu-parallel, cuda and FFmpeg (N contexts of as many threads as the host has). Each
// concurrent decode's first run is checked against FFmpeg's frames too.
//
// NVDEC (when this libavcodec has the nvdec hwaccel and the host a device it can open): FFmpeg's
// HEVC decoder with the CUDA hwaccel, frames left in device memory ("nvdec") and copied to the
// host ("nvdec-h", av_hwframe_transfer_data), in the no-hash-check half; with --streams, N such
// decoders at once. Its first run's frames are copied to the host and must equal FFmpeg's
// software frames.
//
// Before any number is printed, every sigpu backend's output is checked: every picture's MD5
// SEI must match and every frame must equal FFmpeg's; dec265's YUV output (-o, untimed) must
// equal FFmpeg's frames too. A failure prints loudly and exits 1.
//
// Each figure is the median of --reps whole-stream decodes after a verified warm-up, from
// memory (the packets are split beforehand for FFmpeg). dec265 is a separate process: its time
// includes process start-up and reading the file. Decoders are reused across repetitions
// (sigpu::hevc::Decoder; FFmpeg's context is flushed), as in a long-running player.
#include <sigpu/core.hpp>
#include <sigpu/hevc.hpp>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/hwcontext.h>
#include <libavutil/log.h>
#include <libavutil/pixdesc.h>
}

#include "core/timer.hpp"
#include "hevc/streams.hpp"

extern char** environ;

namespace fs = std::filesystem;
namespace hevc = sigpu::hevc;

namespace {

struct Options {
  std::vector<std::string> sizes{"1080p", "4k"};
  std::vector<int> depths{8, 10};
  std::vector<int> ra_kbps;  ///< random-access streams at these bitrates; empty: All-Intra
  int frames = 16;
  int repeat = 1;
  int reps = 3;
  std::string input;
  bool skip_missing_peers = false;
  bool serial = true;
  bool cpu_parallel = true;        ///< the cpu-parallel columns
  bool cpu_reconstruction = true;  ///< the cuda-f columns
  int streams = 1;                 ///< > 1: the table of that many streams at once
};

/// A decoded picture as three planes of uint16 samples, rows packed.
struct Picture {
  std::vector<std::uint16_t> planes[3];
};

struct Input {
  std::string name;
  fs::path path;  ///< the stream as decoded: the file, or a temporary with its repeats
  bool temporary = false;
  std::vector<std::uint8_t> bytes;
  std::vector<Picture> reference;  ///< FFmpeg's frames
};

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "\n*** hevc_bench: %s ***\n", what.c_str());
  std::exit(1);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

/// Median wall time of reps calls of fn, in seconds.
double time_median(int reps, const std::function<void()>& fn) {
  std::vector<double> s;
  for (int r = 0; r < reps; ++r) {
    sigpu::Stopwatch w;
    fn();
    s.push_back(w.seconds());
  }
  return median(s);
}

std::string av_error(int err) {
  char buf[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(err, buf, sizeof buf);
  return buf;
}

/// A CUDA device context for FFmpeg's nvdec hwaccel, or null where this libavutil or host has
/// none.
AVBufferRef* nvdec_device() {
  AVBufferRef* dev = nullptr;
  if (av_hwdevice_ctx_create(&dev, AV_HWDEVICE_TYPE_CUDA, nullptr, nullptr, 0) < 0) return nullptr;
  return dev;
}

// The hwaccel's frames, never a silent fall back to the software decoder.
AVPixelFormat take_cuda(AVCodecContext*, const AVPixelFormat* offered) {
  for (const AVPixelFormat* f = offered; *f != AV_PIX_FMT_NONE; ++f)
    if (*f == AV_PIX_FMT_CUDA) return *f;
  return AV_PIX_FMT_NONE;
}

// FFmpeg's HEVC decoder on all host threads, packets split once (untimed) by its demuxer; with
// `crccheck` it verifies every picture's MD5 SEI (what `-err_detect crccheck` sets); with
// `nvdec` (a device context) it decodes on NVDEC, its frames in device memory.
class Ffmpeg {
 public:
  Ffmpeg(const fs::path& path, int threads, bool crccheck, AVBufferRef* nvdec = nullptr) {
    AVFormatContext* fmt = nullptr;
    if (int e = avformat_open_input(&fmt, path.c_str(), av_find_input_format("hevc"), nullptr))
      fail("FFmpeg cannot open " + path.string() + ": " + av_error(e));
    if (int e = avformat_find_stream_info(fmt, nullptr); e < 0)
      fail("FFmpeg: " + path.string() + ": " + av_error(e));
    AVPacket* pkt = av_packet_alloc();
    while (av_read_frame(fmt, pkt) >= 0) {
      packets_.push_back(av_packet_clone(pkt));
      av_packet_unref(pkt);
    }
    av_packet_free(&pkt);
    const AVCodec* codec = avcodec_find_decoder(AV_CODEC_ID_HEVC);
    ctx_ = avcodec_alloc_context3(codec);
    avcodec_parameters_to_context(ctx_, fmt->streams[0]->codecpar);
    avformat_close_input(&fmt);
    ctx_->thread_count = threads;
    ctx_->thread_type = FF_THREAD_FRAME | FF_THREAD_SLICE;
    if (crccheck) ctx_->err_recognition |= AV_EF_CRCCHECK;
    if (nvdec) {
      ctx_->hw_device_ctx = av_buffer_ref(nvdec);
      ctx_->get_format = take_cuda;
    }
    if (int e = avcodec_open2(ctx_, codec, nullptr); e < 0)
      fail("FFmpeg: cannot open the HEVC decoder: " + av_error(e));
    frame_ = av_frame_alloc();
  }
  ~Ffmpeg() {
    for (AVPacket* p : packets_) av_packet_free(&p);
    av_frame_free(&frame_);
    avcodec_free_context(&ctx_);
  }
  Ffmpeg(const Ffmpeg&) = delete;
  Ffmpeg& operator=(const Ffmpeg&) = delete;

  /// Decodes every packet and drains; on_frame sees each frame in output order.
  void decode(const std::function<void(const AVFrame&)>& on_frame) {
    for (AVPacket* p : packets_) {
      if (int e = avcodec_send_packet(ctx_, p); e < 0) fail("FFmpeg send_packet: " + av_error(e));
      receive(on_frame);
    }
    avcodec_send_packet(ctx_, nullptr);
    receive(on_frame);
    avcodec_flush_buffers(ctx_);
  }

 private:
  void receive(const std::function<void(const AVFrame&)>& on_frame) {
    for (;;) {
      const int e = avcodec_receive_frame(ctx_, frame_);
      if (e == AVERROR(EAGAIN) || e == AVERROR_EOF) return;
      if (e < 0) fail("FFmpeg receive_frame: " + av_error(e));
      on_frame(*frame_);
      av_frame_unref(frame_);
    }
  }

  std::vector<AVPacket*> packets_;
  AVCodecContext* ctx_ = nullptr;
  AVFrame* frame_ = nullptr;
};

bool same_picture(const Picture& a, const Picture& b) {
  return std::equal(std::begin(a.planes), std::end(a.planes), std::begin(b.planes));
}

// NVDEC's frame copied to the host (NV12 or P010: chroma interleaved, P010's samples in the
// high bits) as planar samples.
Picture from_nvdec(const AVFrame& hw, AVFrame* sw) {
  if (int e = av_hwframe_transfer_data(sw, &hw, 0); e < 0)
    fail("NVDEC: cannot copy a frame to the host: " + av_error(e));
  const auto fmt = static_cast<AVPixelFormat>(sw->format);
  if (fmt != AV_PIX_FMT_NV12 && fmt != AV_PIX_FMT_P010LE)
    fail(std::string("NVDEC gave frames in ") + av_get_pix_fmt_name(fmt));
  const bool wide = fmt != AV_PIX_FMT_NV12;
  const auto sample = [&](int plane, int y, int i) -> std::uint16_t {
    const std::uint8_t* row =
        sw->data[plane] + static_cast<std::ptrdiff_t>(y) * sw->linesize[plane];
    return wide ? static_cast<std::uint16_t>((row[2 * i] | row[2 * i + 1] << 8) >> 6) : row[i];
  };
  Picture p;
  const int w = sw->width, h = sw->height, cw = (w + 1) / 2, ch = (h + 1) / 2;
  p.planes[0].resize(static_cast<std::size_t>(w) * h);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) p.planes[0][static_cast<std::size_t>(y) * w + x] = sample(0, y, x);
  for (int c = 1; c < 3; ++c) {
    p.planes[c].resize(static_cast<std::size_t>(cw) * ch);
    for (int y = 0; y < ch; ++y)
      for (int x = 0; x < cw; ++x)
        p.planes[c][static_cast<std::size_t>(y) * cw + x] = sample(1, y, 2 * x + c - 1);
  }
  av_frame_unref(sw);
  return p;
}

Picture to_picture(const AVFrame& f) {
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(f.format));
  const bool wide = d->comp[0].depth > 8;
  Picture p;
  for (int c = 0; c < 3; ++c) {
    const int w = c ? AV_CEIL_RSHIFT(f.width, d->log2_chroma_w) : f.width;
    const int h = c ? AV_CEIL_RSHIFT(f.height, d->log2_chroma_h) : f.height;
    p.planes[c].resize(static_cast<std::size_t>(w) * h);
    for (int y = 0; y < h; ++y) {
      const std::uint8_t* row = f.data[c] + static_cast<std::ptrdiff_t>(y) * f.linesize[c];
      for (int x = 0; x < w; ++x)
        p.planes[c][static_cast<std::size_t>(y) * w + x] =
            wide ? static_cast<std::uint16_t>(row[2 * x] | row[2 * x + 1] << 8) : row[x];
    }
  }
  return p;
}

// dec265 as a child process, stdout to /dev/null and stderr to `err_path` (or /dev/null).
int spawn(const std::vector<std::string>& args, const std::string& err_path = "/dev/null") {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int e = posix_spawnp(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (e) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// The dec265 program: upstream's name, or Debian's (libde265-examples); empty when neither.
std::string find_dec265() {
  for (const char* name : {"dec265", "libde265-dec265"})
    if (spawn({name, "-h"}) == 0) return name;
  return {};
}

fs::path input_dir(const Options& o) {
  return o.input.empty() ? hevc::testing::data_dir("hevc-bench") : fs::path(o.input);
}

// kbps 0: All-Intra; else random access at kbps.
Input load_input(const Options& o, const std::string& size, int depth, int kbps) {
  const bool uhd = size == "4k";
  if (!uhd && size != "1080p") fail("--sizes: unknown size '" + size + "' (1080p, 4k)");
  Input in;
  in.name = (kbps ? "ra_" : "ai_") + size + "_" + std::to_string(depth) + "bit_" +
            (kbps ? std::to_string(kbps) + "k_" : "") + std::to_string(o.frames) + "f";
  const fs::path dir = input_dir(o);
  in.path = dir / (in.name + ".hevc");
  if (!fs::exists(in.path)) {
    if (!o.input.empty()) fail(in.path.string() + " is missing (--input is only read)");
    if (!hevc::testing::have_tools())
      fail(in.path.string() + " is missing and x265/ffmpeg are not here to make it");
    std::printf("encoding %s with x265 ...\n", in.path.c_str());
    std::fflush(stdout);
    fs::create_directories(dir);
    const std::string source = std::string("testsrc2=size=") + (uhd ? "3840x2160" : "1920x1080") +
                               ":rate=25,noise=alls=6:allf=t";
    const std::string args =
        kbps ? "--preset medium --keyint 250 --frame-threads 0 --bitrate " + std::to_string(kbps)
             : "--preset fast --qp 30";
    if (!hevc::testing::encode(source, o.frames, depth, args, in.path))
      fail("x265 failed to make " + in.path.string());
  }
  const std::vector<std::uint8_t> once = hevc::testing::read_file(in.path);
  for (int r = 0; r < o.repeat; ++r) in.bytes.insert(in.bytes.end(), once.begin(), once.end());
  if (o.repeat > 1) {
    // FFmpeg's demuxer and dec265 read files: they get the repeated stream as one too.
    in.name += "_x" + std::to_string(o.repeat);
    in.path = fs::temp_directory_path() / ("hevc_bench_" + in.name + ".hevc");
    in.temporary = true;
    std::FILE* f = std::fopen(in.path.c_str(), "wb");
    const bool ok = f && std::fwrite(in.bytes.data(), 1, in.bytes.size(), f) == in.bytes.size();
    if (!f || std::fclose(f) != 0 || !ok) fail("cannot write " + in.path.string());
  }
  return in;
}

// FFmpeg's per-plane verdicts on the MD5 SEI (hevcdec.c's verify_md5 logs each), counted while
// count_md5_verdicts is the log callback; other messages go to FFmpeg's default callback.
std::atomic<int> md5_correct{0}, md5_wrong{0};

void count_md5_verdicts(void* avcl, int level, const char* fmt, std::va_list vl) {
  if (std::strcmp(fmt, "plane %d - correct ") == 0)
    ++md5_correct;
  else if (std::strcmp(fmt, "mismatching checksum of plane %d - ") == 0)
    ++md5_wrong;
  else
    av_log_default_callback(avcl, level, fmt, vl);
}

std::string fps_cell(std::optional<double> fps) {
  char buf[32];
  if (fps)
    std::snprintf(buf, sizeof buf, "%9.1f", *fps);
  else
    std::snprintf(buf, sizeof buf, "%9s", "-");
  return buf;
}

struct SigpuFps {
  double checked = 0;    ///< every picture's MD5 SEI checked (the default)
  double unchecked = 0;  ///< DecodeOptions::check_hash off
};

// Decodes once untimed and checks every frame (MD5 SEI and FFmpeg's samples); then the median
// with the hash check and, after an untimed warm-up decode, without.
SigpuFps bench_sigpu(const Input& in, sigpu::Backend backend, int reps, bool unchecked_too,
                     bool gpu_reconstruction = true) {
  hevc::Decoder dec({.backend = backend, .reconstruct_on_gpu = gpu_reconstruction});
  std::size_t n = 0, hashed = 0;
  std::string bad;
  dec.decode(in.bytes, [&](const hevc::Frame& f) {
    if (f.hash == hevc::HashStatus::matched) ++hashed;
    if (n < in.reference.size()) {
      for (int c = 0; c < 3; ++c)
        if (f.planes[c] != in.reference[n].planes[c] && bad.empty())
          bad = "frame " + std::to_string(n) + " plane " + "YUV"[c] + " differs from FFmpeg";
    }
    ++n;
  });
  const std::string where = in.name + " (" + std::string(sigpu::to_string(backend)) +
                            (gpu_reconstruction ? "" : ", CPU reconstruction") + "): ";
  if (!dec.problems().empty()) fail(where + dec.problems().front().message);
  if (n != in.reference.size())
    fail(where + std::to_string(n) + " frames, FFmpeg gave " + std::to_string(in.reference.size()));
  if (hashed != n) fail(where + std::to_string(n - hashed) + " frames without a matching MD5 SEI");
  if (!bad.empty()) fail(where + bad);
  SigpuFps fps;
  fps.checked = n / time_median(reps, [&] {
                  std::size_t got = 0;
                  dec.decode(in.bytes, [&](const hevc::Frame& f) {
                    got += f.hash == hevc::HashStatus::matched;
                  });
                  if (got != n) fail(where + "a timed decode lost frames or hashes");
                });
  if (!unchecked_too) return fps;
  hevc::Decoder fast(
      {.backend = backend, .reconstruct_on_gpu = gpu_reconstruction, .check_hash = false});
  const auto decode_unchecked = [&] {
    std::size_t got = 0;
    fast.decode(in.bytes,
                [&](const hevc::Frame& f) { got += f.hash == hevc::HashStatus::unchecked; });
    if (got != n || !fast.problems().empty())
      fail(where + "a decode without the hash check lost frames or reported a problem");
  };
  decode_unchecked();  // warm-up: threads, pinned planes, device buffers
  fps.unchecked = n / time_median(reps, decode_unchecked);
  return fps;
}

// Frames per second with the frames left in device memory (DecodeOptions::frames_on_device), no
// hash check: a first decode copies every frame down and checks it against FFmpeg's, then the
// median of reps in which the frames stay on the device.
double bench_sigpu_on_device(const Input& in, int reps) {
  hevc::Decoder dec(
      {.backend = sigpu::Backend::cuda, .frames_on_device = true, .check_hash = false});
  const std::string where = in.name + " (cuda, frames on the device): ";
  std::size_t n = 0;
  dec.decode(in.bytes, [&](hevc::Frame& f) {
    if (!f.device.planes[0] || !f.planes[0].empty()) fail(where + "a frame not on the device");
    hevc::copy_to_host(f);
    if (n < in.reference.size())
      for (int c = 0; c < 3; ++c)
        if (f.planes[c] != in.reference[n].planes[c])
          fail(where + "frame " + std::to_string(n) + " plane " + "YUV"[c] +
               " differs from FFmpeg");
    ++n;
  });
  if (n != in.reference.size() || !dec.problems().empty())
    fail(where + std::to_string(n) + " frames, FFmpeg gave " + std::to_string(in.reference.size()));
  return n / time_median(reps, [&] {
           std::size_t got = 0;
           dec.decode(in.bytes,
                      [&](const hevc::Frame& f) { got += f.device.planes[0] != nullptr; });
           if (got != n) fail(where + "a timed decode lost frames");
         });
}

/// Runs fn(k) for k in [0, n) on a thread each and waits for them all.
void on_threads(int n, const std::function<void(int)>& fn) {
  std::vector<std::thread> threads;
  for (int k = 0; k < n; ++k) threads.emplace_back(fn, k);
  for (auto& t : threads) t.join();
}

// Aggregate frames per second of `streams` decoders at once, each decoding the whole input on a
// thread of its own without the hash check: the median of reps after a warm-up in which every
// decoder's frames are checked against FFmpeg's.
double bench_sigpu_streams(const Input& in, sigpu::Backend backend, int streams, int reps) {
  std::vector<std::unique_ptr<hevc::Decoder>> decs;
  for (int k = 0; k < streams; ++k)
    decs.push_back(std::make_unique<hevc::Decoder>(
        hevc::DecodeOptions{.backend = backend, .check_hash = false}));
  const std::size_t n = in.reference.size();
  const std::string where = in.name + " (" + std::string(sigpu::to_string(backend)) + ", " +
                            std::to_string(streams) + " streams at once): ";
  std::atomic<bool> bad{false};
  const auto all = [&](bool check) {
    on_threads(streams, [&](int k) {
      std::size_t got = 0;
      decs[static_cast<std::size_t>(k)]->decode(in.bytes, [&](const hevc::Frame& f) {
        if (check && got < n)
          for (int c = 0; c < 3; ++c)
            if (f.planes[c] != in.reference[got].planes[c]) bad = true;
        ++got;
      });
      if (got != n || !decs[static_cast<std::size_t>(k)]->problems().empty()) bad = true;
    });
    if (bad) fail(where + "a decoder lost frames, reported a problem or differed from FFmpeg");
  };
  all(true);
  return double(streams) * double(n) / time_median(reps, [&] { all(false); });
}

// FFmpeg's frames as raw planar bytes: one byte per sample at 8 bits, two (little-endian) above.
std::vector<std::uint8_t> raw_bytes(const std::vector<Picture>& frames, int depth) {
  std::vector<std::uint8_t> out;
  for (const Picture& p : frames)
    for (const auto& plane : p.planes)
      for (std::uint16_t v : plane) {
        out.push_back(static_cast<std::uint8_t>(v & 0xff));
        if (depth > 8) out.push_back(static_cast<std::uint8_t>(v >> 8));
      }
  return out;
}

// Verified once untimed: its YUV output (-o) must equal FFmpeg's frames.
std::optional<double> bench_dec265(const std::string& dec265, const Input& in, int depth,
                                   int threads, int reps) {
  const std::string t = std::to_string(threads);
  const fs::path yuv = fs::temp_directory_path() / ("hevc_bench_dec265_" + in.name + ".yuv");
  const int rc = spawn({dec265, "-q", "-t", t, "-o", yuv.string(), in.path.string()});
  const bool same = rc == 0 && hevc::testing::read_file(yuv) == raw_bytes(in.reference, depth);
  fs::remove(yuv);
  if (!same)
    fail(in.name + ": " + dec265 + " (exit " + std::to_string(rc) +
         ") does not give FFmpeg's frames");
  const double sec = time_median(reps, [&] {
    if (spawn({dec265, "-q", "-t", t, in.path.string()}) != 0) fail(in.name + ": dec265 failed");
  });
  return in.reference.size() / sec;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  auto split = [](const std::string& s) {
    std::vector<std::string> out;
    std::stringstream ss(s);
    for (std::string item; std::getline(ss, item, ',');) out.push_back(item);
    return out;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool more = i + 1 < argc;
    if (a == "--input" && more) {
      o.input = argv[++i];
    } else if (a == "--frames" && more) {
      o.frames = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--repeat" && more) {
      o.repeat = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--reps" && more) {
      o.reps = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--sizes" && more) {
      o.sizes = split(argv[++i]);
    } else if (a == "--bit-depths" && more) {
      o.depths.clear();
      for (const auto& d : split(argv[++i])) o.depths.push_back(std::atoi(d.c_str()));
    } else if (a == "--random-access" && more) {
      for (const auto& k : split(argv[++i])) o.ra_kbps.push_back(std::max(1, std::atoi(k.c_str())));
    } else if (a == "--skip-missing-peers") {
      o.skip_missing_peers = true;
    } else if (a == "--no-serial") {
      o.serial = false;
    } else if (a == "--no-cpu-parallel") {
      o.cpu_parallel = false;
    } else if (a == "--no-cuda-f") {
      o.cpu_reconstruction = false;
    } else if (a == "--streams" && more) {
      o.streams = std::max(1, std::atoi(argv[++i]));
    } else {
      std::fprintf(stderr,
                   "usage: hevc_bench [--input DIR] [--frames N] [--repeat N] [--reps N] "
                   "[--sizes 1080p,4k] [--bit-depths 8,10] [--random-access KBPS,...] "
                   "[--skip-missing-peers] [--no-serial] [--no-cpu-parallel] [--no-cuda-f] "
                   "[--streams N]\n");
      return 2;
    }
  }
  for (int d : o.depths)
    if (d != 8 && d != 10) fail("--bit-depths: " + std::to_string(d) + " (8 or 10)");
  if (!hevc::Decoder::filters_available()) fail("this build has no hevc_filter module");

  const int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const auto devices = sigpu::cuda_devices();
  const std::string dec265 = find_dec265();
  if (dec265.empty() && !o.skip_missing_peers)
    fail("dec265 (libde265-examples) is not installed; --skip-missing-peers runs without it");
  std::printf("HEVC %s whole-stream decoding, %d frames per stream",
              o.ra_kbps.empty() ? "All-Intra" : "random-access", o.frames);
  if (o.repeat > 1) std::printf(" decoded %d times back to back", o.repeat);
  std::printf(", median of %d\n", o.reps);
  std::printf("host: %d hardware threads; FFmpeg %s (libavcodec, %d frame+slice threads)\n",
              threads, av_version_info(), threads);
  std::printf("cuda: %s\n",
              devices.empty() ? "no device: the cuda column is skipped" : devices[0].name.c_str());
  AVBufferRef* nvdec = nvdec_device();
  std::printf("nvdec: %s\n", nvdec ? "FFmpeg's HEVC decoder with the nvdec hwaccel, as many threads"
                                   : "this FFmpeg or host has none: the nvdec columns are skipped");
  if (dec265.empty())
    std::printf("dec265: not installed: skipped (--skip-missing-peers)\n");
  else
    std::printf("dec265: %s -t %d -q, timed as a process (includes start-up and file read)\n",
                dec265.c_str(), threads);

  struct Row {
    std::string name;
    std::optional<double> cpu, par, cuda, cuda_f, ff_crc;            // every MD5 SEI checked
    std::optional<double> par_fast, cuda_fast, cuda_f_fast, ff, de;  // no hash check
    std::optional<double> cuda_dev;     // no hash check, frames left on the device
    std::optional<double> nv, nv_host;  // NVDEC: frames on the device, copied to the host
    std::optional<double> par_many, cuda_many, ff_many, nv_many;  // --streams at once
  };
  std::vector<Row> rows;
  std::printf("\n%-26s %9s %9s %9s %9s %9s | %9s %9s %9s %9s %9s %9s %9s %9s\n", "", "cpu",
              "cpu-par", "cuda", "cuda-f", "ffmpeg", "cpu-par", "cuda", "cuda-dev", "cuda-f",
              "ffmpeg", "dec265", "nvdec", "nvdec-h");
  std::printf("%-26s %49s | %79s\n", "stream  (fps)", "MD5 SEI checked (ffmpeg: crccheck)",
              "no hash check (ffmpeg: default; -dev and nvdec: frames left on the device)");
  const std::vector<int> kinds = o.ra_kbps.empty() ? std::vector<int>{0} : o.ra_kbps;
  for (const auto& size : o.sizes) {
    for (int depth : o.depths)
      for (int kbps : kinds) {
        Input in = load_input(o, size, depth, kbps);
        Row r;
        r.name = in.name;
        const auto time_ffmpeg = [&](Ffmpeg& ff) {
          return in.reference.size() / time_median(o.reps, [&] {
                   std::size_t n = 0;
                   ff.decode([&](const AVFrame&) { ++n; });
                   if (n != in.reference.size()) fail(in.name + ": FFmpeg lost frames");
                 });
        };
        {
          Ffmpeg ff(in.path, threads, false);
          ff.decode([&](const AVFrame& f) { in.reference.push_back(to_picture(f)); });
          if (in.reference.empty()) fail(in.name + ": FFmpeg decoded no frame");
          r.ff = time_ffmpeg(ff);
        }
        {
          Ffmpeg ff(in.path, threads, true);
          md5_correct = md5_wrong = 0;
          av_log_set_callback(count_md5_verdicts);
          std::size_t n = 0;
          ff.decode([&](const AVFrame&) { ++n; });
          av_log_set_callback(av_log_default_callback);
          // Proof that crccheck hashes what the table says: a verdict per plane of every picture.
          if (n != in.reference.size() || md5_wrong != 0 ||
              md5_correct != static_cast<int>(3 * in.reference.size()))
            fail(in.name + ": FFmpeg with crccheck gave " + std::to_string(md5_correct.load()) +
                 " matching and " + std::to_string(md5_wrong.load()) +
                 " mismatching MD5 planes for " + std::to_string(n) + " frames");
          r.ff_crc = time_ffmpeg(ff);
        }
        if (o.serial) r.cpu = bench_sigpu(in, sigpu::Backend::cpu, o.reps, false).checked;
        if (o.cpu_parallel) {
          const SigpuFps par = bench_sigpu(in, sigpu::Backend::cpu_parallel, o.reps, true);
          r.par = par.checked;
          r.par_fast = par.unchecked;
        }
        if (!devices.empty()) {
          const SigpuFps gpu = bench_sigpu(in, sigpu::Backend::cuda, o.reps, true);
          r.cuda = gpu.checked;
          r.cuda_fast = gpu.unchecked;
          r.cuda_dev = bench_sigpu_on_device(in, o.reps);
          if (o.cpu_reconstruction) {
            const SigpuFps f = bench_sigpu(in, sigpu::Backend::cuda, o.reps, true, false);
            r.cuda_f = f.checked;
            r.cuda_f_fast = f.unchecked;
          }
        }
        if (!dec265.empty()) r.de = bench_dec265(dec265, in, depth, threads, o.reps);
        if (nvdec) {
          Ffmpeg nv(in.path, threads, false, nvdec);
          AVFrame* host = av_frame_alloc();
          std::size_t n = 0, same = 0;
          nv.decode([&](const AVFrame& f) {
            if (n < in.reference.size())
              same += same_picture(from_nvdec(f, host), in.reference[n]) ? 1 : 0;
            ++n;
          });
          if (n != in.reference.size() || same != n)
            fail(in.name + ": NVDEC gave " + std::to_string(n) + " frames, " +
                 std::to_string(same) + " of them FFmpeg's (of " +
                 std::to_string(in.reference.size()) + ")");
          r.nv = time_ffmpeg(nv);
          r.nv_host = in.reference.size() / time_median(o.reps, [&] {
                        nv.decode([&](const AVFrame& f) {
                          if (av_hwframe_transfer_data(host, &f, 0) < 0)
                            fail(in.name + ": NVDEC: a frame not copied to the host");
                          av_frame_unref(host);
                        });
                      });
          av_frame_free(&host);
        }
        if (o.streams > 1) {
          if (o.cpu_parallel)
            r.par_many = bench_sigpu_streams(in, sigpu::Backend::cpu_parallel, o.streams, o.reps);
          if (!devices.empty())
            r.cuda_many = bench_sigpu_streams(in, sigpu::Backend::cuda, o.streams, o.reps);
          std::vector<std::unique_ptr<Ffmpeg>> ffs;
          for (int k = 0; k < o.streams; ++k)
            ffs.push_back(std::make_unique<Ffmpeg>(in.path, threads, false));
          const auto all = [&] {
            std::atomic<bool> lost{false};
            on_threads(o.streams, [&](int k) {
              std::size_t n = 0;
              ffs[static_cast<std::size_t>(k)]->decode([&](const AVFrame&) { ++n; });
              if (n != in.reference.size()) lost = true;
            });
            if (lost) fail(in.name + ": FFmpeg lost frames with several streams at once");
          };
          all();  // warm-up
          r.ff_many = double(o.streams) * double(in.reference.size()) / time_median(o.reps, all);
          if (nvdec) {
            for (auto& f : ffs) f = std::make_unique<Ffmpeg>(in.path, threads, false, nvdec);
            all();
            r.nv_many = double(o.streams) * double(in.reference.size()) / time_median(o.reps, all);
          }
        }
        if (in.temporary) fs::remove(in.path);
        std::printf("%-26s %s %s %s %s %s | %s %s %s %s %s %s %s %s\n", r.name.c_str(),
                    fps_cell(r.cpu).c_str(), fps_cell(r.par).c_str(), fps_cell(r.cuda).c_str(),
                    fps_cell(r.cuda_f).c_str(), fps_cell(r.ff_crc).c_str(),
                    fps_cell(r.par_fast).c_str(), fps_cell(r.cuda_fast).c_str(),
                    fps_cell(r.cuda_dev).c_str(), fps_cell(r.cuda_f_fast).c_str(),
                    fps_cell(r.ff).c_str(), fps_cell(r.de).c_str(), fps_cell(r.nv).c_str(),
                    fps_cell(r.nv_host).c_str());
        std::fflush(stdout);
        rows.push_back(std::move(r));
      }
  }
  std::printf(
      "\nverified: sigpu's frames match every MD5 SEI and equal FFmpeg's (and dec265's and "
      "NVDEC's); FFmpeg with crccheck matched every plane's MD5\n");
  std::printf("\n%-26s %19s | %49s   ratios (> 1: sigpu faster)\n", "", "MD5 SEI checked",
              "no hash check");
  std::printf("%-26s %9s %9s | %9s %9s %9s %9s %9s %9s %9s\n", "stream", "par/ff", "cuda/ff",
              "par/ff", "cuda/ff", "cuda-f/ff", "cuda/de265", "cuda/nv", "cuda/nv-h", "dev/nv");
  auto ratio = [](std::optional<double> a, std::optional<double> b) {
    char buf[32];
    if (a && b)
      std::snprintf(buf, sizeof buf, "%9.2f", *a / *b);
    else
      std::snprintf(buf, sizeof buf, "%9s", "-");
    return std::string(buf);
  };
  for (const Row& r : rows)
    std::printf("%-26s %s %s | %s %s %s %s %s %s %s\n", r.name.c_str(),
                ratio(r.par, r.ff_crc).c_str(), ratio(r.cuda, r.ff_crc).c_str(),
                ratio(r.par_fast, r.ff).c_str(), ratio(r.cuda_fast, r.ff).c_str(),
                ratio(r.cuda_f_fast, r.ff).c_str(), ratio(r.cuda_fast, r.de).c_str(),
                ratio(r.cuda_fast, r.nv).c_str(), ratio(r.cuda_fast, r.nv_host).c_str(),
                ratio(r.cuda_dev, r.nv).c_str());
  if (o.streams > 1) {
    std::printf("\n%d streams at once, no hash check: frames per second of all together\n",
                o.streams);
    std::printf("%-26s %9s %9s %9s %9s %9s %9s\n", "stream", "cpu-par", "cuda", "ffmpeg", "nvdec",
                "cuda/ff", "cuda/nv");
    for (const Row& r : rows)
      std::printf("%-26s %s %s %s %s %s %s\n", r.name.c_str(), fps_cell(r.par_many).c_str(),
                  fps_cell(r.cuda_many).c_str(), fps_cell(r.ff_many).c_str(),
                  fps_cell(r.nv_many).c_str(), ratio(r.cuda_many, r.ff_many).c_str(),
                  ratio(r.cuda_many, r.nv_many).c_str());
  }
  av_buffer_unref(&nvdec);
  return 0;
}
