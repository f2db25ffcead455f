// Graph files: parsing, routing and validation. Every error names the node and the port or
// parameter; nothing here recurses on the input's depth.
#include "audio/graph.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>

#include "audio/expression.hpp"

namespace sigpu::audio {
namespace {

constexpr int kMaxChannels = 65536;
constexpr std::size_t kMaxRoutedChannels = std::size_t{1} << 20;  ///< all ports together

/// A graph that cannot be one: the CLI's "not of the format" (exit 3).
[[noreturn]] void fail(const std::string& what) {
  throw InputError("graph: " + what);
}

std::string node_port(const std::string& id, std::string_view port) {
  return "node '" + id + "' port '" + std::string(port) + "'";
}

/// nlohmann's parser is iterative, but refuse absurd nesting before building the tree anyway.
void check_depth(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxGraphDepth) {
        fail("nesting deeper than " + std::to_string(kMaxGraphDepth) + " at byte " +
             std::to_string(i));
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

/// Parses with the node and value counts checked as the tree grows, so a file of a million
/// tiny nodes stops at node kMaxGraphNodes + 1 instead of after the whole tree is built.
Json parse_json(std::string_view text) {
  if (text.size() > kMaxGraphBytes) {
    fail(std::to_string(text.size()) + " bytes, more than the limit of " +
         std::to_string(kMaxGraphBytes) + " (graph files are a few KB)");
  }
  check_depth(text);
  std::size_t values = 0, nodes = 0;
  bool in_nodes = false;  // below the top-level key "nodes"
  const auto count = [&](int depth, Json::parse_event_t event, Json& parsed) {
    using E = Json::parse_event_t;
    if (event == E::key) {
      if (depth == 1)
        in_nodes = parsed.is_string() && parsed.get_ref<const std::string&>() == "nodes";
      return true;
    }
    if (event == E::object_end || event == E::array_end) return true;
    if (++values > kMaxGraphValues) {
      fail("more than " + std::to_string(kMaxGraphValues) + " JSON values");
    }
    if (in_nodes && depth == 2 && ++nodes > kMaxGraphNodes) {
      fail("more than " + std::to_string(kMaxGraphNodes) + " nodes");
    }
    return true;
  };
  try {
    return Json::parse(text, count);
  } catch (const Json::parse_error& e) {
    fail("malformed JSON at byte " + std::to_string(e.byte) + ": " + e.what());
  } catch (const Json::exception& e) {
    fail(std::string("malformed JSON: ") + e.what());
  }
}

int count_value(const Json& v, const Variables& vars, const std::string& what, int lo) {
  std::int64_t n = 0;
  if (v.is_number_integer()) {
    n = v.get<std::int64_t>();
  } else if (v.is_string()) {
    try {
      n = evaluate(v.get<std::string>(), vars);
    } catch (const Error& e) {
      fail(what + ": " + e.what());
    }
  } else {
    fail(what + ": an integer or an expression string is expected");
  }
  if (n < lo || n > kMaxChannels) {
    fail(what + ": " + std::to_string(n) + " is out of range [" + std::to_string(lo) + ", " +
         std::to_string(kMaxChannels) + "]");
  }
  return static_cast<int>(n);
}

/// "name", "name:3" or "name:2-5" (channels from 0, ranges inclusive).
struct RefText {
  std::string node;
  int first = 0, last = -1;  ///< last == -1: all channels
};

RefText split_ref(const std::string& text, const std::string& where) {
  RefText r;
  const auto colon = text.find(':');
  r.node = text.substr(0, colon);
  if (r.node.empty()) fail(where + ": '" + text + "' names no node");
  if (colon == std::string::npos) return r;
  const std::string range = text.substr(colon + 1);
  const auto dash = range.find('-');
  const auto parse = [&](std::string_view s, int& out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (ec != std::errc() || end != s.data() + s.size() || out < 0) {
      fail(where + ": '" + text + "' has a bad channel number (use name, name:3 or name:2-5)");
    }
  };
  parse(std::string_view(range).substr(0, dash), r.first);
  r.last = r.first;
  if (dash != std::string::npos) parse(std::string_view(range).substr(dash + 1), r.last);
  if (r.last < r.first) fail(where + ": '" + text + "' is an empty channel range");
  return r;
}

std::vector<std::string> ref_list(const Json* v, const std::string& where) {
  std::vector<std::string> out;
  if (!v) return out;
  if (v->is_string()) return {v->get<std::string>()};
  if (!v->is_array()) fail(where + ": a channel reference or an array of them is expected");
  for (const auto& e : *v) {
    if (!e.is_string()) fail(where + ": channel references are strings like \"eq:0-1\"");
    out.push_back(e.get<std::string>());
  }
  return out;
}

void check_keys(const Json& obj, std::initializer_list<const char*> allowed,
                const std::string& where) {
  for (const auto& item : obj.items()) {
    const std::string& key = item.key();
    if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return key == a; })) {
      fail(where + ": unknown key '" + key + "'");
    }
  }
}

struct RawNode {
  std::string id, type;
  std::vector<std::string> input, sidechain;
  const Json* params = nullptr;
  std::vector<int> deps;  ///< indices of the nodes it reads
};

/// Kahn's algorithm in file order; a cycle is reported with the nodes on it.
std::vector<int> topological_order(const std::vector<RawNode>& raw) {
  const int n = static_cast<int>(raw.size());
  std::vector<int> pending(n), order;
  std::vector<std::vector<int>> users(n);
  for (int i = 0; i < n; ++i) {
    for (int d : raw[i].deps) users[d].push_back(i);
    pending[i] = static_cast<int>(raw[i].deps.size());
  }
  std::vector<int> ready;
  for (int i = n - 1; i >= 0; --i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  while (!ready.empty()) {
    const int i = ready.back();
    ready.pop_back();
    order.push_back(i);
    for (int u : users[i]) {
      if (--pending[u] == 0) ready.push_back(u);
    }
  }
  if (static_cast<int>(order.size()) == n) return order;
  // Every node left waits for another node left: walk back until one repeats.
  int at = 0;
  while (pending[at] == 0) ++at;
  std::vector<int> seen(n, -1), path;
  while (seen[at] < 0) {
    seen[at] = static_cast<int>(path.size());
    path.push_back(at);
    for (int d : raw[at].deps) {
      if (pending[d] > 0) {
        at = d;
        break;
      }
    }
  }
  std::string text;
  for (std::size_t k = path.size(); k-- > static_cast<std::size_t>(seen[at]);) {
    text += "'" + raw[path[k]].id + "' -> ";
  }
  fail("cycle: " + text + "'" + raw[at].id + "'");
}

}  // namespace

int Graph::Impl::index(std::string_view id) const {
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].id == id) return static_cast<int>(i);
  }
  return -1;
}

Graph::Graph() : impl_(std::make_shared<Impl>()) {}
Graph::Graph(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
Graph::~Graph() = default;
Graph::Graph(const Graph&) = default;
Graph& Graph::operator=(const Graph&) = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;

int Graph::inputs() const {
  return impl_->inputs;
}
int Graph::outputs() const {
  return static_cast<int>(impl_->outputs.size());
}
std::vector<std::string> Graph::nodes() const {
  std::vector<std::string> ids;
  for (const auto& n : impl_->nodes) ids.push_back(n.id);
  return ids;
}

Graph Graph::load(const std::string& path, const Variables& vars) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the graph file");
  // One byte past the limit is enough to refuse: pipes and /dev/zero are never read whole.
  std::string text(kMaxGraphBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw InputError(path + ": read error");
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxGraphBytes) {
    throw InputError(path + ": graph: larger than the limit of " + std::to_string(kMaxGraphBytes) +
                     " bytes (graph files are a few KB)");
  }
  const auto slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path.substr(0, slash);
  // The same error class with the file named first.
  try {
    return parse_graph(text, vars, dir);
  } catch (const InputError& e) {
    throw InputError(path + ": " + e.what());
  } catch (const UnsupportedError& e) {
    throw UnsupportedError(path + ": " + e.what());
  } catch (const CudaError&) {
    throw;
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

Graph Graph::parse(std::string_view text, const Variables& vars) {
  return parse_graph(text, vars, "");
}

Graph parse_graph(std::string_view text, const Variables& overrides, const std::string& base_dir) {
  Json doc = parse_json(text);
  if (!doc.is_object()) fail("the top level must be an object");
  check_keys(doc, {"name", "description", "variables", "inputs", "nodes", "outputs"}, "graph");

  auto impl = std::make_shared<Graph::Impl>();
  if (doc.contains("name")) {
    if (!doc["name"].is_string()) fail("'name' must be a string");
    impl->name = doc["name"].get<std::string>();
  }
  Variables vars;
  if (doc.contains("variables")) {
    const Json& v = doc["variables"];
    if (!v.is_object()) fail("'variables' must be an object of integers");
    for (const auto& [key, value] : v.items()) {
      if (!value.is_number_integer()) fail("variable '" + key + "' must be an integer");
      vars[key] = value.get<std::int64_t>();
    }
  }
  for (const auto& [key, value] : overrides) {
    if (!vars.count(key)) fail("variable '" + key + "' is not declared in the graph's variables");
    vars[key] = value;
  }
  if (!doc.contains("inputs")) fail("'inputs' (the graph's input channel count) is missing");
  impl->inputs = count_value(doc["inputs"], vars, "'inputs'", 0);

  if (!doc.contains("nodes") || !doc["nodes"].is_array()) fail("'nodes' must be an array");
  const Json& nodes = doc["nodes"];
  std::vector<RawNode> raw;
  std::map<std::string, int, std::less<>> ids;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const Json& n = nodes[i];
    const std::string where = "nodes[" + std::to_string(i) + "]";
    if (!n.is_object()) fail(where + " must be an object");
    if (!n.contains("id") || !n["id"].is_string()) fail(where + ": 'id' (a string) is missing");
    RawNode r;
    r.id = n["id"].get<std::string>();
    const std::string w = "node '" + r.id + "'";
    if (r.id.empty() || r.id == "in" || r.id.find(':') != std::string::npos) {
      fail(w + ": an id must be non-empty, not 'in', and without ':'");
    }
    check_keys(n, {"id", "type", "input", "sidechain", "params", "comment"}, w);
    if (!n.contains("type") || !n["type"].is_string()) fail(w + ": 'type' (a string) is missing");
    r.type = n["type"].get<std::string>();
    r.input = ref_list(n.contains("input") ? &n["input"] : nullptr, node_port(r.id, "input"));
    r.sidechain =
        ref_list(n.contains("sidechain") ? &n["sidechain"] : nullptr, node_port(r.id, "sidechain"));
    if (n.contains("params")) {
      if (!n["params"].is_object()) fail(w + ": 'params' must be an object");
      r.params = &n["params"];
    }
    if (!ids.emplace(r.id, static_cast<int>(i)).second) fail(w + ": the id is used twice");
    raw.push_back(std::move(r));
  }
  // Dependencies by name, checked for unknown nodes before cycles.
  for (auto& r : raw) {
    for (const auto* list : {&r.input, &r.sidechain}) {
      const char* port = list == &r.input ? "input" : "sidechain";
      for (const auto& text : *list) {
        const RefText ref = split_ref(text, node_port(r.id, port));
        if (ref.node == "in") continue;
        const auto it = ids.find(ref.node);
        if (it == ids.end()) {
          fail(node_port(r.id, port) + ": '" + text + "' refers to an unknown node '" + ref.node +
               "'");
        }
        r.deps.push_back(it->second);
      }
    }
  }

  const std::vector<int> order = topological_order(raw);
  std::vector<int> position(raw.size());
  for (std::size_t k = 0; k < order.size(); ++k) position[order[k]] = static_cast<int>(k);
  std::vector<int> used(raw.size(), 0);
  int graph_input_used = 0;
  std::size_t routed = 0;

  // Resolves a port's references, checking channel numbers against what exists.
  const auto resolve = [&](const std::vector<std::string>& texts, const std::string& where) {
    std::vector<ChannelRef> refs;
    for (const auto& text : texts) {
      const RefText ref = split_ref(text, where);
      int node = kGraphInput, available = impl->inputs;
      if (ref.node != "in") {
        // Node inputs were checked above; the graph's outputs meet their names only here.
        const auto it = ids.find(ref.node);
        if (it == ids.end())
          fail(where + ": '" + text + "' refers to an unknown node '" + ref.node + "'");
        node = position[it->second];
        available = impl->nodes[node].outputs;
      }
      const int last = ref.last < 0 ? available - 1 : ref.last;
      if (last >= available) {
        fail(where + ": '" + text + "' names channel " + std::to_string(last) + " but '" +
             ref.node + "' has " + std::to_string(available) + " channels");
      }
      if (refs.size() + (last - ref.first + 1) > static_cast<std::size_t>(kMaxChannels)) {
        fail(where + ": more than " + std::to_string(kMaxChannels) + " channels");
      }
      routed += last - ref.first + 1;
      if (routed > kMaxRoutedChannels) {
        fail(where + ": the graph routes more than " + std::to_string(kMaxRoutedChannels) +
             " channels in all");
      }
      for (int c = ref.first; c <= last; ++c) refs.push_back({node, c});
      (node == kGraphInput ? graph_input_used : used[order[node]]) = 1;
    }
    return refs;
  };

  for (int k : order) {
    RawNode& r = raw[k];
    NodeSpec spec;
    spec.id = r.id;
    spec.type = r.type;
    spec.effect = make_effect(r.type);
    if (!spec.effect && (r.type == "convolution" || r.type == "nam")) {
      throw UnsupportedError("graph: node '" + r.id + "': this build of sigpu has no " + r.type +
                             " module");
    }
    if (!spec.effect) {
      fail("node '" + r.id + "': unknown effect type '" + r.type + "' (known: " + effect_types() +
           ")");
    }
    spec.input = resolve(r.input, node_port(r.id, "input"));
    if (spec.input.empty()) fail(node_port(r.id, "input") + " is not connected");
    spec.sidechain = resolve(r.sidechain, node_port(r.id, "sidechain"));
    if (!spec.sidechain.empty() && !spec.effect->has_sidechain()) {
      fail(node_port(r.id, "sidechain") + ": a " + r.type + " has no side-chain input");
    }
    for (const auto* list : {&spec.input, &spec.sidechain}) {
      for (const auto& ref : *list) {
        if (ref.node != kGraphInput) {
          spec.level = std::max(spec.level, impl->nodes[ref.node].level + 1);
        }
      }
    }
    Ports ports{static_cast<int>(spec.input.size()), static_cast<int>(spec.sidechain.size()), 0};
    static const Json kNoParams = Json::object();
    try {
      ParamReader reader(r.params ? *r.params : kNoParams, vars, base_dir);
      spec.effect->parse(reader, ports);
      reader.finish();
    } catch (const ParamError& e) {
      const std::string what = "node '" + r.id + "' " + (e.is_port() ? "port '" : "parameter '") +
                               e.param() + "': " + e.what();
      if (e.is_unsupported()) throw UnsupportedError("graph: " + what);
      fail(what);
    }
    spec.outputs = ports.output;
    impl->nodes.push_back(std::move(spec));
  }

  if (!doc.contains("outputs")) fail("'outputs' (the graph's output channels) is missing");
  impl->outputs = resolve(ref_list(&doc["outputs"], "graph outputs"), "graph outputs");
  if (impl->outputs.empty()) fail("graph outputs: no channels");
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (!used[i]) {
      fail("node '" + raw[i].id +
           "' port 'output' is dangling: no node and no graph output reads it");
    }
  }
  if (impl->inputs > 0 && !graph_input_used) fail("graph inputs are dangling: no node reads 'in'");
  return Graph(std::move(impl));
}

}  // namespace sigpu::audio
