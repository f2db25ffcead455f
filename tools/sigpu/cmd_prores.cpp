// `sigpu prores info|decode`: what a ProRes file holds, and its frames as raw planar YUV(A) in
// FFmpeg's pixel formats, Y4M, NumPy, or one frame as a 16-bit PNG for a look.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <sigpu/io.hpp>
#include <sigpu/prores.hpp>

#include "commands.hpp"
#include "progress.hpp"
#include "writer_thread.hpp"

namespace sigpu::cli {
namespace {

namespace fs = std::filesystem;
using namespace sigpu::prores;

struct InfoArgs {
  std::vector<std::string> inputs;
};

struct DecodeArgs {
  std::string input;
  OutputArgs out;
  std::string backend = "auto";
  long frame = -1;  ///< one frame only (PNG needs it; 0 when not given)
  int bit_depth = 0, device = 0, batch = 16;
  bool stop_on_damage = false, quiet = false;
};

const char* scan_name(Scan s) {
  return s == Scan::progressive       ? "progressive"
         : s == Scan::top_field_first ? "interlaced, top field first"
                                      : "interlaced, bottom field first";
}

const char* profile_name(const std::string& fourcc) {
  if (fourcc == "apco") return "Proxy";
  if (fourcc == "apcs") return "LT";
  if (fourcc == "apcn") return "422";
  if (fourcc == "apch") return "422 HQ";
  if (fourcc == "ap4h") return "4444";
  if (fourcc == "ap4x") return "4444 XQ";
  return "unknown";
}

int run_info(const InfoArgs& a) {
  int rc = kExitOk;
  for (const auto& path : a.inputs) {
    try {
      const Clip clip = open_file(path);
      std::printf("%s\n  container   %s, %zu frames, %llu bytes of frames\n", path.c_str(),
                  clip.container.c_str(), clip.frames.size(),
                  static_cast<unsigned long long>(clip.coded_bytes()));
      if (clip.fourcc)
        std::printf("  fourcc      %s (ProRes %s)\n", clip.fourcc_string().c_str(),
                    profile_name(clip.fourcc_string()));
      if (clip.fps_num)
        std::printf("  frame rate  %d/%d (%.3f fps)\n", clip.fps_num, clip.fps_den,
                    double(clip.fps_num) / clip.fps_den);
      if (clip.frames.empty()) continue;
      const FrameHeader h = parse_frame_header(clip.frame(0));
      const PixelFormat f{clip.bit_depth(h), h.chroma, h.alpha_info != 0};
      std::printf("  size        %dx%d, %s, %s\n", h.width, h.height,
                  h.chroma == Chroma::c444 ? "4:4:4" : "4:2:2", scan_name(h.scan));
      std::printf("  alpha       %s\n", h.alpha_info == 0   ? "none"
                                        : h.alpha_info == 1 ? "8-bit"
                                                            : "16-bit");
      std::printf("  vendor      %s, header version %d\n", h.vendor.c_str(), h.version);
      std::printf("  colour      primaries %d, transfer %d, matrix %d\n", h.color_primaries,
                  h.transfer, h.matrix);
      std::printf("  matrices    luma %s, chroma %s\n", h.custom_luma_matrix ? "custom" : "flat",
                  h.custom_chroma_matrix ? "custom" : "as luma");
      std::printf("  output      %s\n", f.name().c_str());
    } catch (const std::exception& e) {
      rc = std::max(rc, report_error(e, path));
    }
  }
  return rc;
}

io::PictureView view_of(const Frame& f) {
  io::PictureView v;
  v.width = f.width;
  v.height = f.height;
  v.bit_depth = f.format.bit_depth;
  v.chroma = f.format.chroma == Chroma::c444 ? io::Chroma::c444 : io::Chroma::c422;
  v.alpha = f.format.alpha;
  v.scan = f.scan == Scan::progressive       ? io::Scan::progressive
           : f.scan == Scan::top_field_first ? io::Scan::top_field_first
                                             : io::Scan::bottom_field_first;
  for (int c = 0; c < f.format.planes(); ++c) {
    v.planes[c] = f.plane(c).data();
    v.plane_width[c] = v.stride[c] = f.plane_width(c);
    v.plane_height[c] = f.height;
  }
  return v;
}

io::VideoInfo video_info(const Clip& clip, std::size_t frame, std::uint64_t count) {
  io::VideoInfo info;
  if (clip.fps_num) info.fps_num = clip.fps_num, info.fps_den = clip.fps_den;
  if (clip.sar_num) info.sar_num = clip.sar_num, info.sar_den = clip.sar_den;
  std::vector<std::uint8_t> buf;
  info.matrix = parse_frame_header(clip.frame(frame, buf)).matrix;
  info.range = io::Range::limited;
  info.expected_pictures = count;
  return info;
}

/// Decodes frames [first, first + count) of a clip in batches, writing each frame as it comes.
/// The writer is made at the first frame (the header needs the clip's rate and matrix).
void decode_frames(const Clip& clip, std::size_t first, std::size_t count, const DecodeOptions& o,
                   CudaDecoder* gpu, std::size_t batch, const std::function<void(Decoded&)>& take,
                   Progress& progress) {
  for (std::size_t i = first; i < first + count; i += batch) {
    Decoded d = decode(clip, o, i, std::min(batch, first + count - i), gpu);
    take(d);
    for (std::size_t j = i; j < std::min(first + count, i + batch); ++j)
      progress.add_bytes(clip.frames[j].size);
  }
}

int run_decode(const DecodeArgs& a) {
  const std::string path =
      output_path(a.input, a.out, io::extension(io::picture_format(a.out.format, "-")));
  const io::PictureFormat format = io::picture_format(a.out.format, path);
  const bool one_frame = a.frame >= 0 || format == io::PictureFormat::png;
  io::Input in(a.input);
  if (!in.seekable() && one_frame)
    throw UsageError("--frame and PNG output need a file, not " + in.name());
  io::Output out(path, {.force = a.out.force, .inputs = {&in}});
  DecodeOptions o{.backend = parse_backend(a.backend),
                  .bit_depth = a.bit_depth,
                  .stop_on_damage = a.stop_on_damage,
                  .device = a.device,
                  .batch = a.batch};
  // One GPU decoder for the whole input, made before decoding starts (it may refuse): its
  // streams and buffers are made once.
  std::unique_ptr<CudaDecoder> gpu;
  if (resolve(o.backend) == Backend::cuda) gpu = std::make_unique<CudaDecoder>(a.device);
  const std::size_t batch = static_cast<std::size_t>(std::max(1, a.batch));

  std::optional<io::PictureWriter> writer;
  // Frames are written on a thread of their own while the decoder goes on; a few in flight, as
  // a 4K 4:4:4:4 frame holds 66 MB (the writer is made before the first frame is handed over).
  WriterThread<Frame> frames(3, [&](const Frame& f) { writer->write(view_of(f)); });
  DecodeReport report;
  report.backend = resolve(o.backend);
  auto take = [&](Decoded& d) {
    report.frames += d.report.frames;
    for (auto& dmg : d.report.damage) {
      print_error(in.name() + ": " + dmg.message());
      report.damage.push_back(std::move(dmg));
    }
    for (const Frame& f : d.frames) frames.push(f);
  };
  const auto start = std::chrono::steady_clock::now();
  if (in.seekable()) {
    const Clip clip = open_file(a.input);
    std::size_t first = 0, count = clip.frames.size();
    if (one_frame) {
      first = static_cast<std::size_t>(std::max(0L, a.frame));
      if (first >= clip.frames.size())
        throw UsageError("--frame " + std::to_string(first) + " but the file has " +
                         std::to_string(clip.frames.size()) + " frames");
      count = 1;
    }
    writer.emplace(out, format, video_info(clip, first, count));
    Progress progress(clip.coded_bytes(), 1);
    progress.set_current(fs::path(a.input).filename().string());
    decode_frames(clip, first, count, o, gpu.get(), batch, take, progress);
  } else {
    // Raw frames from a pipe, a batch at a time.
    RawStream stream(0, in.name());
    Progress progress(0, 1);
    for (Clip clip = stream.next(batch); !clip.frames.empty(); clip = stream.next(batch)) {
      if (!writer) writer.emplace(out, format, video_info(clip, 0, 0));
      decode_frames(clip, 0, clip.frames.size(), o, gpu.get(), batch, take, progress);
    }
  }
  frames.finish();
  if (!writer) throw InputError(in.name() + ": no ProRes frame found");
  writer->finish();
  if (!a.quiet) {
    const double s = seconds_since(start);
    std::fprintf(stderr, "%s -> %s: %llu frames decoded (%s) in %.3f s, %.1f fps, %zu damaged\n",
                 in.name().c_str(), out.name().c_str(),
                 static_cast<unsigned long long>(report.frames),
                 std::string(to_string(report.backend)).c_str(), s,
                 s > 0 ? double(report.frames) / s : 0.0, report.damage.size());
  }
  return report.ok() ? kExitOk : kExitDamaged;
}

void add_prores_commands(CLI::App& app, Action& action) {
  auto* pr = app.add_subcommand("prores", "Apple ProRes decoding");
  pr->require_subcommand(1);

  auto info = std::make_shared<InfoArgs>();
  auto* ci = pr->add_subcommand("info", "Print the container, FourCC and first frame header");
  ci->add_option("files", info->inputs, "MOV files or raw 'icpf' frames")->required();
  ci->callback([&action, info] { action = [info] { return run_info(*info); }; });

  auto dec = std::make_shared<DecodeArgs>();
  auto* cd = pr->add_subcommand(
      "decode",
      "Decode to raw planar YUV(A) (FFmpeg's pixel formats), Y4M, NumPy, or one frame to PNG");
  cd->add_option("file", dec->input, "MOV or MKV file, or raw 'icpf' frames (- for stdin)")
      ->required();
  add_output_options(cd, dec->out, "y4m, yuv (or raw), npy or png (one frame)",
                     "the input's name with the format's extension (.y4m without --format); -o "
                     "FOLDER puts it there");
  cd->add_option("--frame", dec->frame, "Decode this frame only (PNG: default 0)");
  cd->add_option("--backend", dec->backend, "cpu, cpu-parallel, cuda or auto")
      ->check(CLI::IsMember({"auto", "cpu", "cpu-parallel", "cuda"}))
      ->capture_default_str();
  cd->add_option("--bit-depth", dec->bit_depth, "Output precision 10 or 12 (default as FFmpeg)")
      ->check(CLI::IsMember({0, 10, 12}));
  cd->add_option("--batch", dec->batch, "Frames decoded together")->capture_default_str();
  cd->add_option("--device", dec->device, "CUDA device index")->capture_default_str();
  cd->add_flag("--stop-on-damage", dec->stop_on_damage, "Fail at the first damaged slice");
  cd->add_flag("-q,--quiet", dec->quiet, "Print only problems");
  cd->callback([&action, dec] { action = [dec] { return run_decode(*dec); }; });
}

const CommandRegistration registration{40, add_prores_commands};

}  // namespace
}  // namespace sigpu::cli
