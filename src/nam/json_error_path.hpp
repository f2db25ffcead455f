// Finds which field of a JSON text a syntax error is in ("weights[57]"), so that a bad .nam
// file is reported by field, not only by byte.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sigpu::nam {

struct JsonSyntaxError {
  std::size_t byte = 0;  ///< offset of the offending character
  std::string path;      ///< e.g. "config.layers[1].dilations[2]"; empty at the top level
  std::string what;      ///< the parser's description
};

/// Parses `text` for its structure only; on a syntax error, says where. Returns false when
/// the text is well-formed JSON.
bool find_json_syntax_error(std::string_view text, JsonSyntaxError& error);

}  // namespace sigpu::nam
