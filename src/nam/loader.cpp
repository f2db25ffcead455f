// The .nam reader: JSON with "version", "architecture", "config", "weights", optional
// "sample_rate" and "metadata". Every field is checked and named when wrong; the limits below
// keep a hostile file from asking for absurd memory or pre-warm time.
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "nam/json_error_path.hpp"
#include "nam/layout.hpp"

namespace sigpu::nam {
namespace {

using json = nlohmann::json;

constexpr int kMaxChannels = 1024;
constexpr int kMaxKernel = 64;
constexpr int kMaxDilation = 65536;
constexpr int kMaxLayersPerArray = 256;
constexpr int kMaxLayerArrays = 16;
constexpr int kMaxLstmLayers = 16;
constexpr long kMaxReceptiveField = 1L << 20;
constexpr long kMaxWeights = 1L << 26;

/// Real models are 0.1 to 10 MB of JSON; larger files are refused before they are read whole.
/// At two characters a weight ("0,") this also keeps a file under kMaxWeights / 2 weights.
constexpr std::size_t kMaxFileBytes = std::size_t{1} << 26;

class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source) {}

  /// Not a .nam model, or an inconsistent one: the CLI's exit 3.
  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw InputError(message(path, what));
  }
  /// A well-formed model using what sigpu does not run (a version, an architecture, a size
  /// past the limits above): the CLI's exit 4.
  [[noreturn]] void unsupported(const std::string& path, const std::string& what) const {
    throw UnsupportedError(message(path, what));
  }
  std::string message(const std::string& path, const std::string& what) const {
    return source_ + ": " + (path.empty() ? "" : path + ": ") + what;
  }

  const json& member(const json& obj, const std::string& path, const char* key) const {
    if (!obj.is_object()) fail(path, "expected an object, got " + type(obj));
    auto it = obj.find(key);
    if (it == obj.end()) fail(join(path, key), "missing");
    return *it;
  }
  const json* optional_member(const json& obj, const char* key) const {
    auto it = obj.find(key);
    return it == obj.end() || it->is_null() ? nullptr : &*it;
  }

  int integer(const json& v, const std::string& path, long lo, long hi) const {
    if (v.is_number_integer() && v.get<long long>() > hi)
      unsupported(path, "expected an integer in " + std::to_string(lo) + ".." + std::to_string(hi) +
                            " (sigpu's limit), got " + v.dump().substr(0, 40));
    if (!v.is_number_integer() || v.get<long long>() < lo)
      fail(path, "expected an integer in " + std::to_string(lo) + ".." + std::to_string(hi) +
                     ", got " + v.dump().substr(0, 40));
    return static_cast<int>(v.get<long long>());
  }
  int integer(const json& obj, const std::string& path, const char* key, long lo, long hi) const {
    return integer(member(obj, path, key), join(path, key), lo, hi);
  }
  bool boolean(const json& obj, const std::string& path, const char* key) const {
    const json& v = member(obj, path, key);
    if (!v.is_boolean()) fail(join(path, key), "expected true or false, got " + type(v));
    return v.get<bool>();
  }
  std::string string(const json& obj, const std::string& path, const char* key) const {
    const json& v = member(obj, path, key);
    if (!v.is_string()) fail(join(path, key), "expected a string, got " + type(v));
    return v.get<std::string>();
  }
  double number(const json& v, const std::string& path) const {
    if (!v.is_number()) fail(path, "expected a number, got " + type(v));
    return v.get<double>();
  }
  Activation activation(const json& obj, const std::string& path) const {
    const std::string name = string(obj, path, "activation");
    static const std::pair<const char*, Activation> names[] = {
        {"Tanh", Activation::tanh},           {"Hardtanh", Activation::hardtanh},
        {"ReLU", Activation::relu},           {"LeakyReLU", Activation::leaky_relu},
        {"Sigmoid", Activation::sigmoid},     {"SiLU", Activation::silu},
        {"Hardswish", Activation::hardswish},
    };
    for (const auto& [n, a] : names)
      if (name == n) return a;
    unsupported(join(path, "activation"), "unsupported activation \"" + name.substr(0, 40) + "\"");
  }
  std::vector<int> dilations(const json& obj, const std::string& path) const {
    const std::string p = join(path, "dilations");
    const json& v = member(obj, path, "dilations");
    if (v.is_array() && v.size() > kMaxLayersPerArray)
      unsupported(p, std::to_string(v.size()) + " layers, more than the limit of " +
                         std::to_string(kMaxLayersPerArray));
    if (!v.is_array() || v.empty())
      fail(p, "expected an array of 1.." + std::to_string(kMaxLayersPerArray) + " integers");
    std::vector<int> out;
    for (std::size_t i = 0; i < v.size(); ++i)
      out.push_back(integer(v[i], p + "[" + std::to_string(i) + "]", 1, kMaxDilation));
    return out;
  }

  static std::string join(const std::string& path, const char* key) {
    return path.empty() ? key : path + "." + key;
  }
  static std::string type(const json& v) { return v.type_name(); }

 private:
  std::string source_;
};

WaveNet read_wavenet(const Reader& r, const json& config) {
  WaveNet w;
  const json& layers = r.member(config, "config", "layers");
  if (layers.is_array() && layers.size() > kMaxLayerArrays)
    r.unsupported("config.layers", std::to_string(layers.size()) +
                                       " layer arrays, more than the limit of " +
                                       std::to_string(kMaxLayerArrays));
  if (!layers.is_array() || layers.empty())
    r.fail("config.layers",
           "expected an array of 1.." + std::to_string(kMaxLayerArrays) + " layer arrays");
  long receptive_field = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const std::string p = "config.layers[" + std::to_string(i) + "]";
    const json& l = layers[i];
    LayerArray a;
    a.input_size = r.integer(l, p, "input_size", 1, kMaxChannels);
    a.condition_size = r.integer(l, p, "condition_size", 1, kMaxChannels);
    a.head_size = r.integer(l, p, "head_size", 1, kMaxChannels);
    a.channels = r.integer(l, p, "channels", 1, kMaxChannels);
    a.kernel_size = r.integer(l, p, "kernel_size", 1, kMaxKernel);
    a.dilations = r.dilations(l, p);
    a.activation = r.activation(l, p);
    a.gated = r.boolean(l, p, "gated");
    a.head_bias = r.boolean(l, p, "head_bias");
    // The signal is mono: it is both the first array's input and every array's condition.
    if (a.condition_size != 1) r.unsupported(p + ".condition_size", "must be 1 (the mono input)");
    if (i == 0 && a.input_size != 1) r.unsupported(p + ".input_size", "must be 1 (the mono input)");
    if (i > 0) {
      const LayerArray& prev = w.layer_arrays.back();
      if (a.input_size != prev.channels)
        r.fail(p + ".input_size", "is " + std::to_string(a.input_size) +
                                      " but the previous layer array has " +
                                      std::to_string(prev.channels) + " channels");
      if (a.channels != prev.head_size)
        r.fail(p + ".channels", "is " + std::to_string(a.channels) +
                                    " but the previous layer array's head_size is " +
                                    std::to_string(prev.head_size));
    }
    for (int d : a.dilations) receptive_field += static_cast<long>(a.kernel_size - 1) * d;
    w.layer_arrays.push_back(std::move(a));
  }
  if (w.layer_arrays.back().head_size != 1)
    r.unsupported("config.layers[" + std::to_string(layers.size() - 1) + "].head_size",
                  "the last layer array's head_size must be 1 (the mono output)");
  if (receptive_field > kMaxReceptiveField)
    r.unsupported("config.layers", "receptive field " + std::to_string(receptive_field) +
                                       " exceeds the limit of " +
                                       std::to_string(kMaxReceptiveField));
  if (const json* head = r.optional_member(config, "head"))
    r.unsupported("config.head", "a WaveNet post-stack head is not supported (only null), got " +
                                     head->dump().substr(0, 40));
  // The weights carry head_scale too (read last); the config's copy is only checked.
  r.number(r.member(config, "config", "head_scale"), "config.head_scale");
  return w;
}

Lstm read_lstm(const Reader& r, const json& config) {
  Lstm l;
  l.num_layers = r.integer(config, "config", "num_layers", 1, kMaxLstmLayers);
  l.input_size = r.integer(config, "config", "input_size", 1, 1);
  l.hidden_size = r.integer(config, "config", "hidden_size", 1, kMaxChannels);
  return l;
}

ConvNet read_convnet(const Reader& r, const json& config) {
  ConvNet c;
  c.channels = r.integer(config, "config", "channels", 1, kMaxChannels);
  c.dilations = r.dilations(config, "config");
  c.batchnorm = r.boolean(config, "config", "batchnorm");
  c.activation = r.activation(config, "config");
  long rf = 0;
  for (int d : c.dilations) rf += d;
  if (rf > kMaxReceptiveField)
    r.unsupported("config.dilations",
                  "receptive field " + std::to_string(rf) + " exceeds the limit");
  return c;
}

Linear read_linear(const Reader& r, const json& config) {
  Linear l;
  l.receptive_field = r.integer(config, "config", "receptive_field", 1, kMaxReceptiveField);
  l.bias = r.boolean(config, "config", "bias");
  return l;
}

void check_version(const Reader& r, const std::string& v) {
  // "0.5.x": NeuralAmpModelerCore accepts major 0, minor 5 and any patch.
  int major = -1, minor = -1, patch = -1;
  char dot1 = 0, dot2 = 0, extra = 0;
  std::istringstream in(v);
  in >> major >> dot1 >> minor >> dot2 >> patch;
  const bool well_formed = in && dot1 == '.' && dot2 == '.' && !(in >> extra);
  if (!well_formed || major != 0 || minor != 5 || patch < 0)
    r.unsupported("version", "unsupported version \"" + v.substr(0, 40) + "\" (sigpu reads 0.5.x)");
}

/// The top-level "weights" array, taken out of the JSON tree as it is parsed: a tree node per
/// weight would cost 16 bytes or more for each, where the model keeps a 4-byte float. The
/// first bad element is remembered and reported once the count is known to be right.
struct Weights {
  std::vector<float> values;
  long count = 0;  ///< elements seen, good or bad
  long bad = -1;   ///< index of the first element that is not a finite number
  std::string why;

  /// nlohmann's parser callback: returns whether to keep the event's value in the tree.
  bool event(const Reader& r, int depth, json::parse_event_t ev, json& parsed) {
    using E = json::parse_event_t;
    if (depth == 1 && ev == E::key) in_weights_ = parsed.get_ref<const std::string&>() == "weights";
    if (!in_weights_ || depth < 2) return true;
    if (depth > 2 || ev == E::key || ev == E::object_end || ev == E::array_end) return false;
    if (++count > kMaxWeights)
      r.unsupported("weights", "more than the limit of " + std::to_string(kMaxWeights));
    const float f = parsed.is_number() ? static_cast<float>(parsed.get<double>()) : 0.0f;
    if (ev != E::value || !parsed.is_number() || !std::isfinite(f)) {
      if (bad < 0) {
        bad = count - 1;
        why = ev == E::object_start  ? "expected a number, got object"
              : ev == E::array_start ? "expected a number, got array"
              : !parsed.is_number()  ? "expected a number, got " + Reader::type(parsed)
                                     : "not a finite float: " + parsed.dump();
      }
      return false;
    }
    values.push_back(f);
    return false;
  }

 private:
  bool in_weights_ = false;
};

}  // namespace

Model parse(std::string_view text, std::string_view source) {
  const Reader r(source);
  if (text.size() > kMaxFileBytes)
    r.unsupported("", std::to_string(text.size()) + " bytes, more than the limit of " +
                          std::to_string(kMaxFileBytes));
  Weights w;
  json j = json::parse(
      text.begin(), text.end(),
      [&](int depth, json::parse_event_t ev, json& parsed) {
        return w.event(r, depth, ev, parsed);
      },
      /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    JsonSyntaxError e;
    if (!find_json_syntax_error(text, e)) r.fail("", "invalid JSON");
    r.fail("", "invalid JSON at byte " + std::to_string(e.byte) +
                   (e.path.empty() ? "" : " (in " + e.path + ")") + ": " + e.what +
                   " (NaN and Infinity are not JSON numbers)");
  }
  if (!j.is_object()) r.fail("", "expected a JSON object, got " + std::string(j.type_name()));

  Model m;
  m.source = source;
  m.version = r.string(j, "", "version");
  check_version(r, m.version);
  const std::string arch = r.string(j, "", "architecture");
  const json& config = r.member(j, "", "config");
  if (!config.is_object()) r.fail("config", "expected an object");
  if (arch == "WaveNet") {
    m.architecture = Architecture::wavenet;
    m.wavenet = read_wavenet(r, config);
  } else if (arch == "LSTM") {
    m.architecture = Architecture::lstm;
    m.lstm = read_lstm(r, config);
  } else if (arch == "ConvNet") {
    m.architecture = Architecture::convnet;
    m.convnet = read_convnet(r, config);
  } else if (arch == "Linear") {
    m.architecture = Architecture::linear;
    m.linear = read_linear(r, config);
  } else {
    r.unsupported("architecture", "unknown architecture \"" + arch.substr(0, 40) +
                                      "\" (sigpu reads WaveNet, LSTM, ConvNet and Linear)");
  }

  if (const json* rate = r.optional_member(j, "sample_rate")) {
    const double sr = r.number(*rate, "sample_rate");
    if (!(sr >= 1000 && sr <= 1e6)) r.fail("sample_rate", "out of range: " + rate->dump());
    m.sample_rate = sr;
    m.sample_rate_in_file = true;
  }
  if (const json* meta = r.optional_member(j, "metadata"); meta && meta->is_object()) {
    if (const json* name = r.optional_member(*meta, "name"); name && name->is_string())
      m.name = name->get<std::string>();
    if (const json* loud = r.optional_member(*meta, "loudness")) {
      const double l = r.number(*loud, "metadata.loudness");
      if (std::isfinite(l)) m.loudness_db = l;
    }
  }

  const json& weights = r.member(j, "", "weights");
  if (!weights.is_array()) r.fail("weights", "expected an array, got " + Reader::type(weights));
  const long expected = expected_weight_count(m);
  if (expected > kMaxWeights)
    r.unsupported("config", "the model needs " + std::to_string(expected) +
                                " weights, more than the limit of " + std::to_string(kMaxWeights));
  if (w.count != expected)
    r.fail("weights", "the config needs " + std::to_string(expected) + " weights, the file has " +
                          std::to_string(w.count));
  if (w.bad >= 0) r.fail("weights[" + std::to_string(w.bad) + "]", w.why);
  m.weights = std::move(w.values);
  if (m.architecture == Architecture::wavenet) m.wavenet.head_scale = m.weights.back();
  return m;
}

Model load(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path.string() + ": is a directory");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw InputError(path.string() + ": cannot open the file");
  // Read at most one byte past the limit, so /dev/zero or a pipe is refused, not swallowed.
  std::string text;
  char chunk[1 << 16];
  while (f.read(chunk, sizeof chunk), f.gcount() > 0) {
    text.append(chunk, static_cast<std::size_t>(f.gcount()));
    if (text.size() > kMaxFileBytes)
      throw UnsupportedError(path.string() + ": larger than the limit of " +
                             std::to_string(kMaxFileBytes) + " bytes");
  }
  if (f.bad()) throw InputError(path.string() + ": read error");
  if (text.empty()) throw InputError(path.string() + ": the file is empty");
  return parse(text, path.string());
}

}  // namespace sigpu::nam
