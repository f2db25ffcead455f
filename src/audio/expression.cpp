#include "audio/expression.hpp"

#include <cctype>
#include <string>

namespace sigpu::audio {
namespace {

constexpr std::int64_t kLimit = std::int64_t{1} << 40;

struct Scanner {
  std::string_view s;
  std::size_t pos = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw Error("expression '" + std::string(s) + "': " + what + " at character " +
                std::to_string(pos + 1));
  }
  void skip_space() {
    while (pos < s.size() && s[pos] == ' ') ++pos;
  }
  std::int64_t checked(std::int64_t v) const {
    if (v > kLimit || v < -kLimit) fail("value out of range");
    return v;
  }
  std::int64_t factor(const Variables& vars) {
    skip_space();
    if (pos >= s.size()) fail("number or variable expected");
    if (std::isdigit(static_cast<unsigned char>(s[pos]))) {
      std::int64_t v = 0;
      while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
        v = checked(v * 10 + (s[pos++] - '0'));
      }
      return v;
    }
    const std::size_t start = pos;
    while (pos < s.size() && (std::isalnum(static_cast<unsigned char>(s[pos])) || s[pos] == '_')) {
      ++pos;
    }
    if (pos == start) fail("number or variable expected");
    const std::string name(s.substr(start, pos - start));
    const auto it = vars.find(name);
    if (it == vars.end()) {
      pos = start;
      fail("unknown variable '" + name + "'");
    }
    return checked(it->second);
  }
  std::int64_t term(const Variables& vars) {
    std::int64_t v = factor(vars);
    for (;;) {
      skip_space();
      if (pos >= s.size() || (s[pos] != '*' && s[pos] != '/')) return v;
      const char op = s[pos++];
      const std::int64_t r = factor(vars);
      if (op == '/' && r == 0) fail("division by zero");
      v = checked(op == '*' ? v * r : v / r);
    }
  }
};

}  // namespace

std::int64_t evaluate(std::string_view expression, const Variables& vars) {
  Scanner sc{expression};
  std::int64_t v = sc.term(vars);
  for (;;) {
    sc.skip_space();
    if (sc.pos >= expression.size()) return v;
    const char op = expression[sc.pos];
    if (op != '+' && op != '-') sc.fail("unexpected character");
    ++sc.pos;
    const std::int64_t r = sc.term(vars);
    v = sc.checked(op == '+' ? v + r : v - r);
  }
}

}  // namespace sigpu::audio
