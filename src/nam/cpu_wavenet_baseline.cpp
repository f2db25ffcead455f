// The WaveNet layer pass for any CPU (SSE2 vectors on x86-64), and the run-time choice.
#include <cstdlib>
#include <cstring>

#define SIGPU_NAM_ISA baseline
#define SIGPU_NAM_VEC 4
#include "nam/cpu_wavenet_layer.hpp"

namespace sigpu::nam {

LayerFn baseline::pick(int channels, int zc) {
  return pick_layer(channels, zc);
}

LayerFn layer_function(int channels, int zc) {
  const char* force = std::getenv("SIGPU_NAM_CPU");
  if (!(force && std::strcmp(force, "baseline") == 0))
    if (LayerFn f = avx2::pick(channels, zc)) return f;
  return baseline::pick(channels, zc);
}

}  // namespace sigpu::nam
