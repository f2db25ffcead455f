// Integer expressions in graph files ("N", "N/2", "2*N+1"): numbers and variables joined by
// + - * / with the usual precedence, no parentheses (so no recursion on untrusted depth).
#pragma once

#include <cstdint>
#include <string_view>

#include <sigpu/audio.hpp>

namespace sigpu::audio {

/// Throws Error naming the expression and what is wrong (unknown variable, division by zero,
/// overflow beyond +-2^40, stray characters).
std::int64_t evaluate(std::string_view expression, const Variables& vars);

}  // namespace sigpu::audio
