// prores_bench: sigpu's ProRes decoders against FFmpeg's (libavcodec, every host core, frame
// threading), side by side in one process run: 1080p 422 HQ, 4K 422 HQ, 4K 4444 XQ with alpha.
//
//   prores_bench [--frames N] [--batch B] [--reps R] [--no-ffmpeg] [FILE.mov ...]
//
// Default inputs: prores-bench/{hq_1080p,hq_4k,xq_alpha_4k}.mov under SIGPU_DATA_DIR (the GPU
// machine's bundle) or ${SIGPU_CACHE:-~/.cache/sigpu}, made there by ffmpeg when missing. Each
// clip holds a few frames; N frames are decoded by cycling through them.
//
// Columns: FFmpeg fps (all cores), sigpu cpu-parallel fps, sigpu cuda end-to-end fps (coded
// bytes in host memory to frames in pinned host memory, transfers overlapped), the ratio to
// FFmpeg, cuda device-resident fps (coded bytes on the device to frames in device memory,
// kernels alone, with the time per frame of each stage: clearing buffers, VLD, IDCT) and the
// PCIe bound on end-to-end (output bytes / measured pinned D2H).
// Every sigpu backend's frame 0 is checked against FFmpeg's, sample for sample.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <sigpu/prores.hpp>

#include "pcie_probe.hpp"

#ifdef SIGPU_HAVE_LIBAVCODEC
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/pixdesc.h>
}
#endif

namespace {

namespace fs = std::filesystem;
using namespace sigpu;
using Clock = std::chrono::steady_clock;

struct Options {
  int frames = 240, batch = 64, reps = 5;
  bool ffmpeg = true;
  std::vector<std::string> files;
};

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// The three standard clips: made by ffmpeg when a cache folder is writable and ffmpeg exists.
std::vector<std::string> default_files() {
  struct Made {
    const char* name;
    const char* args;
  };
  const Made made[] = {
      {"hq_1080p",
       "-f lavfi -i testsrc2=size=1920x1080:rate=25 -frames:v 4 -vf noise=alls=12:allf=t "
       "-c:v prores_ks -profile:v 3"},
      {"hq_4k",
       "-f lavfi -i testsrc2=size=3840x2160:rate=25 -frames:v 2 -vf noise=alls=12:allf=t "
       "-c:v prores_ks -profile:v 3"},
      {"xq_alpha_4k",
       "-f lavfi -i testsrc2=size=3840x2160:rate=25 -frames:v 1 -vf "
       "\"noise=alls=3:allf=t,format=yuva444p10le,geq=lum='lum(X,Y)':cb='cb(X,Y)':cr='cr(X,Y)':"
       "a='(X+Y)/8'\" -c:v prores_ks -profile:v 5 -pix_fmt yuva444p10le -alpha_bits 16"}};
  std::vector<fs::path> dirs;
  if (const char* d = std::getenv("SIGPU_DATA_DIR"); d && *d)
    dirs.push_back(fs::path(d) / "prores-bench");
  fs::path cache;
  if (const char* c = std::getenv("SIGPU_CACHE"); c && *c)
    cache = fs::path(c) / "prores-bench";
  else if (const char* h = std::getenv("HOME"); h && *h)
    cache = fs::path(h) / ".cache/sigpu/prores-bench";
  if (!cache.empty()) dirs.push_back(cache);
  std::vector<std::string> files;
  for (const Made& m : made) {
    std::string found;
    for (const auto& d : dirs)
      if (fs::exists(d / (std::string(m.name) + ".mov")))
        found = (d / (std::string(m.name) + ".mov")).string();
    if (found.empty() && !cache.empty()) {
      fs::create_directories(cache);
      const fs::path out = cache / (std::string(m.name) + ".mov");
      std::printf("making %s with ffmpeg...\n", out.c_str());
      const std::string cmd =
          "ffmpeg -v error -nostdin -y " + std::string(m.args) + " \"" + out.string() + "\"";
      if (std::system(cmd.c_str()) == 0) found = out.string();
    }
    if (found.empty())
      std::printf("%s: not found and ffmpeg could not make it; skipped\n", m.name);
    else
      files.push_back(found);
  }
  return files;
}

#ifdef SIGPU_HAVE_LIBAVCODEC
// FFmpeg's decoder on every core with frame threading; returns fps and frame 0 in sigpu's
// layout for the exactness check.
double ffmpeg_fps(const prores::Clip& clip, int frames, std::vector<std::uint16_t>& first) {
  const AVCodec* codec = avcodec_find_decoder(AV_CODEC_ID_PRORES);
  if (!codec) throw Error("libavcodec has no ProRes decoder");
  AVCodecContext* ctx = avcodec_alloc_context3(codec);
  ctx->width = clip.width;
  ctx->height = clip.height;
  const std::uint32_t f = clip.fourcc;  // the FourCC sets the output precision
  ctx->codec_tag = (f >> 24) | ((f >> 8) & 0xFF00) | ((f << 8) & 0xFF0000) | (f << 24);
  ctx->thread_count = static_cast<int>(std::thread::hardware_concurrency());
  ctx->thread_type = FF_THREAD_FRAME;
  if (avcodec_open2(ctx, codec, nullptr) < 0) throw Error("avcodec_open2 failed");
  std::vector<AVPacket*> packets;
  for (std::size_t i = 0; i < clip.frames.size(); ++i) {
    AVPacket* p = av_packet_alloc();
    av_new_packet(p, static_cast<int>(clip.frames[i].size));
    std::memcpy(p->data, clip.frame(i).data(), clip.frames[i].size);
    packets.push_back(p);
  }
  AVFrame* frame = av_frame_alloc();
  int got = 0;
  auto drain = [&] {
    while (avcodec_receive_frame(ctx, frame) == 0) {
      if (got++ == 0) {
        first.clear();
        const AVPixFmtDescriptor* d =
            av_pix_fmt_desc_get(static_cast<AVPixelFormat>(frame->format));
        for (int p = 0; p < d->nb_components; ++p) {
          const int w =
              p == 1 || p == 2 ? AV_CEIL_RSHIFT(frame->width, d->log2_chroma_w) : frame->width;
          for (int y = 0; y < frame->height; ++y) {
            const auto* row =
                reinterpret_cast<const std::uint16_t*>(frame->data[p] + y * frame->linesize[p]);
            first.insert(first.end(), row, row + w);
          }
        }
      }
      av_frame_unref(frame);
    }
  };
  const int warm = std::min(frames, 32);
  Clock::time_point start;
  for (int i = 0; i < warm + frames; ++i) {
    if (i == warm) start = Clock::now();
    AVPacket* p = av_packet_clone(packets[i % packets.size()]);
    while (avcodec_send_packet(ctx, p) == AVERROR(EAGAIN)) drain();
    av_packet_free(&p);
    drain();
  }
  avcodec_send_packet(ctx, nullptr);
  drain();
  const double s = seconds_since(start);
  av_frame_free(&frame);
  for (auto* p : packets) av_packet_free(&p);
  avcodec_free_context(&ctx);
  return frames / s;
}
#endif

int g_compared = 0;  // frame-0 comparisons made

void check_equal(const char* what, const std::vector<std::uint16_t>& a, const std::uint16_t* b,
                 std::size_t n, bool& ok) {
  if (a.empty()) return;
  ++g_compared;
  const bool same = a.size() == n && std::equal(a.begin(), a.end(), b);
  if (!same) {
    std::printf("  MISMATCH: %s frame 0 differs from FFmpeg's\n", what);
    ok = false;
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
    if (a == "--frames")
      o.frames = std::max(1, next());
    else if (a == "--batch")
      o.batch = std::max(1, next());
    else if (a == "--reps")
      o.reps = std::max(1, next());
    else if (a == "--no-ffmpeg")
      o.ffmpeg = false;
    else
      o.files.push_back(a);
  }
  if (o.files.empty()) o.files = default_files();
  const bool gpu = cuda_compiled() && !cuda_devices().empty();
  const unsigned cores = std::thread::hardware_concurrency();
  std::printf("prores_bench: %d frames per run, batch %d, %d reps (median), %u host threads%s\n",
              o.frames, o.batch, o.reps, cores, gpu ? "" : ", no GPU");
  double d2h = 0;
  if (gpu) {
    const auto bw = bench::probe_bandwidth(0);
    if (bw) {
      std::printf("%s\n", bw->summary().c_str());
      d2h = bw->d2h_pinned;
    }
    std::printf("device: %s\n", cuda_devices()[0].name.c_str());
  }
  struct Row {
    std::string name;
    double ffmpeg = 0, cpu = 0, e2e = 0, resident = 0, pcie = 0;
  };
  std::vector<Row> rows;
  bool ok = true;
  for (const auto& path : o.files) {
    const prores::Clip clip = prores::open_file(path);
    if (clip.frames.empty()) continue;
    const auto header = prores::parse_frame_header(clip.frame(0));
    const int depth = clip.bit_depth(header);
    Row row;
    row.name = fs::path(path).stem().string() + " " + std::to_string(header.width) + "x" +
               std::to_string(header.height) + " " + clip.fourcc_string();
    std::printf("\n%s: %zu coded frames, %.2f MB/frame\n", row.name.c_str(), clip.frames.size(),
                double(clip.bytes.size()) / clip.frames.size() / 1e6);
    std::vector<std::uint16_t> reference;
#ifdef SIGPU_HAVE_LIBAVCODEC
    if (o.ffmpeg) {
      row.ffmpeg = ffmpeg_fps(clip, o.frames, reference);
      std::printf("  ffmpeg (libavcodec, %u threads): %.1f fps\n", cores, row.ffmpeg);
    }
#endif
    {
      const auto t = Clock::now();
      const auto d = prores::decode(clip, {.backend = Backend::cpu_parallel}, 0, 0);
      const double s = seconds_since(t);
      row.cpu = double(d.frames.size()) / s;
      check_equal("cpu-parallel", reference, d.frames[0].samples.data(), d.frames[0].samples.size(),
                  ok);
      std::printf("  sigpu cpu-parallel: %.1f fps\n", row.cpu);
    }
    if (gpu) {
      std::vector<std::span<const std::uint8_t>> spans;
      for (int i = 0; i < o.frames; ++i) spans.push_back(clip.frame(i % clip.frames.size()));
      prores::CudaDecoder dec;
      prores::DecodeReport report;
      const std::size_t b = static_cast<std::size_t>(std::min(o.batch, o.frames));
      const std::span<const std::span<const std::uint8_t>> all(spans);
      dec.decode_host(all.first(b), depth, report);  // warm-up: allocations
      std::vector<double> e2e, resident, clear, vld, idct;
      for (int r = 0; r < o.reps; ++r) {
        const auto t = Clock::now();
        for (std::size_t i = 0; i < spans.size(); i += b) {
          const auto out =
              dec.decode_host(all.subspan(i, std::min(b, spans.size() - i)), depth, report, i);
          if (r == 0 && i == 0) check_equal("cuda", reference, out.samples, out.frame_samples, ok);
        }
        e2e.push_back(double(spans.size()) / seconds_since(t));
        dec.decode_device(all.first(b), depth, report);
        const auto st = dec.last_kernel_seconds();
        resident.push_back(double(b) / st.total());
        clear.push_back(st.clear / double(b));
        vld.push_back(st.vld / double(b));
        idct.push_back(st.idct / double(b));
      }
      if (!report.ok()) {
        std::printf("  DAMAGE: %s\n", report.damage[0].message().c_str());
        ok = false;
      }
      row.e2e = median(e2e);
      row.resident = median(resident);
      const double w = header.width, h = header.height;
      const double cw = header.chroma == prores::Chroma::c444 ? w : std::ceil(w / 2);
      const double fs_bytes = 2.0 * h * (w + 2 * cw + (header.alpha_info ? w : 0));
      if (d2h > 0) row.pcie = d2h * 1e9 / fs_bytes;
      std::printf(
          "  sigpu cuda end-to-end: %.1f fps (min %.1f, max %.1f); device-resident %.1f fps "
          "(min %.1f, max %.1f)\n",
          row.e2e, *std::min_element(e2e.begin(), e2e.end()),
          *std::max_element(e2e.begin(), e2e.end()), row.resident,
          *std::min_element(resident.begin(), resident.end()),
          *std::max_element(resident.begin(), resident.end()));
      std::printf(
          "  device stages per frame (medians, batch %zu): clear %.1f us, vld %.1f us, "
          "idct %.1f us\n",
          b, median(clear) * 1e6, median(vld) * 1e6, median(idct) * 1e6);
    }
    rows.push_back(row);
  }
  std::printf("\n%-34s %10s %10s %10s %8s %12s %10s\n", "clip", "ffmpeg", "sigpu cpu", "cuda e2e",
              "e2e/ff", "cuda device", "PCIe bound");
  // Columns that were not measured (no GPU, --no-ffmpeg) print "-".
  auto cell = [](double v, int width) {
    char buf[32];
    if (v > 0)
      std::snprintf(buf, sizeof buf, "%*.1f", width, v);
    else
      std::snprintf(buf, sizeof buf, "%*s", width, "-");
    return std::string(buf);
  };
  for (const Row& r : rows) {
    const std::string ratio =
        r.ffmpeg > 0 && r.e2e > 0 ? cell(r.e2e / r.ffmpeg, 7) + "x" : cell(0, 8);
    std::printf("%-34s %s %s %s %s %s %s\n", r.name.c_str(), cell(r.ffmpeg, 10).c_str(),
                cell(r.cpu, 10).c_str(), cell(r.e2e, 10).c_str(), ratio.c_str(),
                cell(r.resident, 12).c_str(), cell(r.pcie, 10).c_str());
  }
  std::printf(
      "(fps; ffmpeg = libavcodec on %u threads with frame threading; cuda e2e = coded "
      "bytes in host memory to frames in pinned host memory; cuda device = kernels "
      "only; PCIe bound = output bytes / pinned D2H bandwidth)\n",
      cores);
  std::printf("exactness vs FFmpeg: %s\n", !ok               ? "FAILED"
                                           : g_compared == 0 ? "not checked (no FFmpeg run)"
                                                             : "all frame-0 outputs identical");
  return ok ? 0 : 1;
}
