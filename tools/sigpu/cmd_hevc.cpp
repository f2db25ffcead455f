// `sigpu hevc info|decode`: HEVC intra streams to raw YUV or Y4M.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include <sigpu/hevc.hpp>

#include "commands.hpp"

namespace sigpu::cli {
namespace {

struct InfoArgs {
  std::string input;
};

struct DecodeArgs {
  std::string input, output;
  std::string backend = "cpu";
  bool unfiltered = false;
  bool no_hash_check = false;
  bool quiet = false;
};

std::vector<std::uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("cannot open " + path);
  return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int run_info(const InfoArgs& a) {
  const auto data = read_file(a.input);
  const hevc::StreamSummary s = hevc::summarize(data);
  for (const auto& line : s.lines) std::printf("%s\n", line.c_str());
  std::printf("%zu pictures\n", s.pictures);
  for (const auto& p : s.problems) print_error(a.input + ": " + p.message);
  return s.problems.empty() ? kExitOk : kExitFailed;
}

// Writes a frame as planar samples: one byte each at 8 bits, two (little-endian) above.
void write_planes(std::FILE* out, const hevc::Frame& f) {
  const int comps = f.chroma_format_idc == 0 ? 1 : 3;
  for (int c = 0; c < comps; ++c) {
    const bool wide = (c ? f.bit_depth_chroma : f.bit_depth_luma) > 8;
    const auto& plane = f.planes[c];
    std::vector<std::uint8_t> bytes(plane.size() * (wide ? 2 : 1));
    if (wide)
      for (std::size_t i = 0; i < plane.size(); ++i) {
        bytes[2 * i] = static_cast<std::uint8_t>(plane[i] & 0xff);
        bytes[2 * i + 1] = static_cast<std::uint8_t>(plane[i] >> 8);
      }
    else
      for (std::size_t i = 0; i < plane.size(); ++i) bytes[i] = static_cast<std::uint8_t>(plane[i]);
    if (std::fwrite(bytes.data(), 1, bytes.size(), out) != bytes.size())
      throw Error("write failed");
  }
}

int run_decode(const DecodeArgs& a) {
  const auto data = read_file(a.input);
  std::FILE* out = std::fopen(a.output.c_str(), "wb");
  if (!out) throw Error("cannot create " + a.output);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(out, std::fclose);
  const bool y4m = ends_with(a.output, ".y4m");
  hevc::Decoder dec({.backend = parse_backend(a.backend),
                     .unfiltered = a.unfiltered,
                     .check_hash = !a.no_hash_check});
  std::size_t frames = 0, matched = 0, unchecked = 0;
  bool header = false;
  dec.decode(data, [&](const hevc::Frame& f) {
    if (y4m && !header) {
      const char* cs = f.chroma_format_idc == 0 ? "mono" : "420jpeg";
      std::string c = cs;
      if (f.bit_depth_luma > 8)
        c = (f.chroma_format_idc == 0 ? "mono" : "420p") + std::to_string(f.bit_depth_luma);
      std::fprintf(out, "YUV4MPEG2 W%d H%d F25:1 Ip A1:1 C%s\n", f.width, f.height, c.c_str());
      header = true;
    }
    if (y4m) std::fputs("FRAME\n", out);
    write_planes(out, f);
    ++frames;
    matched += f.hash == hevc::HashStatus::matched;
    unchecked += f.hash == hevc::HashStatus::unchecked;
  });
  for (const auto& p : dec.problems()) print_error(a.input + ": " + p.message);
  if (!a.quiet) {
    std::printf("%s: %zu pictures, %zu hashes matched", a.input.c_str(), frames, matched);
    if (unchecked)
      std::printf(", %zu hashes not checked (%s)", unchecked,
                  a.no_hash_check ? "--no-hash-check"
                  : a.unfiltered  ? "unfiltered output"
                                  : "in-loop filters not in this build");
    std::printf("\n");
  }
  return dec.problems().empty() ? kExitOk : kExitFailed;
}

void add_hevc_commands(CLI::App& app, Action& action) {
  auto* hevc = app.add_subcommand("hevc", "HEVC (H.265) intra decoding");
  hevc->require_subcommand(1);

  auto info = std::make_shared<InfoArgs>();
  auto* ci = hevc->add_subcommand("info", "Print parameter sets, pictures and slice segments");
  ci->add_option("file", info->input, "Annex B byte stream (.hevc, .h265)")->required();
  ci->callback([&action, info] { action = [info] { return run_info(*info); }; });

  auto dec = std::make_shared<DecodeArgs>();
  auto* cd = hevc->add_subcommand("decode", "Decode to raw planar YUV (.yuv) or Y4M (.y4m)");
  cd->add_option("file", dec->input, "Annex B byte stream")->required();
  cd->add_option("-o,--output", dec->output, "Output file; .y4m writes Y4M, anything else raw YUV")
      ->required();
  cd->add_option("--backend", dec->backend,
                 "cpu (serial reference), cpu-parallel (pictures on all cores), cuda (filters on "
                 "the GPU) or auto")
      ->capture_default_str();
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
