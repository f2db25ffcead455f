// Runs shell commands for the end-to-end tests, which drive the real `sigpu` binary and the
// reference tools (flac, ffmpeg, sox) as a user would.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace sigpu::test {

struct CommandResult {
  int code = -1;       ///< exit status; -1 when the command did not exit normally
  std::string output;  ///< stdout and stderr together
};

inline CommandResult run_command(const std::string& command) {
  CommandResult r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) r.output.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

/// s in single quotes, for paths in commands (test paths hold no single quotes).
inline std::string quoted(const std::string& s) {
  return "'" + s + "'";
}

/// The CLI this build made.
// The build's CLI; on the GPU machine scripts/gpu-run exports the unpacked bundle's folder.
inline const std::string kSigpuBinary =
    std::getenv("SIGPU_BINARY_DIR") ? std::string(std::getenv("SIGPU_BINARY_DIR")) + "/bin/sigpu"
                                    : std::string(SIGPU_BINARY_DIR "/bin/sigpu");

inline CommandResult run_sigpu(const std::string& args) {
  return run_command(quoted(kSigpuBinary) + " " + args);
}

}  // namespace sigpu::test
