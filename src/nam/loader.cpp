// The .nam reader: JSON with "version", "architecture", "config", "weights", optional
// "sample_rate" and "metadata". Every field is checked and named when wrong; the limits below
// keep a hostile file from asking for absurd memory or pre-warm time.
#include <algorithm>
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
constexpr int kMaxSizes = 16;  ///< a slimmable model's networks, each run all the time
constexpr int kMaxLstmLayers = 16;
constexpr long kMaxReceptiveField = 1L << 20;
constexpr long kMaxWeights = 1L << 26;

/// Real models are 0.1 to 10 MB of JSON; larger files are refused before they are read whole.
/// At two characters a weight ("0,") this also keeps a file under kMaxWeights / 2 weights.
constexpr std::size_t kMaxFileBytes = std::size_t{1} << 26;

class Reader {
 public:
  explicit Reader(std::string_view source) : source_(source), file_(source) {}
  /// A reader for a model nested at `path`: its messages name the file and the path.
  Reader nested(const std::string& path) const {
    Reader r(*this);
    r.source_ = source_ + ": " + path;
    return r;
  }
  const std::string& source() const { return file_; }

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
  /// A name ("Tanh") or an object ({"type": "LeakyReLU", "negative_slope": 0.01}).
  ActivationSpec activation(const json& v, const std::string& path) const {
    static const std::pair<const char*, Activation> names[] = {
        {"Tanh", Activation::tanh},
        {"Hardtanh", Activation::hardtanh},
        {"ReLU", Activation::relu},
        {"LeakyReLU", Activation::leaky_relu},
        {"Sigmoid", Activation::sigmoid},
        {"SiLU", Activation::silu},
        {"Hardswish", Activation::hardswish},
        {"Fasttanh", Activation::fast_tanh},
        {"PReLU", Activation::prelu},
        {"LeakyHardtanh", Activation::leaky_hardtanh},
        {"LeakyHardTanh", Activation::leaky_hardtanh},
        {"Softsign", Activation::softsign},
    };
    const bool object = v.is_object();
    if (!object && !v.is_string())
      fail(path, "expected an activation name or object, got " + type(v));
    const std::string name = object ? string(v, path, "type") : v.get<std::string>();
    ActivationSpec a;
    bool known = false;
    for (const auto& [n, k] : names)
      if (name == n) a.kind = k, known = true;
    if (!known)
      unsupported(object ? join(path, "type") : path,
                  "unsupported activation \"" + name.substr(0, 40) +
                      "\" (sigpu runs Tanh, Hardtanh, Fasttanh, ReLU, LeakyReLU, PReLU, Sigmoid, "
                      "SiLU, Hardswish, LeakyHardtanh, Softsign)");
    if (!object) return a;
    for (const auto& item : v.items()) {
      // Named, not bound: clang 14 (the fuzz build) cannot capture structured bindings.
      const std::string& key = item.key();
      const auto& value = item.value();
      const std::string p = join(path, key.c_str());
      const auto param = [&](const char* k, Activation kind, float& out) {
        if (key != k) return false;
        if (a.kind != kind) return false;
        out = static_cast<float>(number(value, p));
        return true;
      };
      if (key == "type") continue;
      if (param("negative_slope", Activation::leaky_relu, a.negative_slope) ||
          param("negative_slope", Activation::prelu, a.negative_slope) ||
          param("min_val", Activation::leaky_hardtanh, a.min_val) ||
          param("max_val", Activation::leaky_hardtanh, a.max_val) ||
          param("min_slope", Activation::leaky_hardtanh, a.min_slope) ||
          param("max_slope", Activation::leaky_hardtanh, a.max_slope))
        continue;
      if (key == "negative_slopes" && a.kind == Activation::prelu) {
        if (!value.is_array() || value.empty() || value.size() > kMaxChannels)
          fail(p, "expected an array of 1.." + std::to_string(kMaxChannels) + " numbers");
        for (std::size_t i = 0; i < value.size(); ++i)
          a.negative_slopes.push_back(
              static_cast<float>(number(value[i], p + "[" + std::to_string(i) + "]")));
        continue;
      }
      unsupported(p, "unknown parameter of " + name);
    }
    // NAM core reads negative_slope before negative_slopes.
    if (a.kind == Activation::prelu && v.contains("negative_slope")) a.negative_slopes.clear();
    return a;
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
  std::string source_, file_;
};

struct Weights;
Model read_model(const Reader& r, const json& j, const std::string& base, const Weights* top,
                 int depth);

/// An integer that defaults when the key is absent.
int integer_or(const Reader& r, const json& obj, const std::string& path, const char* key, int def,
               long lo, long hi) {
  return r.optional_member(obj, key) ? r.integer(obj, path, key, lo, hi) : def;
}

/// NAM core's multi-channel keys (in_channels, out_channels, groups): sigpu runs mono, ungrouped.
void only_one(const Reader& r, const json& config, const char* key, const char* what) {
  if (const json* v = r.optional_member(config, key))
    if (r.integer(*v, Reader::join("config", key), 1, kMaxChannels) != 1)
      r.unsupported(Reader::join("config", key), std::string("must be 1 (") + what + ")");
}

/// A per-layer list: an array of one entry per layer, or one entry for every layer.
template <class T, class Read>
std::vector<T> per_layer(const Reader& r, const json& v, const std::string& path, std::size_t n,
                         Read read) {
  std::vector<T> out;
  if (!v.is_array()) return std::vector<T>(n, read(v, path));
  if (v.size() != n)
    r.fail(path, "has " + std::to_string(v.size()) + " entries for " + std::to_string(n) +
                     " layers (dilations)");
  for (std::size_t i = 0; i < n; ++i)
    out.push_back(read(v[i], path + "[" + std::to_string(i) + "]"));
  return out;
}

Gating gating_mode(const Reader& r, const json& v, const std::string& path) {
  if (!v.is_string()) r.fail(path, "expected a string, got " + Reader::type(v));
  const std::string s = v.get<std::string>();
  if (s == "none") return Gating::none;
  if (s == "gated") return Gating::gated;
  if (s == "blended") return Gating::blended;
  r.unsupported(path, "unknown gating_mode \"" + s.substr(0, 40) + "\" (none, gated, blended)");
}

void groups_divide(const Reader& r, const std::string& path, int groups, int in, int out) {
  if (in % groups != 0 || out % groups != 0)
    r.fail(path, std::to_string(groups) + " groups do not divide " + std::to_string(in) +
                     " inputs and " + std::to_string(out) + " outputs");
}

LayerArray read_layer_array(const Reader& r, const json& l, const std::string& p) {
  LayerArray a;
  a.input_size = r.integer(l, p, "input_size", 1, kMaxChannels);
  a.condition_size = r.integer(l, p, "condition_size", 1, kMaxChannels);
  a.channels = r.integer(l, p, "channels", 1, kMaxChannels);
  a.bottleneck = integer_or(r, l, p, "bottleneck", a.channels, 1, kMaxChannels);
  a.dilations = r.dilations(l, p);
  const std::size_t n = a.dilations.size();

  if (const json* head = r.optional_member(l, "head")) {
    const std::string hp = Reader::join(p, "head");
    if (!head->is_object()) r.fail(hp, "expected an object, got " + Reader::type(*head));
    a.head_size = r.integer(*head, hp, "out_channels", 1, kMaxChannels);
    a.head_kernel_size = r.integer(*head, hp, "kernel_size", 1, kMaxKernel);
    a.head_bias = r.boolean(*head, hp, "bias");
    a.head_dilation = integer_or(r, *head, hp, "head_dilation", 1, 1, kMaxDilation);
  } else {
    a.head_size = r.integer(l, p, "head_size", 1, kMaxChannels);
    a.head_bias = r.boolean(l, p, "head_bias");
  }

  const json* ks = r.optional_member(l, "kernel_sizes");
  const json* k1 = r.optional_member(l, "kernel_size");
  if (ks && k1) r.fail(Reader::join(p, "kernel_sizes"), "only one of kernel_size and kernel_sizes");
  if (!ks && !k1) r.fail(Reader::join(p, "kernel_size"), "missing (nor kernel_sizes)");
  const auto kernel = [&](const json& v, const std::string& path) {
    return r.integer(v, path, 1, kMaxKernel);
  };
  if (ks && !ks->is_array()) r.fail(Reader::join(p, "kernel_sizes"), "expected an array");
  a.kernel_sizes = ks ? per_layer<int>(r, *ks, Reader::join(p, "kernel_sizes"), n, kernel)
                      : std::vector<int>(n, kernel(*k1, Reader::join(p, "kernel_size")));
  a.kernel_size = a.kernel_sizes[0];

  const auto act = [&](const json& v, const std::string& path) { return r.activation(v, path); };
  a.activations = per_layer<ActivationSpec>(r, r.member(l, p, "activation"),
                                            Reader::join(p, "activation"), n, act);
  a.activation = a.activations[0].kind;

  // gating_mode (one or per layer) with secondary_activation (one or per layer; Sigmoid when
  // absent), else the legacy "gated" flag (Sigmoid), else none.
  ActivationSpec sigmoid;
  sigmoid.kind = Activation::sigmoid;
  if (const json* g = r.optional_member(l, "gating_mode")) {
    const auto mode = [&](const json& v, const std::string& path) {
      return gating_mode(r, v, path);
    };
    a.gating = per_layer<Gating>(r, *g, Reader::join(p, "gating_mode"), n, mode);
    const json* sec = r.optional_member(l, "secondary_activation");
    for (std::size_t i = 0; i < n; ++i) {
      const std::string sp = Reader::join(p, "secondary_activation");
      if (a.gating[i] == Gating::none || !sec) {
        a.secondary.push_back(sigmoid);
      } else if (sec->is_array()) {
        if (sec->size() != n)
          r.fail(sp, "has " + std::to_string(sec->size()) + " entries for " + std::to_string(n) +
                         " layers");
        a.secondary.push_back(r.activation((*sec)[i], sp + "[" + std::to_string(i) + "]"));
      } else {
        a.secondary.push_back(r.activation(*sec, sp));
      }
    }
  } else {
    const bool gated = r.optional_member(l, "gated") && r.boolean(l, p, "gated");
    a.gating.assign(n, gated ? Gating::gated : Gating::none);
    a.secondary.assign(n, sigmoid);
  }
  a.gated = a.gating[0] == Gating::gated;

  a.groups_input = integer_or(r, l, p, "groups_input", 1, 1, kMaxChannels);
  a.groups_input_mixin = integer_or(r, l, p, "groups_input_mixin", 1, 1, kMaxChannels);
  if (const json* v = r.optional_member(l, "layer1x1")) {
    const std::string lp = Reader::join(p, "layer1x1");
    a.layer1x1 = r.boolean(*v, lp, "active");
    a.layer1x1_groups = r.integer(*v, lp, "groups", 1, kMaxChannels);
  }
  a.head1x1_out_channels = a.channels;
  if (const json* v = r.optional_member(l, "head1x1")) {
    const std::string hp = Reader::join(p, "head1x1");
    a.head1x1 = r.boolean(*v, hp, "active");
    a.head1x1_out_channels = r.integer(*v, hp, "out_channels", 1, kMaxChannels);
    a.head1x1_groups = r.integer(*v, hp, "groups", 1, kMaxChannels);
  }
  static const char* film_keys[film_slots] = {"conv_pre_film",        "conv_post_film",
                                              "input_mixin_pre_film", "input_mixin_post_film",
                                              "activation_pre_film",  "activation_post_film",
                                              "layer1x1_post_film",   "head1x1_post_film"};
  for (int s = 0; s < film_slots; ++s) {
    const json* v = r.optional_member(l, film_keys[s]);
    if (!v || (v->is_boolean() && !v->get<bool>())) continue;
    const std::string fp = Reader::join(p, film_keys[s]);
    if (!v->is_object()) r.fail(fp, "expected an object or false, got " + Reader::type(*v));
    Film& f = a.film[s];
    f.active = r.optional_member(*v, "active") ? r.boolean(*v, fp, "active") : true;
    f.shift = r.optional_member(*v, "shift") ? r.boolean(*v, fp, "shift") : true;
    f.groups = integer_or(r, *v, fp, "groups", 1, 1, kMaxChannels);
  }

  if (const json* v = r.optional_member(l, "slimmable"); v && v->is_object()) {
    const std::string sp = Reader::join(p, "slimmable");
    const std::string method = r.optional_member(*v, "method") ? r.string(*v, sp, "method") : "";
    if (method != "slice_channels_uniform")
      r.unsupported(
          Reader::join(sp, "method"),
          "unsupported slimmable method \"" + method.substr(0, 40) + "\" (slice_channels_uniform)");
    const std::string ap = sp + ".kwargs.allowed_channels";
    const json& allowed = r.member(r.member(*v, sp, "kwargs"), sp + ".kwargs", "allowed_channels");
    if (!allowed.is_array() || allowed.empty() || allowed.size() > kMaxChannels)
      r.fail(ap, "expected a non-empty array of channel counts");
    for (std::size_t i = 0; i < allowed.size(); ++i) {
      const int c = r.integer(allowed[i], ap + "[" + std::to_string(i) + "]", 1, a.channels);
      if (!a.slim_channels.empty() && c <= a.slim_channels.back())
        r.fail(ap, "must be sorted ascending");
      a.slim_channels.push_back(c);
    }
    if (a.slim_channels.back() != a.channels)
      r.fail(ap, "the last entry must be the layer array's channels (" +
                     std::to_string(a.channels) + ")");
  }

  // NAM core's own consistency checks, and what sigpu's engines assume.
  const int zc = a.bottleneck * 2;
  for (std::size_t i = 0; i < n; ++i) {
    const int z = a.gating[i] == Gating::none ? a.bottleneck : zc;
    groups_divide(r, Reader::join(p, "groups_input"), a.groups_input, a.channels, z);
    groups_divide(r, Reader::join(p, "groups_input_mixin"), a.groups_input_mixin, a.condition_size,
                  z);
    for (const ActivationSpec* s : {&a.activations[i], &a.secondary[i]})
      if (!s->negative_slopes.empty() && s->negative_slopes.size() != 1 &&
          static_cast<int>(s->negative_slopes.size()) != a.bottleneck)
        r.unsupported(Reader::join(p, "activation"),
                      "PReLU has " + std::to_string(s->negative_slopes.size()) +
                          " negative_slopes for a bottleneck of " + std::to_string(a.bottleneck));
  }
  if (a.layer1x1)
    groups_divide(r, Reader::join(p, "layer1x1.groups"), a.layer1x1_groups, a.bottleneck,
                  a.channels);
  else if (a.bottleneck != a.channels)
    r.fail(Reader::join(p, "bottleneck"), "must equal channels when layer1x1 is inactive");
  if (a.head1x1)
    groups_divide(r, Reader::join(p, "head1x1.groups"), a.head1x1_groups, a.bottleneck,
                  a.head1x1_out_channels);
  if (a.film[layer1x1_post_film].active && !a.layer1x1)
    r.fail(Reader::join(p, "layer1x1_post_film"), "active while layer1x1 is not");
  if (a.film[head1x1_post_film].active && !a.head1x1)
    r.fail(Reader::join(p, "head1x1_post_film"), "active while head1x1 is not");
  const int film_dims[film_slots] = {a.channels,   zc,         a.condition_size,      zc, zc,
                                     a.bottleneck, a.channels, a.head1x1_out_channels};
  for (int s = 0; s < film_slots; ++s)
    if (a.film[s].active)
      groups_divide(r, Reader::join(p, film_keys[s]) + ".groups", a.film[s].groups,
                    a.condition_size, a.film[s].shift ? 2 * film_dims[s] : film_dims[s]);
  return a;
}

WaveNet read_wavenet(const Reader& r, const json& config, const std::string& cp, double rate,
                     int depth) {
  WaveNet w;
  const std::string lp = Reader::join(cp, "layers");
  const json& layers = r.member(config, cp, "layers");
  if (layers.is_array() && layers.size() > kMaxLayerArrays)
    r.unsupported(lp, std::to_string(layers.size()) + " layer arrays, more than the limit of " +
                          std::to_string(kMaxLayerArrays));
  if (!layers.is_array() || layers.empty())
    r.fail(lp, "expected an array of 1.." + std::to_string(kMaxLayerArrays) + " layer arrays");
  if (const json* dsp = r.optional_member(config, "condition_dsp")) {
    const std::string dp = Reader::join(cp, "condition_dsp");
    auto m = std::make_shared<Model>(read_model(r, *dsp, dp, nullptr, depth + 1));
    if (m->architecture != Architecture::wavenet || !m->sizes.empty())
      r.unsupported(dp, "sigpu runs a WaveNet of one size as condition_dsp, not " +
                            std::string(to_string(m->architecture)));
    if (m->sample_rate != rate) r.fail(Reader::join(dp, "sample_rate"), "differs from the model's");
    w.condition_dsp = std::move(m);
  }
  only_one(r, config, "in_channels", "mono input");
  const int condition_size =
      w.condition_dsp ? w.condition_dsp->wavenet.layer_arrays.back().head_size : 1;
  long receptive_field = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const std::string p = lp + "[" + std::to_string(i) + "]";
    LayerArray a = read_layer_array(r, layers[i], p);
    if (a.condition_size != condition_size)
      r.unsupported(p + ".condition_size",
                    "must be " + std::to_string(condition_size) +
                        (w.condition_dsp ? " (the condition_dsp's outputs)" : " (the mono input)"));
    if (i == 0 && a.input_size != 1) r.unsupported(p + ".input_size", "must be 1 (the mono input)");
    if (i > 0) {
      const LayerArray& prev = w.layer_arrays.back();
      if (a.input_size != prev.channels)
        r.fail(p + ".input_size", "is " + std::to_string(a.input_size) +
                                      " but the previous layer array has " +
                                      std::to_string(prev.channels) + " channels");
      const int head_in = a.head1x1 ? a.head1x1_out_channels : a.bottleneck;
      if (head_in != prev.head_size)
        r.fail(p + (a.head1x1 ? ".head1x1.out_channels" : ".channels"),
               "is " + std::to_string(head_in) + " but the previous layer array's head_size is " +
                   std::to_string(prev.head_size));
    }
    for (std::size_t k = 0; k < a.dilations.size(); ++k)
      receptive_field += static_cast<long>(a.kernel_sizes[k] - 1) * a.dilations[k];
    receptive_field += static_cast<long>(a.head_kernel_size - 1) * a.head_dilation;
    w.layer_arrays.push_back(std::move(a));
  }
  if (depth == 0 && w.layer_arrays.back().head_size != 1)
    r.unsupported(lp + "[" + std::to_string(layers.size() - 1) + "].head_size",
                  "the last layer array's head_size must be 1 (the mono output)");
  if (receptive_field > kMaxReceptiveField)
    r.unsupported(lp, "receptive field " + std::to_string(receptive_field) +
                          " exceeds the limit of " + std::to_string(kMaxReceptiveField));
  if (const json* head = r.optional_member(config, "head"))
    r.unsupported(Reader::join(cp, "head"),
                  "a WaveNet post-stack head is not supported (only null), got " +
                      head->dump().substr(0, 40));
  // The weights carry head_scale too (read last); the config's copy is only checked.
  r.number(r.member(config, cp, "head_scale"), Reader::join(cp, "head_scale"));
  return w;
}

Lstm read_lstm(const Reader& r, const json& config) {
  Lstm l;
  l.num_layers = r.integer(config, "config", "num_layers", 1, kMaxLstmLayers);
  l.input_size = r.integer(config, "config", "input_size", 1, 1);
  l.hidden_size = r.integer(config, "config", "hidden_size", 1, kMaxChannels);
  only_one(r, config, "in_channels", "mono input");
  only_one(r, config, "out_channels", "mono output");
  return l;
}

ConvNet read_convnet(const Reader& r, const json& config) {
  ConvNet c;
  c.channels = r.integer(config, "config", "channels", 1, kMaxChannels);
  c.dilations = r.dilations(config, "config");
  c.batchnorm = r.boolean(config, "config", "batchnorm");
  const ActivationSpec a =
      r.activation(r.member(config, "config", "activation"), "config.activation");
  if (a != ActivationSpec{.kind = a.kind})
    r.unsupported("config.activation", "a ConvNet's activation takes no parameters");
  c.activation = a.kind;
  only_one(r, config, "groups", "sigpu runs ConvNets without groups");
  only_one(r, config, "in_channels", "mono input");
  only_one(r, config, "out_channels", "mono output");
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
  only_one(r, config, "in_channels", "mono input");
  only_one(r, config, "out_channels", "mono output");
  return l;
}

void check_version(const Reader& r, const std::string& v) {
  // NeuralAmpModelerCore reads 0.5.0 to 0.7.x (0.7.0 fully).
  int major = -1, minor = -1, patch = -1;
  char dot1 = 0, dot2 = 0, extra = 0;
  std::istringstream in(v);
  in >> major >> dot1 >> minor >> dot2 >> patch;
  const bool well_formed = in && dot1 == '.' && dot2 == '.' && !(in >> extra);
  if (!well_formed || major != 0 || minor < 5 || minor > 7 || patch < 0)
    r.unsupported("version",
                  "unsupported version \"" + v.substr(0, 40) + "\" (sigpu reads 0.5.x to 0.7.x)");
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

/// A nested model's weights, from the JSON tree.
std::vector<float> tree_weights(const Reader& r, const json& v) {
  if (!v.is_array()) r.fail("weights", "expected an array, got " + Reader::type(v));
  std::vector<float> out;
  out.reserve(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::string p = "weights[" + std::to_string(i) + "]";
    const float f = static_cast<float>(r.number(v[i], p));
    if (!std::isfinite(f)) r.fail(p, "not a finite float: " + v[i].dump());
    out.push_back(f);
  }
  return out;
}

/// slice_channels_uniform: the sub-network of the first `channels[a]` channels of every
/// layer array (NeuralAmpModelerCore's extract_slimmed_weights).
Model slice(const Reader& r, const Model& full, const std::vector<int>& channels) {
  Model m = full;
  m.sizes.clear();
  m.weights.clear();
  const std::vector<float>& w = full.weights;
  std::size_t at = 0;
  const auto take = [&](int rows, int cols, int slim_rows, int slim_cols, int taps, bool bias) {
    for (int o = 0; o < rows; ++o)
      for (int i = 0; i < cols; ++i)
        for (int k = 0; k < taps; ++k, ++at)
          if (o < slim_rows && i < slim_cols) m.weights.push_back(w[at]);
    if (bias)
      for (int o = 0; o < rows; ++o, ++at)
        if (o < slim_rows) m.weights.push_back(w[at]);
  };
  auto& arrays = m.wavenet.layer_arrays;
  const auto& orig = full.wavenet.layer_arrays;
  for (std::size_t ai = 0; ai < orig.size(); ++ai) {
    const LayerArray& p = orig[ai];
    const std::string lp = "config.layers[" + std::to_string(ai) + "]";
    if (p.head_kernel_size != 1)
      r.unsupported(lp + ".head.kernel_size", "slimming needs a head kernel of 1");
    if (p.groups_input != 1 || p.groups_input_mixin != 1 ||
        (p.layer1x1 && p.layer1x1_groups != 1) || (p.head1x1 && p.head1x1_groups != 1))
      r.unsupported(lp + ".slimmable", "slimming needs convolutions without groups");
    LayerArray& a = arrays[ai];
    const int ch = channels[ai];
    const int bn = p.layer1x1 ? std::max(1, p.bottleneck * ch / p.channels) : ch;
    a.channels = ch;
    a.bottleneck = bn;
    a.input_size = ai == 0 ? p.input_size : channels[ai - 1];
    a.head_size = ai + 1 < orig.size() ? channels[ai + 1] : p.head_size;
    a.slim_channels.clear();
    const int cs = p.condition_size;
    take(p.channels, p.input_size, ch, a.input_size, 1, false);
    for (std::size_t l = 0; l < p.dilations.size(); ++l) {
      const bool doubled = p.gating[l] != Gating::none;
      const int fz = doubled ? 2 * p.bottleneck : p.bottleneck, sz = doubled ? 2 * bn : bn;
      take(fz, p.channels, sz, ch, p.kernel_sizes[l], true);
      take(fz, cs, sz, cs, 1, false);
      if (p.layer1x1) take(p.channels, p.bottleneck, ch, bn, 1, true);
      if (p.head1x1)
        take(p.head1x1_out_channels, p.bottleneck, p.head1x1_out_channels, bn, 1, true);
      const int full_dims[film_slots] = {
          p.channels, fz, cs, fz, fz, p.bottleneck, p.channels, p.head1x1_out_channels};
      const int slim_dims[film_slots] = {ch, sz, cs, sz, sz, bn, ch, p.head1x1_out_channels};
      for (int f = 0; f < film_slots; ++f) {
        if (!p.film[f].active) continue;
        const int n = p.film[f].shift ? 2 : 1;
        // The first rows of the scale-then-shift output, as NAM core slices them.
        take(n * full_dims[f], cs, n * slim_dims[f], cs, 1, true);
      }
    }
    const int full_head_in = p.head1x1 ? p.head1x1_out_channels : p.bottleneck;
    const int slim_head_in = p.head1x1 ? p.head1x1_out_channels : bn;
    take(p.head_size, full_head_in, a.head_size, slim_head_in, 1, p.head_bias);
  }
  m.weights.push_back(w[at]);
  return m;
}

/// The distinct slicings a size can pick (channels per layer array by NAM core's formula at
/// each breakpoint and just past it), smallest first.
void add_slim_sizes(const Reader& r, Model& m) {
  const auto& arrays = m.wavenet.layer_arrays;
  bool any = false;
  std::vector<double> points = {0.0, 1.0};
  for (const LayerArray& a : arrays) {
    any |= !a.slim_channels.empty();
    const std::size_t n = a.slim_channels.size();
    for (std::size_t i = 1; i < n; ++i) {
      const double b = static_cast<double>(i) / static_cast<double>(n);
      points.push_back(b);
      points.push_back(std::nextafter(b, 2.0));
    }
  }
  if (!any) return;
  if (m.wavenet.condition_dsp)
    r.unsupported("config.condition_dsp", "a slimmable WaveNet with a condition_dsp");
  std::sort(points.begin(), points.end());
  for (double v : points) {
    SizedModel s;
    for (const LayerArray& a : arrays) s.channels.push_back(slim_channels_for_size(a, v));
    if (!m.sizes.empty() && m.sizes.back().channels == s.channels) continue;
    if (m.sizes.size() == kMaxSizes)
      r.unsupported("config.layers",
                    "more than " + std::to_string(kMaxSizes) + " distinct slimmable sizes");
    s.model = std::make_shared<Model>(slice(r, m, s.channels));
    m.sizes.push_back(std::move(s));
  }
}

std::vector<SizedModel> read_container(const Reader& r, const json& config, int depth) {
  const json& subs = r.member(config, "config", "submodels");
  if (subs.is_array() && subs.size() > kMaxSizes)
    r.unsupported("config.submodels", std::to_string(subs.size()) +
                                          " submodels, more than the limit of " +
                                          std::to_string(kMaxSizes));
  if (!subs.is_array() || subs.empty())
    r.fail("config.submodels",
           "expected an array of 1.." + std::to_string(kMaxSizes) + " submodels");
  std::vector<SizedModel> out;
  for (std::size_t i = 0; i < subs.size(); ++i) {
    const std::string p = "config.submodels[" + std::to_string(i) + "]";
    SizedModel s;
    s.max_value = r.number(r.member(subs[i], p, "max_value"), p + ".max_value");
    if (!out.empty() && !(s.max_value > out.back().max_value))
      r.fail(p + ".max_value", "submodels must be sorted by ascending max_value");
    s.model = std::make_shared<Model>(
        read_model(r, r.member(subs[i], p, "model"), p + ".model", nullptr, depth + 1));
    out.push_back(std::move(s));
  }
  if (!(out.back().max_value >= 1.0))
    r.fail("config.submodels[" + std::to_string(subs.size() - 1) + "].max_value",
           "the last submodel's max_value must be at least 1");
  return out;
}

/// One model object: the file's top level (`top` holds its streamed weights) or a nested one
/// (a container's submodel, a condition_dsp), whose messages name where it sits.
Model read_model(const Reader& outer, const json& j, const std::string& base, const Weights* top,
                 int depth) {
  // Containers hold models that may hold a condition_dsp: deeper nesting is refused rather
  // than recursed into.
  if (depth > 3) outer.unsupported(base, "models nested more than 3 deep");
  const Reader r = base.empty() ? outer : outer.nested(base);
  if (!j.is_object()) r.fail("", "expected a JSON object, got " + std::string(j.type_name()));
  Model m;
  m.source = outer.source();
  m.version = r.string(j, "", "version");
  check_version(r, m.version);
  if (const json* rate = r.optional_member(j, "sample_rate")) {
    const double sr = r.number(*rate, "sample_rate");
    if (!(sr >= 1000 && sr <= 1e6)) r.fail("sample_rate", "out of range: " + rate->dump());
    m.sample_rate = sr;
    m.sample_rate_in_file = true;
  }
  const std::string arch = r.string(j, "", "architecture");
  const json& config = r.member(j, "", "config");
  if (!config.is_object()) r.fail("config", "expected an object");
  if (arch == "WaveNet") {
    m.architecture = Architecture::wavenet;
    m.wavenet = read_wavenet(r, config, "config", m.sample_rate, depth);
  } else if (arch == "LSTM") {
    m.architecture = Architecture::lstm;
    m.lstm = read_lstm(r, config);
  } else if (arch == "ConvNet") {
    m.architecture = Architecture::convnet;
    m.convnet = read_convnet(r, config);
  } else if (arch == "Linear") {
    m.architecture = Architecture::linear;
    m.linear = read_linear(r, config);
  } else if (arch == "SlimmableContainer") {
    m.architecture = Architecture::slimmable_container;
    m.sizes = read_container(r, config, depth);
    for (std::size_t i = 0; i < m.sizes.size(); ++i)
      if (m.sizes[i].model->sample_rate != m.sample_rate)
        r.fail("config.submodels[" + std::to_string(i) + "].model.sample_rate",
               "differs from the container's");
  } else {
    r.unsupported("architecture",
                  "unknown architecture \"" + arch.substr(0, 40) +
                      "\" (sigpu reads WaveNet, LSTM, ConvNet, Linear and SlimmableContainer)");
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
  const long count = top ? top->count : static_cast<long>(weights.size());
  if (count != expected)
    r.fail("weights", "the config needs " + std::to_string(expected) + " weights, the file has " +
                          std::to_string(count));
  if (top) {
    if (top->bad >= 0) r.fail("weights[" + std::to_string(top->bad) + "]", top->why);
    m.weights = top->values;
  } else {
    m.weights = tree_weights(r, weights);
  }
  if (m.architecture == Architecture::wavenet) {
    m.wavenet.head_scale = m.weights.back();
    add_slim_sizes(r, m);
  }
  return m;
}

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

  return read_model(r, j, "", &w, 0);
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
