#include "audio/console.hpp"

#include <sigpu/audio.hpp>

namespace sigpu::audio {

std::string_view console_json() {
  return R"({
  "name": "three-stage console: N inputs, N/2 buses, N/4 matrices",
  "variables": {"N": 64},
  "inputs": "N",
  "nodes": [
    {"id": "input_gate", "type": "gate", "input": "in",
     "params": {"threshold_db": -60, "attack_ms": 0.5, "hold_ms": 20, "release_ms": 150}},
    {"id": "input_comp", "type": "compressor", "input": "input_gate",
     "params": {"threshold_db": -18, "ratio": 3, "knee_db": 6, "attack_ms": 5,
                "release_ms": 120, "makeup_db": 3}},
    {"id": "input_eq", "type": "eq", "input": "input_comp",
     "params": {"bands": [
       {"type": "highpass", "freq": 80, "q": 0.707},
       {"type": "lowshelf", "freq": 200, "gain_db": -2, "q": 0.707},
       {"type": "peak", "freq": 1000, "gain_db": 2, "q": 1.0},
       {"type": "peak", "freq": 4000, "gain_db": -3, "q": 2.0},
       {"type": "highshelf", "freq": 10000, "gain_db": 1.5, "q": 0.707}]}},
    {"id": "bus_mix", "type": "mixer", "input": "input_eq",
     "params": {"outputs": "N/2", "gain_db": -3}},
    {"id": "bus_comp", "type": "compressor", "input": "bus_mix",
     "params": {"threshold_db": -12, "ratio": 2, "knee_db": 6, "attack_ms": 10,
                "release_ms": 200}},
    {"id": "bus_eq", "type": "eq", "input": "bus_comp",
     "params": {"bands": [
       {"type": "highpass", "freq": 40, "q": 0.707},
       {"type": "lowshelf", "freq": 120, "gain_db": 1, "q": 0.707},
       {"type": "peak", "freq": 500, "gain_db": -1, "q": 1.4},
       {"type": "peak", "freq": 3000, "gain_db": 1, "q": 1.0},
       {"type": "highshelf", "freq": 12000, "gain_db": 1, "q": 0.707}]}},
    {"id": "matrix_mix", "type": "mixer", "input": "bus_eq",
     "params": {"outputs": "N/4", "gain_db": -3}},
    {"id": "matrix_comp", "type": "compressor", "input": "matrix_mix",
     "params": {"threshold_db": -6, "ratio": 4, "knee_db": 3, "attack_ms": 2,
                "release_ms": 80}},
    {"id": "matrix_eq", "type": "eq", "input": "matrix_comp",
     "params": {"bands": [
       {"type": "highpass", "freq": 30, "q": 0.707},
       {"type": "lowshelf", "freq": 100, "gain_db": 0.5, "q": 0.707},
       {"type": "peak", "freq": 800, "gain_db": -0.5, "q": 1.0},
       {"type": "peak", "freq": 5000, "gain_db": 0.5, "q": 1.0},
       {"type": "lowpass", "freq": 18000, "q": 0.707}]}}
  ],
  "outputs": "matrix_eq"
}
)";
}

Graph console_graph(int N) {
  if (N < 4 || N % 4 != 0) throw Error("console: N must be a positive multiple of 4");
  return Graph::parse(console_json(), {{"N", N}});
}

}  // namespace sigpu::audio
