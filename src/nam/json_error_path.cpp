#include "nam/json_error_path.hpp"

#include <vector>

#include <nlohmann/json.hpp>

namespace sigpu::nam {
namespace {

using json = nlohmann::json;

// Tracks the path of the value being read; nothing is stored, so a hostile file costs only
// its nesting depth (a vector entry per level; nlohmann's SAX parser does not recurse).
class PathTracker final : public nlohmann::json_sax<json> {
 public:
  JsonSyntaxError* error = nullptr;

  bool null() override { return scalar(); }
  bool boolean(bool) override { return scalar(); }
  bool number_integer(number_integer_t) override { return scalar(); }
  bool number_unsigned(number_unsigned_t) override { return scalar(); }
  bool number_float(number_float_t, const string_t&) override { return scalar(); }
  bool string(string_t&) override { return scalar(); }
  bool binary(binary_t&) override { return scalar(); }
  bool start_object(std::size_t) override { return open(false); }
  bool key(string_t& k) override {
    levels_.back().key = k;
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(true); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t byte, const std::string&,
                   const nlohmann::detail::exception& e) override {
    error->byte = byte > 0 ? byte - 1 : 0;
    error->what = e.what();
    error->path = path();
    return false;
  }

 private:
  struct Level {
    bool array = false;
    long count = 0;   // elements finished (arrays)
    std::string key;  // the member being read (objects)
  };
  std::vector<Level> levels_;

  bool scalar() {
    if (!levels_.empty()) ++levels_.back().count;
    return true;
  }
  bool open(bool array) {
    levels_.push_back({array, 0, {}});
    return true;
  }
  bool close() {
    levels_.pop_back();
    return scalar();
  }
  std::string path() const {
    std::string p;
    for (const Level& l : levels_) {
      if (l.array) {
        p += '[';
        p += std::to_string(l.count);
        p += ']';
      } else if (!l.key.empty()) {
        if (!p.empty()) p += ".";
        p += l.key;
      }
    }
    return p;
  }
};

}  // namespace

bool find_json_syntax_error(std::string_view text, JsonSyntaxError& error) {
  PathTracker tracker;
  tracker.error = &error;
  return !json::sax_parse(text.begin(), text.end(), &tracker);
}

}  // namespace sigpu::nam
