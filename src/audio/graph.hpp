// The parsed graph behind sigpu::audio::Graph: nodes in topological order with their routing
// resolved to (node, channel) pairs and their effects parsed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <sigpu/audio.hpp>

#include "audio/effect.hpp"

namespace sigpu::audio {

/// One channel of a node's output, or of the graph input (node == kGraphInput).
struct ChannelRef {
  int node = 0, channel = 0;
};
inline constexpr int kGraphInput = -1;

struct NodeSpec {
  std::string id, type;
  std::vector<ChannelRef> input, sidechain;
  std::unique_ptr<Effect> effect;  ///< parsed; Engines clone it
  int outputs = 0;
  int level = 0;  ///< 1 + the highest level of the nodes it reads (0: graph input only)
};

struct Graph::Impl {
  std::string name;
  int inputs = 0;
  std::vector<NodeSpec> nodes;  ///< topological order
  std::vector<ChannelRef> outputs;
  int index(std::string_view id) const;  ///< -1 when absent
};

/// Graph::parse with the folder that relative file names in parameters are relative to.
Graph parse_graph(std::string_view text, const Variables& vars, const std::string& base_dir);

}  // namespace sigpu::audio
