#include "audio/effect.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "audio/expression.hpp"

namespace sigpu::audio {
std::string number_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

ParamReader::ParamReader(const Json& params, const Variables& vars, std::string base_dir)
    : params_(params), vars_(vars), base_dir_(std::move(base_dir)) {}

std::string ParamReader::path(const std::string& name) const {
  if (base_dir_.empty() || name.starts_with('/')) return name;
  return base_dir_ + "/" + name;
}

bool ParamReader::has(std::string_view name) const {
  return params_.is_object() && params_.contains(name);
}

const Json* ParamReader::raw(std::string_view name) {
  read_.emplace_back(name);
  if (!has(name)) return nullptr;
  return &params_.at(std::string(name));
}

double check_range(std::string_view param, double v, double lo, double hi) {
  if (!std::isfinite(v) || v < lo || v > hi) {
    throw ParamError(std::string(param), number_text(v) + " is out of range [" + number_text(lo) +
                                             ", " + number_text(hi) + "]");
  }
  return v;
}

double ParamReader::number(const ParamSpec& spec) {
  const Json* v = raw(spec.name);
  if (!v) return spec.fallback;
  if (!v->is_number()) throw ParamError(std::string(spec.name), "a number is expected");
  return check_range(spec.name, v->get<double>(), spec.lo, spec.hi);
}

int ParamReader::integer(const ParamSpec& spec) {
  const std::string name(spec.name);
  const Json* v = raw(name);
  if (!v) return static_cast<int>(spec.fallback);
  std::int64_t n = 0;
  if (v->is_number_integer()) {
    n = v->get<std::int64_t>();
  } else if (v->is_string()) {
    try {
      n = evaluate(v->get<std::string>(), vars_);
    } catch (const Error& e) {
      throw ParamError(name, e.what());
    }
  } else {
    throw ParamError(name, "an integer or an expression string is expected");
  }
  if (n < spec.lo || n > spec.hi) {
    throw ParamError(name, std::to_string(n) + " is out of range [" + number_text(spec.lo) + ", " +
                               number_text(spec.hi) + "]");
  }
  return static_cast<int>(n);
}

std::string ParamReader::file(const ParamSpec& spec) {
  const Json* v = raw(spec.name);
  if (!v || !v->is_string()) {
    throw ParamError(std::string(spec.name), "the " + std::string(spec.help) + " is missing");
  }
  return v->get<std::string>();
}

void ParamReader::finish() const {
  if (params_.is_null()) return;
  if (!params_.is_object()) throw ParamError("params", "an object is expected");
  for (const auto& [key, value] : params_.items()) {
    if (std::find(read_.begin(), read_.end(), key) == read_.end()) {
      throw ParamError(key, "unknown parameter");
    }
  }
}

const ParamSpec& param_spec(std::span<const ParamSpec> table, std::string_view name) {
  for (const auto& p : table) {
    if (p.name == name) return p;
  }
  throw std::logic_error("audio: no parameter spec '" + std::string(name) + "'");
}

void check_choice(const ParamSpec& spec, std::string_view param, std::string_view value) {
  // choices: "a, b, c"
  for (std::string_view rest = spec.choices; !rest.empty();) {
    const auto comma = rest.find(", ");
    if (rest.substr(0, comma) == value) return;
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 2);
  }
  throw ParamError(std::string(param),
                   "'" + std::string(value) + "' is not one of " + std::string(spec.choices));
}

int Effect::check(std::string_view param, double value) const {
  const auto& table = descriptor_->params;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const ParamSpec& p = table[i];
    if (p.name != param) continue;
    if (p.update == ParamUpdate::fixed || p.type != ParamType::number) {
      throw ParamError(std::string(param),
                       "is set in the graph file only (a change rebuilds "
                       "the graph)");
    }
    check_range(param, value, p.lo, p.hi);
    validate(param, static_cast<int>(i), value);
    return static_cast<int>(i);
  }
  throw ParamError(std::string(param), "unknown parameter of " + std::string(descriptor_->type));
}

float smoothing_coefficient(double seconds, double sample_rate) {
  if (seconds <= 0) return 0.0f;
  return static_cast<float>(std::exp(-1.0 / (seconds * sample_rate)));
}

}  // namespace sigpu::audio
