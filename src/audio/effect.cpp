#include "audio/effect.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

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

double ParamReader::number(std::string_view name, double fallback, double lo, double hi) {
  const Json* v = raw(name);
  if (!v) return fallback;
  if (!v->is_number()) throw ParamError(std::string(name), "a number is expected");
  return check_range(name, v->get<double>(), lo, hi);
}

int ParamReader::integer(std::string_view name, int fallback, int lo, int hi) {
  const Json* v = raw(name);
  if (!v) return fallback;
  std::int64_t n = 0;
  if (v->is_number_integer()) {
    n = v->get<std::int64_t>();
  } else if (v->is_string()) {
    try {
      n = evaluate(v->get<std::string>(), vars_);
    } catch (const Error& e) {
      throw ParamError(std::string(name), e.what());
    }
  } else {
    throw ParamError(std::string(name), "an integer or an expression string is expected");
  }
  if (n < lo || n > hi) {
    throw ParamError(std::string(name), std::to_string(n) + " is out of range [" +
                                            std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  return static_cast<int>(n);
}

std::string ParamReader::choice(std::string_view name, std::string_view fallback,
                                const std::vector<std::string>& allowed) {
  const Json* v = raw(name);
  if (!v) return std::string(fallback);
  if (!v->is_string()) throw ParamError(std::string(name), "a string is expected");
  const auto s = v->get<std::string>();
  if (std::find(allowed.begin(), allowed.end(), s) == allowed.end()) {
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    throw ParamError(std::string(name), "'" + s + "' is not one of " + list);
  }
  return s;
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

void read_numbers(ParamReader& reader, std::span<const NumberParam> table, double* values) {
  for (std::size_t i = 0; i < table.size(); ++i) {
    values[i] = reader.number(table[i].name, table[i].fallback, table[i].lo, table[i].hi);
  }
}

int check_number(std::span<const NumberParam> table, std::string_view effect,
                 std::string_view param, double value) {
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (param == table[i].name) {
      check_range(param, value, table[i].lo, table[i].hi);
      return static_cast<int>(i);
    }
  }
  throw ParamError(std::string(param), "unknown parameter of " + std::string(effect));
}

float smoothing_coefficient(double seconds, double sample_rate) {
  if (seconds <= 0) return 0.0f;
  return static_cast<float>(std::exp(-1.0 / (seconds * sample_rate)));
}

}  // namespace sigpu::audio
