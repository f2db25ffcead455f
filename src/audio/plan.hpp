// What an Engine runs: every effect's jobs, grouped by (level, kind) so that one group is one
// batched kernel (CUDA) or one slice of a parallel loop (CPU), and each kind's data (jobs and
// the parameters the effects write). Offsets count floats in one arena: the graph inputs first,
// then each node's output channels, `period` floats per channel.
#pragma once

#include <cstdint>
#include <tuple>
#include <vector>

#include "audio/effects/registry.hpp"
#include "audio/memory.hpp"

namespace sigpu::audio {

struct Group {
  Kind kind{};
  int level = 0;
  std::uint32_t begin = 0, end = 0;  ///< jobs [begin, end) of the kind's job array
  std::vector<int> deps;             ///< groups that must finish first
  bool reads_input = false;          ///< reads graph input channels
};

struct Plan {
  int period = 0;
  int inputs = 0;
  std::uint32_t arena = 0;            ///< floats
  HostVector<std::uint32_t> outputs;  ///< arena offset of each graph output channel
  Kinds::Data kinds;                  ///< per kind, in Kinds' order
  std::vector<Group> groups;          ///< in an order that respects deps
  int levels = 0;
  /// Measure every node output channel each period (Runner::meters()).
  bool meters = false;

  /// Node output channels: arena channels [inputs, inputs + bus_channels()).
  std::uint32_t bus_channels() const { return arena / period - inputs; }

  template <typename K>
  typename K::Data& data() {
    return std::get<kind_of<K>()>(kinds);
  }
  std::uint32_t jobs(Kind k) const {
    std::uint32_t n = 0;
    with_kind(k, [&](auto i) { n = std::get<decltype(i)::value>(kinds).size(); });
    return n;
  }
  /// After a period: every ramp has reached its target.
  void settle() {
    std::apply([](auto&... d) { (d.settle(), ...); }, kinds);
  }
};

}  // namespace sigpu::audio
