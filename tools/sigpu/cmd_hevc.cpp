// `sigpu hevc info|decode`: HEVC intra streams to raw YUV, Y4M, NumPy or a PNG.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <sigpu/hevc.hpp>
#include <sigpu/io.hpp>

#include "commands.hpp"
#include "writer_thread.hpp"

namespace sigpu::cli {
namespace {

/// Decoded pictures waiting for the writer thread at most: enough to even out bursts of
/// pictures finished together, few enough that memory stays small (4K 4:2:0: 25 MB each).
constexpr std::size_t kPicturesInFlight = 3;

struct InfoArgs {
  std::string input;
};

struct DecodeArgs {
  std::string input;
  OutputArgs out;
  std::string backend = "cpu";
  bool unfiltered = false;
  bool no_hash_check = false;
  bool cpu_reconstruction = false;
  bool quiet = false;
};

/// Prints the container's and the stream's problems; true when there were any.
bool print_problems(const std::string& name, const std::vector<hevc::Problem>& container,
                    const std::vector<hevc::Problem>& stream) {
  for (const auto& p : container) print_error(name + ": " + p.message);
  for (const auto& p : stream) print_error(name + ": " + p.message);
  return !container.empty() || !stream.empty();
}

int run_info(const InfoArgs& a) {
  auto src = hevc::Source::open(a.input);
  const hevc::StreamSummary s = hevc::summarize(src);
  std::printf("format: %s\n", src.format().c_str());
  for (const auto& line : s.lines) std::printf("%s\n", line.c_str());
  std::printf("%zu pictures\n", s.pictures);
  std::fflush(stdout);
  const std::string name = a.input == "-" ? "stdin" : a.input;
  return print_problems(name, src.problems(), s.problems) ? kExitDamaged : kExitOk;
}

io::PictureView view_of(const hevc::Frame& f) {
  io::PictureView v;
  v.width = f.width;
  v.height = f.height;
  v.bit_depth = f.bit_depth_luma;
  v.chroma = f.chroma_format_idc == 0 ? io::Chroma::c400 : io::Chroma::c420;
  for (int c = 0; c < 3; ++c) {
    v.planes[c] = f.planes[c].data();
    v.plane_width[c] = v.stride[c] = f.plane_width[c];
    v.plane_height[c] = f.plane_height[c];
  }
  return v;
}

int run_decode(const DecodeArgs& a) {
  // Opened first to compare the output with; the Source reads it (containers by name).
  if (a.cpu_reconstruction && resolve(parse_backend(a.backend)) != Backend::cuda)
    throw UsageError("--cpu-reconstruction applies to the cuda backend only");
  io::Input in(a.input);
  const std::string path =
      output_path(a.input, a.out, io::extension(io::picture_format(a.out.format, "-")));
  const io::PictureFormat format = io::picture_format(a.out.format, path);
  io::Output out(path, {.force = a.out.force, .inputs = {&in}});
  io::PictureWriter writer(out, format, {});
  hevc::Decoder dec({.backend = parse_backend(a.backend),
                     .reconstruct_on_gpu = !a.cpu_reconstruction,
                     .unfiltered = a.unfiltered,
                     .check_hash = !a.no_hash_check});
  // Converted and written on the decoder's thread, each picture would leave the decoder's
  // pipeline without input meanwhile; on a thread of their own the writes overlap decoding.
  WriterThread<hevc::Frame> pictures(kPicturesInFlight,
                                     [&writer](const hevc::Frame& f) { writer.write(view_of(f)); });
  std::size_t matched = 0, unchecked = 0;
  // The decoder's frame is taken, not copied (a 4K frame is 24 MB): the decoder gets back the
  // slot's written frame and reuses its storage.
  const auto on_frame = [&](hevc::Frame& f) {
    matched += f.hash == hevc::HashStatus::matched;
    unchecked += f.hash == hevc::HashStatus::unchecked;
    pictures.take(f);
  };
  auto src = in.path() == "-" ? hevc::Source::from_fd(0, "stdin") : hevc::Source::open(in.path());
  try {
    while (auto chunk = src.read()) dec.push(chunk, on_frame);
    dec.finish(on_frame);
    pictures.finish();
  } catch (...) {
    print_problems(in.name(), src.problems(), dec.problems());
    rethrow_naming(in.name());
  }
  const bool damaged = print_problems(in.name(), src.problems(), dec.problems());
  writer.finish();
  if (!a.quiet) {
    std::fprintf(stderr, "%s -> %s: %llu pictures, %zu hashes matched", in.name().c_str(),
                 out.name().c_str(), static_cast<unsigned long long>(writer.pictures_written()),
                 matched);
    if (unchecked)
      std::fprintf(stderr, ", %zu hashes not checked (%s)", unchecked,
                   a.no_hash_check ? "--no-hash-check"
                   : a.unfiltered  ? "unfiltered output"
                                   : "in-loop filters not in this build");
    std::fprintf(stderr, "\n");
  }
  return damaged ? kExitDamaged : kExitOk;
}

void add_hevc_commands(CLI::App& app, Action& action) {
  auto* hevc = app.add_subcommand("hevc", "HEVC (H.265) intra decoding");
  hevc->require_subcommand(1);

  auto info = std::make_shared<InfoArgs>();
  auto* ci = hevc->add_subcommand("info", "Print parameter sets, pictures and slice segments");
  ci->add_option("file", info->input,
                 "Annex B (.hevc, .h265), MP4, MOV, MKV or MPEG-TS; - for stdin (Annex B, MPEG-TS)")
      ->required();
  ci->callback([&action, info] {
    action = [info] {
      try {
        return run_info(*info);
      } catch (...) {
        rethrow_naming(info->input == "-" ? "stdin" : info->input);
      }
    };
  });

  auto dec = std::make_shared<DecodeArgs>();
  auto* cd = hevc->add_subcommand("decode", "Decode to raw planar YUV, Y4M, NumPy or one PNG");
  cd->add_option("file", dec->input,
                 "Annex B, MP4, MOV, MKV or MPEG-TS; - for stdin (Annex B, MPEG-TS)")
      ->required();
  add_output_options(cd, dec->out, "y4m, yuv, npy or png",
                     "the input's name with the format's extension (.y4m without --format); -o "
                     "FOLDER puts it there");
  cd->add_option("--backend", dec->backend,
                 "cpu (serial reference), cpu-parallel (pictures on all cores), cuda (CPU cores "
                 "parse, the GPU reconstructs and filters) or auto")
      ->check(CLI::IsMember({"auto", "cpu", "cpu-parallel", "cuda"}))
      ->capture_default_str();
  cd->add_flag("--cpu-reconstruction", dec->cpu_reconstruction,
               "With --backend cuda: reconstruct on the CPU cores, only the filters on the GPU");
  cd->add_flag("--unfiltered", dec->unfiltered,
               "Output the reconstruction before deblocking and SAO");
  cd->add_flag("--no-hash-check", dec->no_hash_check,
               "Do not check pictures against their decoded picture hash SEI (saves the hashing's "
               "CPU time; FFmpeg checks only with -err_detect crccheck)");
  cd->add_flag("-q,--quiet", dec->quiet, "Print only problems");
  cd->callback([&action, dec] { action = [dec] { return run_decode(*dec); }; });
}

const CommandRegistration registration{50, add_hevc_commands};

}  // namespace
}  // namespace sigpu::cli
