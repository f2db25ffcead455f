#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <utility>

#include <sigpu/io.hpp>

namespace sigpu::io {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

/// stdout's kin: an existing device or pipe (/dev/null, a FIFO), which has no extension to tell.
bool is_stream(std::string_view path) {
  std::error_code ec;
  const auto st = std::filesystem::status(std::string(path), ec);
  return !ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st) &&
         !std::filesystem::is_directory(st);
}

/// Finds the format named by `format` (a name) or by `path`'s extension; both given, they must
/// agree, except that an explicit format wins over an extension it has no entry for.
template <typename F, std::size_t N>
F choose(std::string_view format, std::string_view path, F stdout_default,
         const std::array<std::pair<const char*, F>, N>& names, const char* kind) {
  auto list = [&] {
    std::string s;
    for (const auto& [n, f] : names) s += std::string(s.empty() ? "" : ", ") + n;
    return s;
  };
  auto by_name = [&](const std::string& name) -> const F* {
    for (const auto& [n, f] : names)
      if (name == n) return &f;
    return nullptr;
  };
  const std::string ext =
      path == "-" ? "" : lower(std::filesystem::path(path).extension().string());
  const F* from_ext = ext.size() > 1 ? by_name(ext.substr(1)) : nullptr;
  if (!format.empty()) {
    const F* f = by_name(lower(format));
    if (!f)
      throw UsageError("unknown " + std::string(kind) + " format '" + std::string(format) +
                       "' (known: " + list() + ")");
    if (from_ext && *from_ext != *f)
      throw UsageError("--format " + std::string(format) + " but the output '" + std::string(path) +
                       "' is named " + ext + "; make them agree");
    return *f;
  }
  if (from_ext) return *from_ext;
  if (path == "-" || is_stream(path)) return stdout_default;
  throw UsageError("cannot tell the " + std::string(kind) + " format of '" + std::string(path) +
                   "' from its extension (known: " + list() + "); name it with --format");
}

constexpr std::array<std::pair<const char*, PcmFormat>, 3> kPcm{
    {{"wav", PcmFormat::wav}, {"raw", PcmFormat::raw}, {"npy", PcmFormat::npy}}};
constexpr std::array<std::pair<const char*, PictureFormat>, 5> kPicture{
    {{"yuv", PictureFormat::yuv},
     {"raw", PictureFormat::yuv},
     {"y4m", PictureFormat::y4m},
     {"png", PictureFormat::png},
     {"npy", PictureFormat::npy}}};

}  // namespace

PcmFormat pcm_format(std::string_view format, std::string_view path) {
  return choose(format, path, PcmFormat::wav, kPcm, "PCM");
}

PictureFormat picture_format(std::string_view format, std::string_view path) {
  return choose(format, path, PictureFormat::y4m, kPicture, "picture");
}

std::string_view extension(PcmFormat f) {
  return f == PcmFormat::raw ? ".raw" : f == PcmFormat::npy ? ".npy" : ".wav";
}

std::string_view extension(PictureFormat f) {
  switch (f) {
    case PictureFormat::yuv:
      return ".yuv";
    case PictureFormat::y4m:
      return ".y4m";
    case PictureFormat::png:
      return ".png";
    case PictureFormat::npy:
      return ".npy";
  }
  return ".yuv";
}

std::string default_output(const std::string& input, std::string_view ext) {
  if (input == "-") throw UsageError("reading stdin, name the output with -o (or -o - for stdout)");
  return std::filesystem::path(input).replace_extension(ext).string();
}

}  // namespace sigpu::io
