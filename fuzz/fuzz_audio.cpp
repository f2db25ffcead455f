// libFuzzer target: a graph file (JSON) as untrusted bytes. Bad input must give sigpu::Error,
// never a crash, a hang or a huge allocation; a graph that loads must also configure or refuse
// cleanly at 48 kHz (Nyquist and delay checks).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include <sigpu/audio.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const auto graph = sigpu::audio::Graph::parse(text);
    if (graph.outputs() <= 0 || graph.inputs() < 0) {
      std::fprintf(stderr, "fuzz invariant broken: a graph loaded without outputs\n");
      std::abort();
    }
    sigpu::audio::Engine engine(graph, {.backend = sigpu::Backend::cpu, .period = 32});
  } catch (const sigpu::Error&) {
  }
  return 0;
}
