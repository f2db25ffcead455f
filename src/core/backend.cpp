#include <sigpu/core.hpp>

namespace sigpu {

std::string_view to_string(Backend b) {
  switch (b) {
    case Backend::cpu:
      return "cpu";
    case Backend::cpu_parallel:
      return "cpu-parallel";
    case Backend::cuda:
      return "cuda";
    case Backend::automatic:
      return "auto";
  }
  return "?";
}

Backend parse_backend(std::string_view name) {
  if (name == "cpu") return Backend::cpu;
  if (name == "cpu-parallel") return Backend::cpu_parallel;
  if (name == "cuda") return Backend::cuda;
  if (name == "auto") return Backend::automatic;
  throw Error("unknown backend '" + std::string(name) +
              "' (expected cpu, cpu-parallel, cuda or auto)");
}

Backend resolve(Backend b) {
  if (b != Backend::automatic) return b;
  return cuda_devices().empty() ? Backend::cpu_parallel : Backend::cuda;
}

std::string_view version() {
  return SIGPU_VERSION;
}

}  // namespace sigpu
