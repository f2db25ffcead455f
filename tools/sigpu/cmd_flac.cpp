// `sigpu flac info|decode|test`. Each file is handled on its own: a bad file is reported and
// the others still run; the exit code says whether any failed.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include <sigpu/flac.hpp>
#include <sigpu/io.hpp>

#include "commands.hpp"
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
  OutputArgs out;
  std::string backend = "auto";
  std::string sample_format;  ///< empty: the coded width, as `flac -d` writes it
  int device = 0;
  std::string devices;  ///< "all" or "0,1": several GPUs at once
  bool no_md5 = false, stop_on_damage = false, quiet = false;
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

std::string hex(std::span<const std::uint8_t> bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s;
  for (auto b : bytes) s += {kDigits[b >> 4], kDigits[b & 15]};
  return s;
}

io::PcmView view_of(const flac::Pcm& p) {
  const io::SampleType type = p.format == flac::SampleFormat::s16   ? io::SampleType::s16
                              : p.format == flac::SampleFormat::s32 ? io::SampleType::s32
                              : p.format == flac::SampleFormat::f32 ? io::SampleType::f32
                                                                    : io::SampleType::raw32;
  return {type,
          p.layout == flac::Layout::planar,
          p.sample_rate,
          p.channels,
          p.bits_per_sample,
          p.samples,
          p.bytes.data()};
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

/// Metadata comes first and is small: a stream is read only as far as the first 16 MB.
flac::Stream parse_file(const std::string& path) {
  io::Input in(path);
  if (in.seekable()) return flac::parse_stream(in.map());
  std::vector<std::uint8_t> prefix(16 << 20);
  prefix.resize(in.read(prefix));
  return flac::parse_stream(prefix);
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
    std::printf("  MD5               %s\n", i.md5_set() ? hex(i.md5).c_str() : "not set");
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
      rc = std::max(rc, report_error(e, a.inputs[n]));
    }
  }
  return rc;
}

// ---- decode --------------------------------------------------------------------------------

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

/// --shard I/N.
std::pair<std::uint64_t, std::uint64_t> parse_shard(const std::string& spec) {
  std::uint64_t index = 0, count = 0;
  char slash = 0, extra = 0;
  std::istringstream in(spec);
  if (!(in >> index >> slash >> count) || slash != '/' || count == 0 || index >= count ||
      (in >> extra))
    throw UsageError("--shard wants I/N with 0 <= I < N, e.g. 3/16, or slurm; got '" + spec + "'");
  return {index, count};
}

/// A Slurm array variable as a number; nullopt when unset. Anything but digits is a usage error.
std::optional<std::uint64_t> slurm_variable(const char* name) {
  const char* value = std::getenv(name);
  if (!value) return std::nullopt;
  const std::string_view v(value);
  std::uint64_t n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc{} || end != v.data() + v.size())
    throw UsageError("--shard slurm: " + std::string(name) + "='" + std::string(v) +
                     "' is not a number");
  return n;
}

/// --shard slurm: this task's place in an sbatch job array (--array=MIN-MAX[:STEP]), from the
/// variables Slurm sets in each task. The index is relative to MIN, so an array of 1-16 splits
/// like 0-15; a list of task ids (--array=1,5,9) has no such place and is refused.
std::pair<std::uint64_t, std::uint64_t> slurm_shard() {
  const auto id = slurm_variable("SLURM_ARRAY_TASK_ID");
  if (!id)
    throw UsageError(
        "--shard slurm needs SLURM_ARRAY_TASK_ID (set in the tasks of an sbatch --array job)");
  const auto min = slurm_variable("SLURM_ARRAY_TASK_MIN"),
             max = slurm_variable("SLURM_ARRAY_TASK_MAX"),
             step = slurm_variable("SLURM_ARRAY_TASK_STEP"),
             given = slurm_variable("SLURM_ARRAY_TASK_COUNT");
  const std::uint64_t first = min.value_or(0), stride = step.value_or(1);
  std::optional<std::uint64_t> spanned;
  if (max) {
    if (*max < first || stride == 0)
      throw UsageError("--shard slurm: SLURM_ARRAY_TASK_MIN/MAX/STEP do not describe a range");
    spanned = (*max - first) / stride + 1;
  }
  if (!given && !spanned)
    throw UsageError("--shard slurm needs SLURM_ARRAY_TASK_COUNT or SLURM_ARRAY_TASK_MIN and _MAX");
  const std::uint64_t count = given.value_or(spanned.value_or(0));
  if (count == 0 || (spanned && given && *spanned != *given) || *id < first ||
      (*id - first) % stride != 0 || (*id - first) / stride >= count)
    throw UsageError("--shard slurm: task " + std::to_string(*id) + " is not one of a range of " +
                     std::to_string(count) +
                     " tasks (SLURM_ARRAY_TASK_MIN/MAX/STEP/COUNT disagree; a list of task ids "
                     "needs --shard I/N)");
  return {(*id - first) / stride, count};
}

/// The inputs as given, directories searched (recursively, sorted) for *.flac, the list file's
/// lines appended, then the shard taken: the same order on every machine of a cluster job.
std::vector<Input> expand_inputs(const DecodeArgs& a, bool* several) {
  std::vector<Input> all;
  *several = a.inputs.size() > 1 || !a.list.empty();
  for (const auto& in : a.inputs) {
    if (in == "-" || !fs::is_directory(in)) {
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
  const auto [index, count] = a.shard == "slurm" ? slurm_shard() : parse_shard(a.shard);
  std::vector<Input> mine;
  for (std::size_t k = index; k < all.size(); k += count) mine.push_back(all[k]);
  return mine;
}

/// Where each input's PCM goes and in which format. One input: -o names a file, a folder or
/// stdout (default: the input's name with the format's extension). Several: -o names a folder
/// that mirrors the inputs' names.
struct Destination {
  std::string path;
  io::PcmFormat format;
};

std::vector<Destination> destinations(const DecodeArgs& a, const std::vector<Input>& inputs,
                                      bool several) {
  std::vector<Destination> out;
  const io::PcmFormat named = io::pcm_format(a.out.format.empty() ? "wav" : a.out.format, "-");
  auto under = [&](const std::string& dir, const fs::path& name) {
    return (fs::path(dir) / fs::path(name).replace_extension(io::extension(named))).string();
  };
  if (!several) {
    const auto& in = inputs.at(0);
    if (a.out.output.empty())
      out.push_back({io::default_output(in.path, io::extension(named)), named});
    else if (a.out.output != "-" && fs::is_directory(a.out.output))
      out.push_back({under(a.out.output, in.name), named});
    else
      out.push_back({a.out.output, io::pcm_format(a.out.format, a.out.output)});
    return out;
  }
  if (a.out.output.empty() || a.out.output == "-")
    throw UsageError("several inputs (or a directory, or a list) need -o OUTDIR");
  if (fs::exists(a.out.output) && !fs::is_directory(a.out.output))
    throw UsageError("-o '" + a.out.output + "' is not a directory");
  std::map<std::string, std::string> seen;
  for (const auto& in : inputs) {
    out.push_back({under(a.out.output, in.name), named});
    if (auto [it, fresh] = seen.emplace(out.back().path, in.path); !fresh)
      throw UsageError("inputs '" + it->second + "' and '" + in.path + "' would both write '" +
                       out.back().path + "'");
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
void write_output(io::Output& out, io::PcmFormat format, const flac::Pcm& pcm, Progress& progress,
                  std::uint64_t input_bytes) {
  const io::PcmView view = view_of(pcm);
  io::PcmWriter w(out, format, view, pcm.samples);
  constexpr std::uint64_t kStep = 1 << 18;
  std::uint64_t credited = 0;
  for (std::uint64_t at = 0; at < pcm.samples; at += kStep) {
    const std::uint64_t n = std::min(kStep, pcm.samples - at);
    w.append(view, at, n);
    const auto due = std::uint64_t(double(input_bytes) * double(at + n) / double(pcm.samples));
    progress.add_bytes(due - std::min(due, credited));
    credited = std::max(credited, due);
  }
  w.finish();
  progress.add_bytes(input_bytes - std::min(input_bytes, credited));
}

/// A decode that found no audio in a non-empty input did not find FLAC.
void check_found_audio(const std::string& path, std::uint64_t size, const flac::Decoded& d) {
  if (d.report.frames == 0 && d.stream.info.total_samples != 0)
    throw InputError(path + ": no FLAC frame found in " + std::to_string(size) + " bytes");
}

/// Prints what went wrong (or, unless quiet, what was written); returns the file's exit code.
int report_decode(const std::string& in, const std::string& out, const flac::Decoded& d,
                  double seconds, bool quiet) {
  for (const auto& w : d.stream.warnings) print_error(in + ": warning: " + w);
  for (const auto& w : d.report.warnings) print_error(in + ": warning: " + w);
  for (const auto& dmg : d.report.damage) print_error(in + ": " + dmg.message());
  const auto silent = std::count_if(d.report.damage.begin(), d.report.damage.end(),
                                    [](const flac::Damage& dmg) { return dmg.samples > 0; });
  if (silent)
    print_error(in + ": " + std::to_string(silent) +
                " damaged frame(s); their samples are silence in '" + out + "'");
  if (d.report.md5 == flac::Md5Check::mismatch) print_error(in + ": " + md5_text(d.report));
  if (!quiet && d.report.ok()) {
    const auto& p = d.pcm;
    std::fprintf(stderr, "%s -> %s  (%s, %u Hz, %u ch, %u bit; %s; %s in %.2f s)\n", in.c_str(),
                 out.c_str(), duration(p.samples, p.sample_rate).c_str(), p.sample_rate, p.channels,
                 p.bits_per_sample, md5_text(d.report).c_str(),
                 std::string(to_string(d.report.backend)).c_str(), seconds);
  }
  return d.report.ok() ? kExitOk : kExitDamaged;
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

constexpr std::size_t kReadBytes = 4 << 20;

/// The stream's sample count from its STREAMINFO, read from the first bytes (0 when unknown),
/// so that a WAV header on a pipe can be final from the start.
std::uint64_t announced_samples(std::span<const std::uint8_t> first_bytes) {
  try {
    return flac::parse_stream(first_bytes).info.total_samples;
  } catch (const Error&) {
    return 0;  // the metadata runs past these bytes, or is bad: the decoder will say so
  }
}

/// Feeds `in` to `dec` in pieces; `first` holds the bytes already read.
void feed(io::Input& in, flac::StreamDecoder& dec, std::vector<std::uint8_t>& buf,
          std::size_t first, Progress& progress) {
  for (std::size_t n = first; n > 0; n = in.read(buf)) {
    dec.push({buf.data(), n});
    progress.add_bytes(n);
  }
}

/// Decodes one whole input as it is read and writes the PCM as it comes: memory does not grow
/// with the stream's length. The output exists (under a temporary name) from the start.
flac::Decoded decode_streaming(io::Input& in, io::Output& out, io::PcmFormat format,
                               const flac::DecodeOptions& opt, Progress& progress) {
  std::vector<std::uint8_t> buf(kReadBytes);
  const std::size_t first = in.read(buf);
  const std::uint64_t expected = announced_samples({buf.data(), first});
  std::optional<io::PcmWriter> writer;
  flac::StreamDecoder dec(opt, [&](const flac::Pcm& block) {
    if (!writer) writer.emplace(out, format, view_of(block), expected);
    writer->append(view_of(block));
  });
  feed(in, dec, buf, first, progress);
  flac::Decoded d = dec.finish();
  check_found_audio(in.name(), dec.bytes_pushed(), d);
  if (!writer) writer.emplace(out, format, view_of(d.pcm), 0);
  writer->finish();
  return d;
}

/// The samples --skip/--until select in a file, found without decoding the rest.
flac::Decoded decode_range(io::Input& in, const DecodeArgs& a, const flac::DecodeOptions& opt) {
  if (!in.seekable()) throw UsageError("--skip and --until need a file, not " + in.name());
  const std::span<const std::uint8_t> bytes = in.map();  // the range's pages alone are read
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
    return a.shard.empty() ? kExitInput : kExitOk;
  }
  const auto outputs = destinations(a, inputs, several);
  if (several) fs::create_directories(a.out.output);
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

  std::uint64_t total = 0;
  for (const auto& in : inputs) total += size_or_zero(in.path);
  Progress progress(total, inputs.size());
  int rc = kExitOk;
  auto fail = [&](const std::exception& e, const std::string& context) {
    progress.clear();
    rc = std::max(rc, report_error(e, context));
  };
  auto write = [&](std::size_t n, io::Input& in, const flac::Decoded& decoded, double seconds) {
    check_found_audio(in.name(), in.size(), decoded);
    const auto& dest = outputs[n];
    if (several) fs::create_directories(fs::path(dest.path).parent_path());
    io::Output out(dest.path, {.force = a.out.force, .inputs = {&in}});
    write_output(out, dest.format, decoded.pcm, progress, in.size());
    progress.clear();
    rc = std::max(rc, report_decode(in.name(), out.name(), decoded, seconds, a.quiet));
  };
  // Refused before any decoding: an output that exists (without --force).
  auto exists = [&](std::size_t n) {
    if (a.out.force || !fs::is_regular_file(outputs[n].path)) return false;
    fail(UsageError("'" + outputs[n].path + "' exists (use --force to overwrite it)"),
         inputs[n].path);
    progress.file_done();
    return true;
  };

  const bool range = !a.skip.empty() || !a.until.empty();
  // The GPU's batches pay off for several files, and several GPUs split a whole file; anything
  // else is decoded as it is read.
  if (opt.backend != Backend::cuda || range || (!several && opt.devices.empty())) {
    for (std::size_t n = 0; n < inputs.size(); ++n) {
      progress.set_current(inputs[n].path);
      if (exists(n)) continue;
      try {
        io::Input in(inputs[n].path);
        const auto start = std::chrono::steady_clock::now();
        if (range) {
          write(n, in, decode_range(in, a, opt), seconds_since(start));
        } else {
          const auto& dest = outputs[n];
          if (several) fs::create_directories(fs::path(dest.path).parent_path());
          io::Output out(dest.path, {.force = a.out.force, .inputs = {&in}});
          const auto d = decode_streaming(in, out, dest.format, opt, progress);
          progress.clear();
          rc = std::max(rc, report_decode(in.name(), out.name(), d, seconds_since(start), a.quiet));
        }
      } catch (const std::exception& e) {
        fail(e, inputs[n].path);
      }
      progress.file_done();
    }
    return rc;
  }

  // Several files on the GPU, or one file over several GPUs: decoded whole, in batches.
  std::vector<std::size_t> todo;
  std::vector<std::string> paths;
  for (std::size_t n = 0; n < inputs.size(); ++n)
    if (!exists(n)) todo.push_back(n), paths.push_back(inputs[n].path);
  auto start = std::chrono::steady_clock::now();
  flac::decode_files(paths, opt, [&](std::size_t k, flac::BatchResult& result) {
    const std::size_t i = todo[k];
    progress.set_current(inputs[i].path);
    try {
      if (!result.error.empty()) throw InputError(inputs[i].path + ": " + result.error);
      io::Input in(inputs[i].path);
      write(i, in, result.decoded, seconds_since(start));
    } catch (const std::exception& e) {
      fail(e, inputs[i].path);
    }
    progress.file_done();
    start = std::chrono::steady_clock::now();
  });
  return rc;
}

// ---- test ----------------------------------------------------------------------------------

int run_test(const TestArgs& a) {
  flac::DecodeOptions opt;
  opt.backend = parse_backend(a.backend);
  opt.device = a.device;
  opt.verify_md5 = true;
  std::uint64_t total = 0;
  for (const auto& in : a.inputs) total += size_or_zero(in);
  Progress progress(total, a.inputs.size());
  int rc = kExitOk;
  for (const auto& path : a.inputs) {
    progress.set_current(path);
    try {
      io::Input in(path);
      std::vector<std::uint8_t> buf(kReadBytes);
      flac::StreamDecoder dec(opt, [](const flac::Pcm&) {});
      feed(in, dec, buf, in.read(buf), progress);
      const auto d = dec.finish();
      check_found_audio(in.name(), dec.bytes_pushed(), d);
      progress.clear();
      const auto& r = d.report;
      std::printf("%s: %s (%s, %llu frames)\n", in.name().c_str(), r.ok() ? "OK" : "FAILED",
                  md5_text(r).c_str(), static_cast<unsigned long long>(r.frames));
      for (const auto& dmg : r.damage) std::printf("  %s\n", dmg.message().c_str());
      for (const auto& w : r.warnings) std::printf("  warning: %s\n", w.c_str());
      if (!r.ok()) rc = std::max<int>(rc, kExitDamaged);
    } catch (const std::exception& e) {
      progress.clear();
      std::printf("%s: FAILED\n", path.c_str());
      std::fflush(stdout);
      rc = std::max(rc, report_error(e, path));
    }
    std::fflush(stdout);
    progress.file_done();
  }
  return rc;
}

void add_flac_commands(CLI::App& app, Action& action) {
  auto* flac = app.add_subcommand("flac", "FLAC decoding");
  flac->require_subcommand(1);

  auto info = std::make_shared<InfoArgs>();
  auto* ci = flac->add_subcommand("info", "Print STREAMINFO, the metadata blocks and warnings");
  ci->add_option("files", info->inputs, "FLAC files (- for stdin)")->required();
  ci->callback([&action, info] { action = [info] { return run_info(*info); }; });

  auto dec = std::make_shared<DecodeArgs>();
  auto* cd = flac->add_subcommand("decode", "Decode FLAC files to WAV or raw PCM");
  cd->add_option("files", dec->inputs,
                 "FLAC files (- for stdin), or directories searched for *.flac");
  cd->add_option("--list", dec->list, "A file naming one input per line ('#' comments)");
  cd->add_option("--shard", dec->shard,
                 "I/N: decode only inputs I, I+N, I+2N, ... (0-based) of the sorted list, "
                 "to split a corpus over the tasks of a cluster job; slurm: I and N from "
                 "the Slurm job array's variables");
  add_output_options(cd, dec->out, "wav, raw or npy (a NumPy array of shape (samples, channels))",
                     "the input's name with the format's extension; with several inputs -o "
                     "names a folder");
  cd->add_option("--backend", dec->backend, "cpu, cpu-parallel, cuda or auto")
      ->check(CLI::IsMember(kBackendNames))
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
  cd->add_flag("-q,--quiet", dec->quiet, "Print only problems");
  cd->callback([&action, dec] { action = [dec] { return run_decode(*dec); }; });

  auto test = std::make_shared<TestArgs>();
  auto* ct = flac->add_subcommand("test", "Decode and verify (CRCs, MD5) without writing output");
  ct->add_option("files", test->inputs, "FLAC files (- for stdin)")->required();
  ct->add_option("--backend", test->backend, "cpu, cpu-parallel, cuda or auto")
      ->check(CLI::IsMember(kBackendNames))
      ->capture_default_str();
  ct->add_option("--device", test->device, "CUDA device index")->capture_default_str();
  ct->callback([&action, test] { action = [test] { return run_test(*test); }; });
}

const CommandRegistration registration{10, add_flac_commands};
}  // namespace

}  // namespace sigpu::cli
