// The three-stage console graph, parameterised by N (examples/audio/console.json holds the
// same text).
#pragma once

#include <string_view>

namespace sigpu::audio {

std::string_view console_json();

}  // namespace sigpu::audio
