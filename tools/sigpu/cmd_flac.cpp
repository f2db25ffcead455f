// `sigpu flac info|decode|test`. Each file is handled on its own: a bad file is reported and
// the others still run; the exit code says whether any failed.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <sigpu/flac.hpp>

#include "commands.hpp"
#include "core/mapped_file.hpp"
#include "core/md5.hpp"
#include "core/timer.hpp"
#include "flac/decoder_common.hpp"
#include "flac/wav_writer.hpp"
#include "progress.hpp"

namespace sigpu::cli {
namespace {

namespace fs = std::filesystem;

struct InfoArgs {
  std::vector<std::string> inputs;
};

struct DecodeArgs {
  std::vector<std::string> inputs;  ///< files and directories (searched for *.flac)
  std::string list;                 ///< a file naming one input per line
  std::string shard;                ///< "I/N": every N-th input from the I-th (0-based)
  std::string output;
  std::string backend = "auto";
  std::string format = "wav";
  std::string sample_format;  ///< empty: the coded width, as `flac -d` writes it
  int device = 0;
  std::string devices;  ///< "all" or "0,1": several GPUs at once
  bool no_md5 = false, stop_on_damage = false, force = false, quiet = false;
  std::string skip, until;  ///< a range, as `flac -d --skip/--until` takes it
};

struct TestArgs {
  std::vector<std::string> inputs;
  std::string backend = "auto";
  int device = 0;
};

const std::vector<std::string> kBackendNames = {"auto", "cpu", "cpu-parallel", "cuda"};

std::uint64_t size_or_zero(const std::string& path) {
  std::error_code ec;
  const auto n = fs::file_size(path, ec);
  return ec ? 0 : n;
}

std::uint64_t total_size(const std::vector<std::string>& paths) {
  std::uint64_t n = 0;
  for (const auto& p : paths) n += size_or_zero(p);
  return n;
}

std::vector<std::uint8_t> read_prefix(const std::string& path, std::uint64_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open '" + path + "'");
  std::vector<std::uint8_t> bytes(std::min(size_or_zero(path), max_bytes));
  in.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(bytes.size()));
  if (std::uint64_t(in.gcount()) != bytes.size()) throw Error("cannot read '" + path + "'");
  return bytes;
}

std::string duration(std::uint64_t samples, std::uint32_t rate) {
  if (rate == 0) return "?";
  const double s = double(samples) / rate;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%llu:%06.3f", static_cast<unsigned long long>(s / 60),
                s - 60 * std::floor(s / 60));
  return buf;
}

const char* block_type_name(std::uint8_t type) {
  static const char* const kNames[] = {"STREAMINFO",     "PADDING",  "APPLICATION", "SEEKTABLE",
                                       "VORBIS_COMMENT", "CUESHEET", "PICTURE"};
  if (type < std::size(kNames)) return kNames[type];
  return type == 127 ? "INVALID" : "RESERVED";
}

std::string md5_text(const flac::DecodeReport& r) {
  switch (r.md5) {
    case flac::Md5Check::match:
      return "MD5 ok";
    case flac::Md5Check::mismatch:
      return "MD5 MISMATCH: expected " + r.md5_expected + ", decoded " + r.md5_computed;
    case flac::Md5Check::not_set:
      return "no MD5 in STREAMINFO";
    case flac::Md5Check::skipped:
      return "MD5 not checked";
  }
  return "?";
}

// ---- info ----------------------------------------------------------------------------------

flac::Stream parse_file(const std::string& path) {
  // Metadata is usually a few KB: try a prefix before reading a whole (large) file.
  constexpr std::uint64_t kPrefix = 4 << 20;
  try {
    return flac::parse_stream(read_prefix(path, kPrefix));
  } catch (const Error& e) {
    if (size_or_zero(path) <= kPrefix) throw Error(path + ": " + e.what());
  }
  try {
    return flac::parse_stream(read_prefix(path, UINT64_MAX));
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

void print_stream(const std::string& path, const flac::Stream& s) {
  const auto& i = s.info;
  std::printf("%s\n", path.c_str());
  if (s.has_streaminfo) {
    std::printf("  sample rate       %u Hz\n", i.sample_rate);
    std::printf("  channels          %u\n", i.channels);
    std::printf("  bits per sample   %u\n", i.bits_per_sample);
    if (i.total_samples)
      std::printf("  total samples     %llu (%s)\n",
                  static_cast<unsigned long long>(i.total_samples),
                  duration(i.total_samples, i.sample_rate).c_str());
    else
      std::printf("  total samples     unknown\n");
    std::printf("  block size        %u..%u\n", i.min_block_size, i.max_block_size);
    // Only a fixed block size makes the count follow from STREAMINFO; otherwise it takes a
    // decode (`sigpu flac test` prints it).
    if (i.min_block_size == i.max_block_size && i.max_block_size && i.total_samples)
      std::printf("  frames            %llu\n",
                  static_cast<unsigned long long>((i.total_samples + i.max_block_size - 1) /
                                                  i.max_block_size));
    else
      std::printf("  frames            not in STREAMINFO ('sigpu flac test' counts them)\n");
    if (i.min_frame_size || i.max_frame_size)
      std::printf("  frame size        %u..%u bytes\n", i.min_frame_size, i.max_frame_size);
    std::printf("  MD5               %s\n",
                i.md5_set() ? to_hex(i.md5.data(), i.md5.size()).c_str() : "not set");
  } else {
    std::printf("  no STREAMINFO: the data starts at a frame header\n");
  }
  std::printf("  audio starts at   byte %llu\n", static_cast<unsigned long long>(s.audio_offset));
  if (!s.vendor.empty()) std::printf("  vendor            %s\n", s.vendor.c_str());
  if (!s.blocks.empty()) std::printf("  metadata blocks\n");
  for (std::size_t n = 0; n < s.blocks.size(); ++n) {
    const auto& b = s.blocks[n];
    std::printf("    #%-2zu %-15s at byte %-8llu %7u bytes  %s\n", n, block_type_name(b.type),
                static_cast<unsigned long long>(b.offset), b.length, b.summary.c_str());
  }
  if (!s.comments.empty()) std::printf("  comments\n");
  for (const auto& c : s.comments) std::printf("    %s\n", c.c_str());
  if (!s.seek_points.empty()) std::printf("  seek points       %zu\n", s.seek_points.size());
  for (const auto& w : s.warnings) std::printf("  warning: %s\n", w.c_str());
}

int run_info(const InfoArgs& a) {
  int rc = kExitOk;
  for (std::size_t n = 0; n < a.inputs.size(); ++n) {
    if (n) std::printf("\n");
    try {
      print_stream(a.inputs[n], parse_file(a.inputs[n]));
    } catch (const std::exception& e) {
      std::fflush(stdout);
      print_error(e.what());
      rc = kExitFailed;
    }
  }
  return rc;
}

// ---- decode --------------------------------------------------------------------------------

/// For comparing paths; /dev/stdout on a pipe has no canonical form.
std::string canonical_or_as_is(const std::string& path) {
  std::error_code ec;
  const auto p = fs::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

/// One file to decode and the name its output gets under an output directory.
struct Input {
  std::string path;
  fs::path name;  ///< relative to a directory input, else the file name
};

bool is_flac_name(const fs::path& p) {
  std::string ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  return ext == ".flac";
}

/// The inputs as given, directories searched (recursively, sorted) for *.flac, the list file's
/// lines appended, then the shard taken: the same order on every machine of a cluster job.
std::vector<Input> expand_inputs(const DecodeArgs& a, bool* several) {
  std::vector<Input> all;
  *several = a.inputs.size() > 1 || !a.list.empty();
  for (const auto& in : a.inputs) {
    if (!fs::is_directory(in)) {
      all.push_back({in, fs::path(in).filename()});
      continue;
    }
    *several = true;
    std::vector<fs::path> found;
    for (const auto& e :
         fs::recursive_directory_iterator(in, fs::directory_options::skip_permission_denied))
      if (e.is_regular_file() && is_flac_name(e.path())) found.push_back(e.path());
    std::sort(found.begin(), found.end());
    for (const auto& p : found) all.push_back({p.string(), fs::relative(p, in)});
  }
  if (!a.list.empty()) {
    std::ifstream list(a.list);
    if (!list) throw UsageError("cannot read the list '" + a.list + "'");
    for (std::string line; std::getline(list, line);) {
      while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())))
        line.pop_back();
      if (line.empty() || line[0] == '#') continue;
      all.push_back({line, fs::path(line).filename()});
    }
  }
  if (a.shard.empty()) return all;
  unsigned index = 0, count = 0;
  char slash = 0, extra = 0;
  std::istringstream in(a.shard);
  if (!(in >> index >> slash >> count) || slash != '/' || count == 0 || index >= count ||
      (in >> extra))
    throw UsageError("--shard wants I/N with 0 <= I < N, e.g. 3/16; got '" + a.shard + "'");
  std::vector<Input> mine;
  for (std::size_t k = index; k < all.size(); k += count) mine.push_back(all[k]);
  return mine;
}

std::string extension_of(const std::string& format) {
  return format == "raw" ? ".raw" : format == "npy" ? ".npy" : ".wav";
}

std::vector<std::string> output_paths(const DecodeArgs& a, const std::vector<Input>& inputs,
                                      bool several) {
  const std::string ext = extension_of(a.format);
  std::vector<std::string> out;
  if (!several) {
    const auto& in = inputs.at(0).path;
    if (a.output == "-")
      out.push_back("/dev/stdout");  // the writer needs no seeking when the length is known
    else if (a.output.empty())
      out.push_back(fs::path(in).replace_extension(ext).string());
    else if (fs::is_directory(a.output))
      out.push_back((fs::path(a.output) / fs::path(in).filename().replace_extension(ext)).string());
    else
      out.push_back(a.output);
  } else {
    if (a.output.empty() || a.output == "-")
      throw UsageError("several inputs (or a directory, or a list) need -o OUTDIR");
    if (fs::exists(a.output) && !fs::is_directory(a.output))
      throw UsageError("-o '" + a.output + "' is not a directory");
    for (const auto& in : inputs)
      out.push_back((fs::path(a.output) / fs::path(in.name).replace_extension(ext)).string());
  }
  std::map<std::string, std::string> seen;
  for (std::size_t n = 0; n < out.size(); ++n) {
    const auto canon = canonical_or_as_is(out[n]);
    if (canon == canonical_or_as_is(inputs[n].path))
      throw UsageError("output '" + out[n] + "' would overwrite its input");
    if (auto [it, fresh] = seen.emplace(canon, inputs[n].path); !fresh)
      throw UsageError("inputs '" + it->second + "' and '" + inputs[n].path +
                       "' would both write '" + out[n] + "'");
  }
  return out;
}

flac::SampleFormat sample_format(const std::string& name) {
  if (name == "s16") return flac::SampleFormat::s16;
  if (name == "s32") return flac::SampleFormat::s32;
  if (name == "f32") return flac::SampleFormat::f32;
  return flac::SampleFormat::raw32;
}

/// Streams the PCM out in pieces, crediting the progress bar with the input bytes it stands for.
void write_output(const std::string& path, const flac::Pcm& pcm, flac::FileFormat format,
                  Progress& progress, std::uint64_t input_bytes) {
  flac::PcmFileWriter w(path, flac::shape_of(pcm),
                        {.format = format, .expected_samples = pcm.samples});
  constexpr std::uint64_t kStep = 1 << 18;
  std::uint64_t credited = 0;
  for (std::uint64_t at = 0; at < pcm.samples; at += kStep) {
    const std::uint64_t n = std::min(kStep, pcm.samples - at);
    w.append(pcm, at, n);
    const auto due = std::uint64_t(double(input_bytes) * double(at + n) / double(pcm.samples));
    progress.add_bytes(due - std::min(due, credited));
    credited = std::max(credited, due);
  }
  w.finalize();
  progress.add_bytes(input_bytes - std::min(input_bytes, credited));
}

/// Prints what went wrong (or, unless quiet, what was written); returns the file's exit code.
int report_decode(const std::string& in, const std::string& out, const flac::Decoded& d,
                  double seconds, bool quiet) {
  for (const auto& w : d.stream.warnings) print_error(in + ": warning: " + w);
  for (const auto& w : d.report.warnings) print_error(in + ": warning: " + w);
  for (const auto& dmg : d.report.damage) print_error(in + ": " + dmg.message());
  if (!d.report.damage.empty())
    print_error(in + ": " + std::to_string(d.report.damage.size()) +
                " damaged frame(s); their samples are silence in '" + out + "'");
  if (d.report.md5 == flac::Md5Check::mismatch) print_error(in + ": " + md5_text(d.report));
  if (!quiet && d.report.ok()) {
    const auto& p = d.pcm;
    std::fprintf(stderr, "%s -> %s  (%s, %u Hz, %u ch, %u bit; %s; %s in %.2f s)\n", in.c_str(),
                 out.c_str(), duration(p.samples, p.sample_rate).c_str(), p.sample_rate, p.channels,
                 p.bits_per_sample, md5_text(d.report).c_str(),
                 std::string(to_string(d.report.backend)).c_str(), seconds);
  }
  return d.report.ok() ? kExitOk : kExitFailed;
}

/// A position as `flac -d --skip/--until` takes one: samples (digits), or mm:ss.ss.
std::uint64_t parse_position(const std::string& text, unsigned rate, const char* option) {
  static const std::regex samples("[0-9]+"), clock("([0-9]+):([0-9]+(\\.[0-9]*)?)");
  std::smatch m;
  if (std::regex_match(text, samples)) return std::stoull(text);
  if (std::regex_match(text, m, clock)) {
    const double seconds = std::stod(m[1].str()) * 60 + std::stod(m[2].str());
    return static_cast<std::uint64_t>(std::llround(seconds * rate));
  }
  throw UsageError(std::string(option) + " " + text +
                   ": give samples (digits) or a time as mm:ss.ss, as `flac -d` takes them");
}

/// The samples --skip/--until select in a file (the whole file when neither is given).
flac::Decoded decode_input(const std::string& path, const DecodeArgs& a,
                           const flac::DecodeOptions& opt) {
  if (a.skip.empty() && a.until.empty()) return flac::decode_file(path, opt);
  const MappedFile file(path);  // the range's pages are read, not the whole file
  const std::span<const std::uint8_t> bytes = file.bytes();
  const unsigned rate = flac::parse_stream(bytes).info.sample_rate;
  const std::uint64_t first = a.skip.empty() ? 0 : parse_position(a.skip, rate, "--skip");
  std::uint64_t end = ~std::uint64_t{0};
  if (!a.until.empty()) end = parse_position(a.until, rate, "--until");
  if (end <= first)
    throw UsageError("--until must be past --skip (" + std::to_string(end) +
                     " <= " + std::to_string(first) + " samples)");
  return flac::decode_range(bytes, {first, end - first}, opt);
}

/// Decodes one file at a time (cpu backends, or a range of each file) or batches of files
/// packed into shared GPU launches (cuda), writes each output and reports each file on its
/// own.
int run_decode(const DecodeArgs& a) {
  if (a.inputs.empty() && a.list.empty())
    throw UsageError("no inputs: name files, directories or --list FILE");
  bool several = false;
  const std::vector<Input> inputs = expand_inputs(a, &several);
  if (inputs.empty()) {
    print_error("no input files" + std::string(a.shard.empty() ? "" : " in this shard"));
    return kExitOk;
  }
  const auto outputs = output_paths(a, inputs, several);
  if (several) fs::create_directories(a.output);
  flac::DecodeOptions opt;
  opt.backend = resolve(parse_backend(a.backend));
  opt.format = sample_format(a.sample_format);
  opt.layout = flac::Layout::interleaved;
  opt.verify_md5 = !a.no_md5;
  opt.stop_on_damage = a.stop_on_damage;
  opt.device = a.device;
  if (!a.devices.empty()) {
    if (opt.backend != Backend::cuda)
      throw UsageError("--devices needs the cuda backend (and a CUDA device)");
    opt.devices = flac::parse_devices(a.devices);
  }
  const auto format = a.format == "raw"   ? flac::FileFormat::raw
                      : a.format == "npy" ? flac::FileFormat::npy
                                          : flac::FileFormat::wav;

  std::vector<std::string> paths;
  for (const auto& in : inputs) paths.push_back(in.path);
  Progress progress(total_size(paths), inputs.size());
  int rc = kExitOk;
  auto fail = [&](const std::string& message) {
    progress.clear();
    print_error(message);
    rc = kExitFailed;
  };
  auto write = [&](std::size_t n, const flac::Decoded& decoded, double seconds) {
    fs::create_directories(fs::path(outputs[n]).parent_path());
    write_output(outputs[n], decoded.pcm, format, progress, size_or_zero(inputs[n].path));
    progress.clear();
    rc = std::max(rc, report_decode(inputs[n].path, outputs[n], decoded, seconds, a.quiet));
  };
  auto exists = [&](std::size_t n) {
    if (a.force || !fs::is_regular_file(outputs[n])) return false;
    fail("'" + outputs[n] + "' exists (use --force to overwrite)");
    progress.file_done();
    return true;
  };

  if (opt.backend != Backend::cuda || !a.skip.empty() || !a.until.empty()) {
    for (std::size_t n = 0; n < inputs.size(); ++n) {
      progress.set_current(inputs[n].path);
      if (exists(n)) continue;
      try {
        Stopwatch clock;
        const auto decoded = decode_input(inputs[n].path, a, opt);
        write(n, decoded, clock.seconds());
      } catch (const std::exception& e) {
        fail(e.what());
      }
      progress.file_done();
    }
    return rc;
  }

  // The GPU decodes files in batches of up to kBatchBytes of input, packed into shared launches.
  constexpr std::uint64_t kBatchBytes = 512u << 20;
  // One device keeps its decoder between batches; several split each batch (a single file by
  // bytes at frame starts, several files into shares by bytes).
  std::unique_ptr<flac::CudaDecoder> gpu;
  if (opt.devices.empty()) {
    try {
      gpu = std::make_unique<flac::CudaDecoder>(opt.device);
    } catch (const std::exception& e) {
      fail(e.what());
      return rc;
    }
  }
  auto decode_files = [&](std::span<const std::span<const std::uint8_t>> files) {
    if (gpu) return gpu->decode_batch(files, opt);
    if (files.size() > 1) return flac::decode_batch(files, opt);
    std::vector<flac::BatchResult> one(1);
    one[0].decoded = flac::decode(files[0], opt);
    return one;
  };
  for (std::size_t first = 0; first < inputs.size();) {
    std::vector<std::size_t> batch;
    std::vector<flac::ByteBuffer> bytes;
    std::uint64_t used = 0;
    std::size_t n = first;
    for (; n < inputs.size() && (batch.empty() || used < kBatchBytes); ++n) {
      if (exists(n)) continue;
      try {
        bytes.push_back(flac::read_file(inputs[n].path));
        used += bytes.back().size();
        batch.push_back(n);
      } catch (const std::exception& e) {
        fail(e.what());
        progress.file_done();
      }
    }
    first = n;
    if (batch.empty()) continue;
    progress.set_current(inputs[batch.front()].path + (batch.size() > 1 ? " ..." : ""));
    std::vector<std::span<const std::uint8_t>> spans(bytes.begin(), bytes.end());
    Stopwatch clock;
    std::vector<flac::BatchResult> results;
    try {
      results = decode_files(spans);
    } catch (const std::exception& e) {
      for (std::size_t k = 0; k < batch.size(); ++k) {
        fail(inputs[batch[k]].path + ": " + e.what());
        progress.file_done();
      }
      continue;
    }
    const double seconds = clock.seconds() / double(batch.size());
    for (std::size_t k = 0; k < batch.size(); ++k) {
      const std::size_t i = batch[k];
      progress.set_current(inputs[i].path);
      try {
        if (!results[k].error.empty()) throw Error(inputs[i].path + ": " + results[k].error);
        write(i, results[k].decoded, seconds);
      } catch (const std::exception& e) {
        fail(e.what());
      }
      progress.file_done();
    }
  }
  return rc;
}

// ---- test ----------------------------------------------------------------------------------

int run_test(const TestArgs& a) {
  flac::DecodeOptions opt;
  opt.backend = parse_backend(a.backend);
  opt.device = a.device;
  opt.verify_md5 = true;
  Progress progress(total_size(a.inputs), a.inputs.size());
  int rc = kExitOk;
  for (const auto& in : a.inputs) {
    progress.set_current(in);
    try {
      const auto d = flac::decode_file(in, opt);
      progress.clear();
      const auto& r = d.report;
      std::printf("%s: %s (%s, %llu frames)\n", in.c_str(), r.ok() ? "OK" : "FAILED",
                  md5_text(r).c_str(), static_cast<unsigned long long>(r.frames));
      for (const auto& dmg : r.damage) std::printf("  %s\n", dmg.message().c_str());
      for (const auto& w : r.warnings) std::printf("  warning: %s\n", w.c_str());
      if (!r.ok()) rc = kExitFailed;
    } catch (const std::exception& e) {
      progress.clear();
      std::printf("%s: FAILED\n", in.c_str());
      std::fflush(stdout);
      print_error(e.what());
      rc = kExitFailed;
    }
    std::fflush(stdout);
    progress.add_bytes(size_or_zero(in));
    progress.file_done();
  }
  return rc;
}

void add_flac_commands(CLI::App& app, Action& action) {
  auto* flac = app.add_subcommand("flac", "FLAC decoding");
  flac->require_subcommand(1);

  auto info = std::make_shared<InfoArgs>();
  auto* ci = flac->add_subcommand("info", "Print STREAMINFO, the metadata blocks and warnings");
  ci->add_option("files", info->inputs, "FLAC files")->required();
  ci->callback([&action, info] { action = [info] { return run_info(*info); }; });

  auto dec = std::make_shared<DecodeArgs>();
  auto* cd = flac->add_subcommand("decode", "Decode FLAC files to WAV or raw PCM");
  cd->add_option("files", dec->inputs, "FLAC files, or directories searched for *.flac");
  cd->add_option("--list", dec->list, "A file naming one input per line ('#' comments)");
  cd->add_option("--shard", dec->shard,
                 "I/N: decode only inputs I, I+N, I+2N, ... (0-based) of the sorted list, "
                 "to split a corpus over the tasks of a cluster job");
  cd->add_option("-o,--output", dec->output,
                 "Output file ('-': stdout), or directory (required with several inputs); "
                 "default: the input with a .wav/.raw extension");
  cd->add_option("--backend", dec->backend, "cpu, cpu-parallel, cuda or auto")
      ->check(CLI::IsMember(kBackendNames))
      ->capture_default_str();
  cd->add_option("--format", dec->format,
                 "Output container: wav, raw, or npy (NumPy array of shape (samples, channels))")
      ->check(CLI::IsMember({"wav", "raw", "npy"}))
      ->capture_default_str();
  cd->add_option("--sample-format", dec->sample_format,
                 "s16, s32 or f32 (default: the stream's own bit depth)")
      ->check(CLI::IsMember({"s16", "s32", "f32"}));
  cd->add_option("--device", dec->device, "CUDA device index")->capture_default_str();
  cd->add_option("--devices", dec->devices,
                 "CUDA devices to decode on at once: all, or indices like 0,1 (a file is split "
                 "by bytes at frame starts, a batch shared out by bytes)");
  cd->add_option("--skip", dec->skip,
                 "Start at this sample (digits) or time (mm:ss.ss), as `flac -d --skip`; found "
                 "through the SEEKTABLE or a frame search near it, not by decoding from the start");
  cd->add_option("--until", dec->until, "Stop before this sample or time, as `flac -d --until`");
  cd->add_flag("--no-md5", dec->no_md5, "Skip the MD5 check");
  cd->add_flag("--stop-on-damage", dec->stop_on_damage,
               "Fail at the first damaged frame instead of silencing it and going on");
  cd->add_flag("-f,--force", dec->force, "Overwrite existing output files");
  cd->add_flag("-q,--quiet", dec->quiet, "Print only problems");
  cd->callback([&action, dec] { action = [dec] { return run_decode(*dec); }; });

  auto test = std::make_shared<TestArgs>();
  auto* ct = flac->add_subcommand("test", "Decode and verify (CRCs, MD5) without writing output");
  ct->add_option("files", test->inputs, "FLAC files")->required();
  ct->add_option("--backend", test->backend, "cpu, cpu-parallel, cuda or auto")
      ->check(CLI::IsMember(kBackendNames))
      ->capture_default_str();
  ct->add_option("--device", test->device, "CUDA device index")->capture_default_str();
  ct->callback([&action, test] { action = [test] { return run_test(*test); }; });
}

const CommandRegistration registration{10, add_flac_commands};
}  // namespace

}  // namespace sigpu::cli
