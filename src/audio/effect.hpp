// The effect interface. An effect is one node of the graph over any number of channels; its
// descriptor (effects/descriptor.hpp) declares its parameters, its kind (effects/*/) does the
// per-sample work on the CPU and the GPU, and this is the host side:
//
//   parse      (graph load) reads the parameters through the descriptor's table (type and
//              range checked there), knowing the input and side-chain channel counts; sets
//              the output channel count
//   configure  (Engine) checks what depends on the sample rate and period (Nyquist, delays)
//   setup      adds the node's jobs, state and parameter slots to its kind's part of the Plan
//              and writes its parameters there; the backend allocates and runs the plan
//   check      (any thread) validates a runtime update against the table (and validate())
//              without changing anything
//   apply      (audio thread, period boundary) writes a checked update into the Plan's
//              parameters, as a ramp where the descriptor says `ramped`
//   teardown   is the backend dropping the Plan; effects hold no buffers themselves.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>
#include <sigpu/audio.hpp>

#include "audio/effects/descriptor.hpp"
#include "audio/plan.hpp"

namespace sigpu::audio {

using Json = nlohmann::json;

/// A bad parameter: the graph loader or Engine adds the node's name to the message.
class ParamError : public Error {
 public:
  ParamError(std::string param, const std::string& what, bool port = false)
      : Error(what), param_(std::move(param)), port_(port) {}
  /// A channel-count problem of a port ("input", "sidechain") rather than a parameter.
  static ParamError port(std::string name, const std::string& what) {
    return ParamError(std::move(name), what, true);
  }
  /// A valid value this build cannot use (a .nam architecture it does not run).
  static ParamError unsupported(std::string name, const std::string& what) {
    ParamError e(std::move(name), what);
    e.unsupported_ = true;
    return e;
  }
  const std::string& param() const { return param_; }
  bool is_port() const { return port_; }
  bool is_unsupported() const { return unsupported_; }

 private:
  std::string param_;
  bool port_ = false, unsupported_ = false;
};

/// Reads an effect's "params" object: each read checks type and range; finish() rejects
/// names nobody read (a misspelt parameter must not be silently ignored).
class ParamReader {
 public:
  /// base_dir: where relative file names (IRs) are looked up; empty for the working directory.
  ParamReader(const Json& params, const Variables& vars, std::string base_dir = {});
  bool has(std::string_view name) const;
  /// The parameter as its spec says: type and range checked, the fallback when absent.
  double number(const ParamSpec& spec);
  /// An integer or an expression over the graph's variables ("N/2").
  int integer(const ParamSpec& spec);
  /// A file parameter (required), resolved against the graph file's folder.
  std::string file(const ParamSpec& spec);
  /// The raw value (arrays, objects); nullptr when absent.
  const Json* raw(std::string_view name);
  void finish() const;
  const Variables& variables() const { return vars_; }
  /// A file name from the graph, resolved against the graph file's folder.
  std::string path(const std::string& name) const;

 private:
  const Json& params_;
  const Variables& vars_;
  std::string base_dir_;
  std::vector<std::string> read_;
};

/// The spec named `name` in `table` (a programming error when absent).
const ParamSpec& param_spec(std::span<const ParamSpec> table, std::string_view name);
/// A band's choice value checked against spec.choices; throws ParamError naming `param`.
void check_choice(const ParamSpec& spec, std::string_view param, std::string_view value);

/// A number as a person writes it (30000, 0.5, 1e-06).
std::string number_text(double v);
/// Throws ParamError when v is outside [lo, hi] (or not finite).
double check_range(std::string_view param, double v, double lo, double hi);

struct Ports {
  int input = 0, sidechain = 0, output = 0;  ///< channels
};

/// Where a node's channels live in the arena.
struct NodeIo {
  std::vector<std::uint32_t> in, side, out;
};

class Effect {
 public:
  virtual ~Effect() = default;
  virtual Kind kind() const = 0;
  const EffectDescriptor& descriptor() const { return *descriptor_; }
  virtual std::unique_ptr<Effect> clone() const = 0;
  /// ports.input and ports.sidechain are given; sets ports.output. Throws ParamError.
  virtual void parse(ParamReader& params, Ports& ports) = 0;
  /// Throws ParamError for values the sample rate or period rules out.
  virtual void configure(double sample_rate, int period) {
    sample_rate_ = sample_rate;
    period_ = period;
  }
  virtual void setup(Plan& plan, const NodeIo& io) = 0;
  /// Returns the parameter's id for apply(); throws ParamError (unknown name, a parameter the
  /// descriptor marks fixed, a value out of its range or refused by validate()). The id is the
  /// parameter's index in the descriptor's table.
  virtual int check(std::string_view param, double value) const;
  virtual void apply(int id, double value, Plan& plan) = 0;
  bool has_sidechain() const { return descriptor_->sidechain; }

 protected:
  /// Checks beyond the table's range (Nyquist, a delay's line length); throws ParamError.
  virtual void validate(std::string_view, int, double) const {}

  double sample_rate_ = 48000;
  int period_ = 128;

 private:
  friend std::unique_ptr<Effect> make_effect(std::string_view type);
  const EffectDescriptor* descriptor_ = nullptr;
};

/// Effects by their "type" in graph files; nullptr for an unknown type.
std::unique_ptr<Effect> make_effect(std::string_view type);
/// The descriptor of a type; nullptr for an unknown type.
const EffectDescriptor* find_effect(std::string_view type);
/// The known types, for error messages.
std::string effect_types();

/// exp(-1 / (t fs)): one-pole smoothing coefficient for a time constant of t seconds.
float smoothing_coefficient(double seconds, double sample_rate);
inline double db_to_gain(double db) {
  return std::pow(10.0, db / 20.0);
}

template <typename Derived>
class EffectBase : public Effect {
 public:
  std::unique_ptr<Effect> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
};

}  // namespace sigpu::audio
