// Reads the fixed-length and Exp-Golomb syntax elements of parameter sets, slice headers and
// SEI (descriptors u(n), ue(v), se(v) of 7.2) from an RBSP, bounds-checked: running past the end
// or a value out of its range throws DecodeError naming the element.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/bit_reader.hpp"
#include "hevc/errors.hpp"

namespace sigpu::hevc {

class SyntaxReader {
 public:
  explicit SyntaxReader(std::span<const std::uint8_t> rbsp, std::size_t start_byte = 0)
      : br_(rbsp.data(), rbsp.size(), start_byte), size_(rbsp.size()) {}

  std::uint32_t u(unsigned n, const char* name) {
    const std::uint32_t v = br_.read(n);
    check(name);
    return v;
  }
  bool flag(const char* name) { return u(1, name) != 0; }

  std::uint32_t ue(const char* name, std::uint32_t max = 0xfffffffe) {
    const std::uint32_t zeros = br_.read_unary();
    if (zeros > 31) fail(name, "Exp-Golomb code longer than 32 bits");
    const std::uint64_t v = (std::uint64_t{1} << zeros) - 1 + br_.read64(zeros);
    check(name);
    if (v > max) range(name, static_cast<std::int64_t>(v), 0, max);
    return static_cast<std::uint32_t>(v);
  }

  std::int32_t se(const char* name, std::int32_t min = INT32_MIN + 1,
                  std::int32_t max = INT32_MAX) {
    const std::uint32_t k = ue(name);
    const std::int64_t v = (k & 1) ? (std::int64_t{k} + 1) / 2 : -std::int64_t{k} / 2;
    if (v < min || v > max) range(name, v, min, max);
    return static_cast<std::int32_t>(v);
  }

  /// Checks an already read value against [min, max].
  static void expect(const char* name, std::int64_t v, std::int64_t min, std::int64_t max) {
    if (v < min || v > max) range(name, v, min, max);
  }

  void skip_bits(std::uint64_t n, const char* name) {
    br_.skip(n);
    check(name);
  }
  bool byte_aligned() const { return (br_.bit_position() & 7) == 0; }
  void align_to_byte() { br_.align_to_byte(); }
  std::uint64_t bit_position() const { return br_.bit_position(); }
  std::size_t byte_position() const { return br_.byte_position(); }
  std::uint64_t bits_left() const {
    const std::uint64_t total = std::uint64_t{size_} * 8;
    return br_.bit_position() >= total ? 0 : total - br_.bit_position();
  }
  /// True when more data than the RBSP trailing bits remains (7.2 more_rbsp_data()).
  bool more_rbsp_data(std::span<const std::uint8_t> rbsp) const;

  [[noreturn]] static void fail(const char* name, const std::string& what) {
    throw DecodeError(std::string(name) + ": " + what);
  }

 private:
  void check(const char* name) {
    if (br_.overrun()) fail(name, "data ends inside this element (truncated NAL unit)");
  }
  [[noreturn]] static void range(const char* name, std::int64_t v, std::int64_t min,
                                 std::int64_t max) {
    fail(name, "value " + std::to_string(v) + " outside " + std::to_string(min) + ".." +
                   std::to_string(max));
  }

  BitReader br_;
  std::size_t size_;
};

inline bool SyntaxReader::more_rbsp_data(std::span<const std::uint8_t> rbsp) const {
  // The last one bit of the RBSP is rbsp_stop_one_bit; data remains if it lies beyond here.
  std::size_t last = rbsp.size();
  while (last > 0 && rbsp[last - 1] == 0) --last;
  if (last == 0) return false;
  const int stop_bit = __builtin_ctz(rbsp[last - 1]);
  const std::uint64_t stop_pos = std::uint64_t{last} * 8 - 1 - stop_bit;
  return br_.bit_position() < stop_pos;
}

}  // namespace sigpu::hevc
