// `sigpu prores info|decode`: what a ProRes file holds, and its frames as raw planar YUV(A) in
// FFmpeg's pixel formats, Y4M, or one frame as a 16-bit PNG for a look.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <sigpu/prores.hpp>

#ifdef SIGPU_HAVE_LIBPNG
#include <png.h>
#endif

#include "commands.hpp"
#include "core/timer.hpp"
#include "progress.hpp"

namespace sigpu::cli {
namespace {

namespace fs = std::filesystem;
using namespace sigpu::prores;

struct InfoArgs {
  std::vector<std::string> inputs;
};

struct DecodeArgs {
  std::string input, output;
  std::string backend = "auto";
  std::string format;  ///< raw, y4m or png; empty: from the output's extension
  long frame = -1;     ///< one frame only (PNG needs it; 0 when not given)
  int bit_depth = 0, device = 0, batch = 16;
  bool stop_on_damage = false, force = false, quiet = false;
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
      std::printf("%s\n  container   %s, %zu frames, %zu bytes of frames\n", path.c_str(),
                  clip.container.c_str(), clip.frames.size(), clip.bytes.size());
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
      print_error(e.what());
      rc = kExitFailed;
    }
  }
  return rc;
}

void put_le16(std::vector<char>& out, const Frame& f) {
  const std::size_t at = out.size();
  out.resize(at + 2 * f.samples.size());
  for (std::size_t i = 0; i < f.samples.size(); ++i) {
    out[at + 2 * i] = static_cast<char>(f.samples[i] & 0xFF);
    out[at + 2 * i + 1] = static_cast<char>(f.samples[i] >> 8);
  }
}

std::string y4m_header(const Clip& clip, const Frame& f) {
  if (f.format.alpha)
    throw UsageError("Y4M has no format for " + f.format.name() + "; write raw instead");
  const char interlace = f.scan == Scan::progressive       ? 'p'
                         : f.scan == Scan::top_field_first ? 't'
                                                           : 'b';
  const std::string c = std::string(f.format.chroma == Chroma::c444 ? "444" : "422") + "p" +
                        std::to_string(f.format.bit_depth);
  std::string cu = c;
  for (auto& ch : cu) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  // Y4M needs a rate: the container's, or 25 fps when it states none.
  const int num = clip.fps_num ? clip.fps_num : 25, den = clip.fps_num ? clip.fps_den : 1;
  return "YUV4MPEG2 W" + std::to_string(f.width) + " H" + std::to_string(f.height) + " F" +
         std::to_string(num) + ":" + std::to_string(den) + " I" + interlace + " A" +
         std::to_string(clip.sar_num) + ":" + std::to_string(clip.sar_den) + " C" + c +
         " XYSCSS=" + cu + " XCOLORRANGE=LIMITED\n";
}

#ifdef SIGPU_HAVE_LIBPNG
// Limited-range Y'CbCr to 16-bit R'G'B'(A): BT.601 for matrices 5/6, BT.709 otherwise.
void write_png(const std::string& path, const Frame& f, int matrix) {
  const double kr = (matrix == 5 || matrix == 6) ? 0.299 : 0.2126;
  const double kb = (matrix == 5 || matrix == 6) ? 0.114 : 0.0722, kg = 1 - kr - kb;
  const double unit = double(1 << (f.format.bit_depth - 8));
  const int channels = f.format.alpha ? 4 : 3;
  const double amax = double((1 << f.format.bit_depth) - 1);
  std::vector<std::uint8_t> rows(static_cast<std::size_t>(f.width) * f.height * channels * 2);
  const auto y = f.plane(0), cb = f.plane(1), cr = f.plane(2);
  const int cw = f.plane_width(1), shift = f.format.chroma == Chroma::c422 ? 1 : 0;
  auto store = [](std::uint8_t* p, double v) {
    const int u = static_cast<int>(std::clamp(v, 0.0, 1.0) * 65535.0 + 0.5);
    p[0] = static_cast<std::uint8_t>(u >> 8);
    p[1] = static_cast<std::uint8_t>(u & 0xFF);
  };
  for (int j = 0; j < f.height; ++j)
    for (int i = 0; i < f.width; ++i) {
      const std::size_t ci = static_cast<std::size_t>(j) * cw + (i >> shift);
      const double Y = (y[static_cast<std::size_t>(j) * f.width + i] - 16 * unit) / (219 * unit);
      const double B = (cb[ci] - 128 * unit) / (224 * unit);
      const double R = (cr[ci] - 128 * unit) / (224 * unit);
      std::uint8_t* p = &rows[(static_cast<std::size_t>(j) * f.width + i) * channels * 2];
      store(p, Y + 2 * (1 - kr) * R);
      store(p + 2, Y - 2 * kb * (1 - kb) / kg * B - 2 * kr * (1 - kr) / kg * R);
      store(p + 4, Y + 2 * (1 - kb) * B);
      if (channels == 4) store(p + 6, f.plane(3)[static_cast<std::size_t>(j) * f.width + i] / amax);
    }
  FILE* fp = std::fopen(path.c_str(), "wb");
  if (!fp) throw Error(path + ": cannot create");
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!png || !info || setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    std::fclose(fp);
    throw Error(path + ": PNG write failed");
  }
  png_init_io(png, fp);
  png_set_IHDR(png, info, static_cast<png_uint_32>(f.width), static_cast<png_uint_32>(f.height), 16,
               channels == 4 ? PNG_COLOR_TYPE_RGBA : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  for (int j = 0; j < f.height; ++j)
    png_write_row(png, &rows[static_cast<std::size_t>(j) * f.width * channels * 2]);
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  std::fclose(fp);
}
#endif

int run_decode(const DecodeArgs& a) {
  std::string format = a.format;
  if (format.empty()) {
    const std::string ext = fs::path(a.output).extension().string();
    format = ext == ".y4m" ? "y4m" : ext == ".png" ? "png" : "raw";
  }
  if (format == "png") {
#ifndef SIGPU_HAVE_LIBPNG
    throw UsageError("PNG output needs libpng, which this build lacks");
#endif
  }
  if (!a.force && a.output != "-" && fs::exists(a.output))
    throw UsageError(a.output + " exists (use --force to overwrite)");
  const Clip clip = open_file(a.input);
  DecodeOptions o{.backend = parse_backend(a.backend),
                  .bit_depth = a.bit_depth,
                  .stop_on_damage = a.stop_on_damage,
                  .device = a.device,
                  .batch = a.batch};
  std::size_t first = 0, count = clip.frames.size();
  if (a.frame >= 0 || format == "png") {
    first = static_cast<std::size_t>(std::max(0L, a.frame));
    if (first >= clip.frames.size())
      throw UsageError("--frame " + std::to_string(first) + " but the file has " +
                       std::to_string(clip.frames.size()) + " frames");
    count = 1;
  }

  // One GPU decoder for the whole file, made before the output (it may refuse): its streams
  // and buffers are made once.
  std::unique_ptr<CudaDecoder> gpu;
  if (resolve(o.backend) == Backend::cuda) gpu = std::make_unique<CudaDecoder>(a.device);
  std::ofstream out;
  if (format != "png") {
    out.open(a.output, std::ios::binary);
    if (!out) throw Error(a.output + ": cannot create");
  }
  Progress progress(clip.bytes.size(), 1);
  progress.set_current(fs::path(a.input).filename().string());
  DecodeReport report;
  report.backend = resolve(o.backend);
  const std::size_t chunk = static_cast<std::size_t>(std::max(1, a.batch));
  Stopwatch timer;
  bool header_done = false;
  std::vector<char> buf;
  for (std::size_t i = first; i < first + count; i += chunk) {
    Decoded d = decode(clip, o, i, std::min(chunk, first + count - i), gpu.get());
    report.frames += d.report.frames;
    for (auto& dmg : d.report.damage) {
      progress.clear();
      print_error(a.input + ": " + dmg.message());
      report.damage.push_back(std::move(dmg));
    }
    for (const Frame& f : d.frames) {
      if (format == "png") {
#ifdef SIGPU_HAVE_LIBPNG
        write_png(a.output, f, clip.frames.empty() ? 1 : parse_frame_header(clip.frame(i)).matrix);
#endif
        continue;
      }
      buf.clear();
      if (format == "y4m") {
        if (!header_done) {
          const std::string h = y4m_header(clip, f);
          buf.insert(buf.end(), h.begin(), h.end());
          header_done = true;
        }
        const char tag[] = "FRAME\n";
        buf.insert(buf.end(), tag, tag + 6);
      }
      put_le16(buf, f);
      out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
    }
    for (std::size_t j = i; j < std::min(first + count, i + chunk); ++j)
      progress.add_bytes(clip.frames[j].size);
  }
  if (out.is_open() && !out.flush()) throw Error(a.output + ": write failed");
  progress.file_done();
  progress.clear();
  if (!a.quiet) {
    const double s = timer.seconds();
    std::printf("%s: %llu frames decoded (%s) in %.3f s, %.1f fps, %zu damaged slices -> %s\n",
                a.input.c_str(), static_cast<unsigned long long>(report.frames),
                std::string(to_string(report.backend)).c_str(), s,
                s > 0 ? double(report.frames) / s : 0.0, report.damage.size(), a.output.c_str());
  }
  return report.ok() ? kExitOk : kExitFailed;
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
      "decode", "Decode to raw planar YUV(A) (FFmpeg's pixel formats), Y4M, or one frame to PNG");
  cd->add_option("file", dec->input, "MOV file or raw 'icpf' frames")->required();
  cd->add_option("-o,--output", dec->output, "Output file (.yuv/.raw, .y4m, .png)")->required();
  cd->add_option("--format", dec->format, "raw, y4m or png (default: from the extension)")
      ->check(CLI::IsMember({"raw", "y4m", "png"}));
  cd->add_option("--frame", dec->frame, "Decode this frame only (PNG: default 0)");
  cd->add_option("--backend", dec->backend, "cpu, cpu-parallel, cuda or auto")
      ->check(CLI::IsMember({"auto", "cpu", "cpu-parallel", "cuda"}))
      ->capture_default_str();
  cd->add_option("--bit-depth", dec->bit_depth, "Output precision 10 or 12 (default as FFmpeg)")
      ->check(CLI::IsMember({0, 10, 12}));
  cd->add_option("--batch", dec->batch, "Frames decoded together")->capture_default_str();
  cd->add_option("--device", dec->device, "CUDA device index")->capture_default_str();
  cd->add_flag("--stop-on-damage", dec->stop_on_damage, "Fail at the first damaged slice");
  cd->add_flag("-f,--force", dec->force, "Overwrite the output file");
  cd->add_flag("-q,--quiet", dec->quiet, "Print only problems");
  cd->callback([&action, dec] { action = [dec] { return run_decode(*dec); }; });
}

const CommandRegistration registration{40, add_prores_commands};

}  // namespace
}  // namespace sigpu::cli
