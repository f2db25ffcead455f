// `sigpu info`: what this build can do on this machine, and the library versions it runs
// with, so a bug report or a benchmark can say exactly what produced it.
#include <cstdio>
#include <iostream>
#include <string>
#include <thread>

#include "commands.hpp"

#ifdef SIGPU_HAVE_LIBFLAC
#include <FLAC/format.h>
#endif
#if __has_include(<openssl/crypto.h>)
#include <openssl/crypto.h>
#define SIGPU_HAVE_OPENSSL_HEADER 1
#endif
#ifdef SIGPU_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace sigpu::cli {
namespace {

#ifdef SIGPU_HAVE_CUDA
std::string cuda_version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}
#endif

int run_info() {
  const auto devices = cuda_devices();
  std::cout << "sigpu " << version() << "\n\nbackends:\n";
  std::cout << "  cpu            serial reference\n";
  std::cout << "  cpu-parallel   " << std::thread::hardware_concurrency() << " hardware threads\n";
  if (!cuda_compiled())
    std::cout << "  cuda           not compiled in\n";
  else if (devices.empty())
    std::cout << "  cuda           compiled, no device visible\n";
  else
    std::cout << "  cuda           " << devices.size() << " device(s)\n";
  std::cout << "  auto           resolves to " << to_string(resolve(Backend::automatic)) << "\n";

  if (!devices.empty()) {
    std::cout << "\nCUDA devices:\n";
    for (const auto& d : devices) {
      char mem[32];
      std::snprintf(mem, sizeof mem, "%.1f GiB", double(d.memory_bytes) / (1u << 30));
      std::cout << "  #" << d.index << "  " << d.name << "  " << d.sm_count << " SMs, " << mem
                << ", compute capability " << d.compute_major << "." << d.compute_minor << "\n";
    }
  }

  std::cout << "\nlibraries:\n";
#ifdef SIGPU_HAVE_LIBFLAC
  std::cout << "  libFLAC        " << FLAC__VERSION_STRING << "\n";
#else
  std::cout << "  libFLAC        not linked\n";
#endif
#ifdef SIGPU_HAVE_OPENSSL_HEADER
  std::cout << "  OpenSSL        " << OpenSSL_version(OPENSSL_VERSION) << "\n";
#endif
#ifdef SIGPU_HAVE_CUDA
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  std::cout << "  CUDA runtime   " << cuda_version_string(runtime) << "\n";
  if (cudaDriverGetVersion(&driver) == cudaSuccess && driver > 0)
    std::cout << "  CUDA driver    " << cuda_version_string(driver) << "\n";
  else
    std::cout << "  CUDA driver    none\n";
#endif
  std::cout << "  CLI11          " << CLI11_VERSION << "\n";
  return kExitOk;
}

void add_info_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("info", "Show version, backends, CUDA devices and libraries");
  cmd->callback([&action] { action = run_info; });
}

const CommandRegistration registration{0, add_info_command};
}  // namespace

}  // namespace sigpu::cli
