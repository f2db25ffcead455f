// Where tests keep what real encoders made for them, so a second run does not encode again.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>

namespace sigpu::test {

/// ${SIGPU_CACHE:-$HOME/.cache/sigpu}/name (the folder the scripts use too); a folder under the
/// system's temporary directory when neither variable is set.
inline std::filesystem::path cache_dir(const std::string& name) {
  std::filesystem::path base;
  if (const char* c = std::getenv("SIGPU_CACHE"); c && *c)
    base = c;
  else if (const char* h = std::getenv("HOME"); h && *h)
    base = std::filesystem::path(h) / ".cache/sigpu";
  else
    base = std::filesystem::temp_directory_path() / "sigpu-cache";
  return base / name;
}

}  // namespace sigpu::test
