// The twin harness: a GPU kernel (or any fast path) checked against its CPU twin, as dav1d's
// checkasm checks each assembly function against its C version. docs/design/testing.md.
//
//   for (std::uint64_t seed : twin::seeds({1, 2, 3})) {        // SIGPU_TWIN_SEED=n: that one
//     SCOPED_TRACE(twin::label("seed", seed));
//     const auto in = make_input(seed);
//     twin::Arena a(twin::Memory::device);                     // or host: emulation, host paths
//     std::int32_t* d_out = a.output<std::int32_t>("out", n);  // poisoned, guard bands around
//     run_kernel(a.input("in", in), d_out, n);                 // input: a checked copy
//     EXPECT_TRUE(a.intact());                                 // guards and inputs unchanged
//     EXPECT_TRUE(twin::equal(reference(in), a.read(d_out, n)));
//   }
//   twin::time_worst_case("restore, 8 ch", [&](void* stream) { ... });  // SIGPU_TWIN_TIMING=1
//
// Kernels that use only what cuda_emulation.hpp emulates also run, unchanged, on the CPU with
// an Arena of host memory (tests/support/test_twin.cpp shows both).
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace sigpu::test::twin {

// ---- comparison ----------------------------------------------------------------------------

namespace detail {
template <typename T>
auto printable(T v) {
  if constexpr (std::is_same_v<T, bool> || !std::is_integral_v<T>)
    return v;
  else
    return +v;  // int8_t and uint8_t as numbers
}
}  // namespace detail

/// want and got element by element: equal (operator==, so NaN never matches), or within
/// `tolerance` (|want - got| <= tolerance) where it is above 0. A failure says how many
/// elements differ, the first (index, both values) and the sizes where they differ.
template <typename T>
::testing::AssertionResult equal(std::span<const T> want, std::span<const T> got,
                                 double tolerance = 0) {
  const std::size_t n = std::min(want.size(), got.size());
  std::size_t differ = 0, first = n;
  for (std::size_t i = 0; i < n; ++i) {
    bool same = want[i] == got[i];
    if constexpr (std::is_arithmetic_v<T>)
      if (!same && tolerance > 0) same = std::fabs(double(want[i]) - double(got[i])) <= tolerance;
    if (!same && differ++ == 0) first = i;
  }
  if (differ == 0 && want.size() == got.size()) return ::testing::AssertionSuccess();
  auto r = ::testing::AssertionFailure();
  if (want.size() != got.size())
    r << "sizes differ: want " << want.size() << ", got " << got.size() << "; ";
  if (differ == 0) return r << "the first " << n << " elements are equal";
  r << differ << " of " << n << " elements differ";
  if (tolerance > 0) r << " by more than " << tolerance;
  if constexpr (requires(std::ostream & o, T v) { o << detail::printable(v); })
    r << "; first at " << first << ": want " << detail::printable(want[first]) << ", got "
      << detail::printable(got[first]);
  else
    r << "; first at " << first;
  return r;
}

/// The same for any two contiguous containers of one element type (vectors, arrays, spans).
template <typename A, typename B>
::testing::AssertionResult equal(const A& want, const B& got, double tolerance = 0) {
  using T = std::remove_cvref_t<decltype(*std::data(want))>;
  return equal<T>(std::span<const T>(std::data(want), std::size(want)),
                  std::span<const T>(std::data(got), std::size(got)), tolerance);
}

/// Member m of every element of v: arrays of structs compared one field at a time,
/// twin::equal(twin::field(want, &Candidate::pos), twin::field(got, &Candidate::pos)).
template <typename C, typename S, typename M>
std::vector<M> field(const C& v, M S::*m) {
  std::vector<M> out;
  out.reserve(std::size(v));
  for (const S& e : v) out.push_back(e.*m);
  return out;
}

// ---- cases ---------------------------------------------------------------------------------

/// The seeds of random inputs: `defaults`, or the one seed in SIGPU_TWIN_SEED to replay a
/// failure (every failure names its seed through the caller's trace).
std::vector<std::uint64_t> seeds(std::initializer_list<std::uint64_t> defaults);

/// "K 6144 P 768": names and values alternately, for SCOPED_TRACE and assertion messages.
template <typename... Parts>
std::string label(const Parts&... parts) {
  std::ostringstream s;
  ((s << (s.tellp() > 0 ? " " : "") << detail::printable(parts)), ...);
  return s.str();
}

// ---- guarded buffers -----------------------------------------------------------------------

enum class Memory { host, pinned, device };

/// Every output byte before the run (so an element the kernel never writes differs from its
/// twin's) and every guard byte around a buffer.
inline constexpr std::uint8_t kPoison = 0xA5;
inline constexpr std::uint8_t kGuard = 0xDB;
/// Guard bytes before and after each buffer: a multiple of 256, so the buffer keeps cudaMalloc's
/// alignment.
inline constexpr std::size_t kGuardBytes = 256;

/// An element whose bytes are all kPoison: what an output holds where the kernel wrote nothing.
template <typename T>
T poisoned() {
  T v;
  std::memset(static_cast<void*>(&v), kPoison, sizeof v);
  return v;
}

/// The buffers of one kernel run, in host, pinned or device memory, each between two guard
/// bands. Outputs start poisoned; inputs are copies of the caller's values. intact() then tells
/// of any write out of bounds (buffer, offset) and of any change to an input.
class Arena {
 public:
  explicit Arena(Memory where = Memory::host);
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  /// n elements, every byte kPoison.
  template <typename T>
  T* output(std::string name, std::size_t n) {
    return static_cast<T*>(add(std::move(name), n * sizeof(T), nullptr, false));
  }
  /// A copy of `values` that intact() checks the run left unchanged.
  template <typename T>
  T* input(std::string name, std::span<const T> values) {
    return static_cast<T*>(add(std::move(name), values.size_bytes(), values.data(), true));
  }
  template <typename C>
  auto* input(std::string name, const C& values) {
    using T = std::remove_cvref_t<decltype(*std::data(values))>;
    return input<T>(std::move(name), std::span<const T>(std::data(values), std::size(values)));
  }

  /// A copy of `values` that the kernel changes in place: only its guards are checked.
  template <typename C>
  auto* in_out(std::string name, const C& values) {
    using T = std::remove_cvref_t<decltype(*std::data(values))>;
    return static_cast<T*>(
        add(std::move(name), std::size(values) * sizeof(T), std::data(values), false));
  }

  /// n elements from p (a buffer of this arena), copied back to the host once the device has
  /// finished all its work.
  template <typename T>
  std::vector<T> read(const T* p, std::size_t n) const {
    std::vector<T> v(n);
    copy_out(v.data(), p, n * sizeof(T));
    return v;
  }

  /// Outputs poisoned, in-out buffers given their values and guards filled again, for another
  /// run into the same buffers.
  void poison();
  /// Every guard band as filled and every input as given; else which buffer, where (byte offset
  /// from its start, negative before it) and how many bytes changed.
  ::testing::AssertionResult intact() const;

 private:
  struct Buffer {
    std::string name;
    std::byte* base;                  ///< the allocation: guard, buffer, guard
    std::size_t bytes;                ///< of the buffer
    std::vector<std::byte> original;  ///< the values it starts with; empty: poisoned
    bool is_input;                    ///< intact() checks its values
  };
  void* add(std::string name, std::size_t bytes, const void* values, bool checked);
  void fill(const Buffer& b) const;
  void copy_out(void* to, const void* from, std::size_t bytes) const;
  void copy_in(void* to, const void* from, std::size_t bytes) const;
  Memory where_;
  std::vector<Buffer> buffers_;
};

// ---- devices and timing --------------------------------------------------------------------

/// A CUDA device is present (the GPU tests GTEST_SKIP without one).
bool have_device();

/// SIGPU_TWIN_TIMING is set (to anything but 0): worst-case inputs that cost time to build are
/// built only then.
bool timing();

/// Only with SIGPU_TWIN_TIMING set (to anything but 0): runs `run` on the worst-case input the
/// caller built, 5 times, and prints the best and the median device time (CUDA events from before
/// the call to after its last work on the device). `run` gets a stream of the harness for kernels
/// the test launches itself; library calls on streams of their own are timed as well. Never a
/// pass/fail criterion; nothing without a device.
void time_worst_case(std::string_view what, const std::function<void(void* stream)>& run);

}  // namespace sigpu::test::twin
