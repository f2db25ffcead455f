#include "convolution/layout.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace sigpu::convolution {

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw Error("convolution config: " + what);
}

std::string num(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

void check_index(std::size_t path, const char* field, std::uint32_t value, std::uint64_t limit,
                 const char* limit_name) {
  if (value >= limit)
    fail("paths[" + std::to_string(path) + "]." + field + " = " + std::to_string(value) +
         " is out of range (" + limit_name + " = " + std::to_string(limit) + ")");
}

}  // namespace

void validate(const Config& c) {
  const std::uint32_t B = c.partition;
  if (B < kMinPartition || B > kMaxPartition || (B & (B - 1)) != 0)
    fail("partition = " + std::to_string(B) + " is not a power of two in [" +
         std::to_string(kMinPartition) + ", " + std::to_string(kMaxPartition) + "]");
  if (c.inputs == 0) fail("inputs = 0: at least one input is needed");
  if (c.outputs == 0) fail("outputs = 0: at least one output is needed");
  if (c.irs.empty()) fail("irs is empty: at least one impulse response is needed");
  for (std::size_t i = 0; i < c.irs.size(); ++i) {
    const auto& ir = c.irs[i];
    const std::string name = "irs[" + std::to_string(i) + "]";
    if (ir.empty()) fail(name + " is empty");
    if (ir.size() > kMaxIrTaps)
      fail(name + " has " + std::to_string(ir.size()) + " taps, more than " +
           std::to_string(kMaxIrTaps) + " (10 s at 48 kHz)");
    const auto bad = std::find_if(ir.begin(), ir.end(), [](float v) { return !std::isfinite(v); });
    if (bad != ir.end()) fail(name + "[" + std::to_string(bad - ir.begin()) + "] is not finite");
  }
  if (c.paths.empty()) fail("paths is empty: at least one path is needed");
  for (std::size_t p = 0; p < c.paths.size(); ++p) {
    check_index(p, "input", c.paths[p].input, c.inputs, "inputs");
    check_index(p, "ir", c.paths[p].ir, c.irs.size(), "irs.size()");
    check_index(p, "output", c.paths[p].output, c.outputs, "outputs");
  }
  if (!std::isfinite(c.wet)) fail("wet is not finite");
  if (!std::isfinite(c.dry)) fail("dry is not finite");
  if (c.dry != 0 && c.inputs != c.outputs)
    fail("dry = " + num(c.dry) + " needs inputs == outputs (inputs = " + std::to_string(c.inputs) +
         ", outputs = " + std::to_string(c.outputs) + ")");
}

Layout make_layout(const Config& c) {
  validate(c);
  Layout L;
  L.partition = c.partition;
  L.fft_size = 2 * c.partition;
  L.bins = c.partition + 1;
  L.inputs = c.inputs;
  L.outputs = c.outputs;

  L.ir_offset.push_back(0);
  for (const auto& ir : c.irs) {
    const auto P = static_cast<std::uint32_t>(partitions(ir.size(), c.partition));
    L.ir_partitions.push_back(P);
    L.ir_offset.push_back(L.ir_offset.back() + P);
    L.max_partitions = std::max(L.max_partitions, P);
  }

  // An input that feeds no path still gets one slot: its spectrum is computed and dropped.
  L.ring_slots.assign(c.inputs, 1);
  for (const Path& p : c.paths)
    L.ring_slots[p.input] = std::max(L.ring_slots[p.input], L.ir_partitions[p.ir]);
  L.ring_offset.push_back(0);
  for (std::uint32_t s : L.ring_slots) L.ring_offset.push_back(L.ring_offset.back() + s);

  L.output_begin.assign(c.outputs + 1, 0);
  for (const Path& p : c.paths) ++L.output_begin[p.output + 1];
  for (std::uint32_t o = 0; o < c.outputs; ++o) L.output_begin[o + 1] += L.output_begin[o];
  L.terms.resize(c.paths.size());
  std::vector<std::uint32_t> fill(L.output_begin.begin(), L.output_begin.end() - 1);
  for (const Path& p : c.paths) L.terms[fill[p.output]++] = {p.input, p.ir};
  return L;
}

}  // namespace sigpu::convolution
