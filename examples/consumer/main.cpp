// Uses the installed library the way a program would: the version and backends, then a FLAC
// file decoded on the cpu backend with its MD5 checked.
//   consumer song.flac
#include <exception>
#include <iostream>

#include <sigpu/core.hpp>
#include <sigpu/flac.hpp>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: " << argv[0] << " file.flac\n";
    return 2;
  }
  std::cout << "sigpu " << sigpu::version() << ", CUDA backend "
            << (sigpu::cuda_compiled() ? "compiled" : "not compiled") << ", "
            << sigpu::cuda_devices().size() << " device(s), automatic backend: "
            << sigpu::to_string(sigpu::resolve(sigpu::Backend::automatic)) << "\n";
  try {
    const auto out = sigpu::flac::decode_file(argv[1], {.backend = sigpu::Backend::cpu});
    const bool md5_ok = out.report.md5 == sigpu::flac::Md5Check::match;
    std::cout << argv[1] << ": " << out.pcm.samples << " samples x " << out.pcm.channels
              << " channels, " << out.report.frames << " frames, MD5 "
              << (md5_ok ? "matches" : "does not match") << "\n";
    return out.report.ok() && md5_ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return 1;
  }
}
