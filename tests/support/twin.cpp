#include "support/twin.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <tuple>

#include <sigpu/core.hpp>

#ifdef SIGPU_HAVE_CUDA
#include <cuda_runtime.h>
#endif

namespace sigpu::test::twin {

#ifdef SIGPU_HAVE_CUDA
namespace {
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
}  // namespace
#endif

std::vector<std::uint64_t> seeds(std::initializer_list<std::uint64_t> defaults) {
  if (const char* s = std::getenv("SIGPU_TWIN_SEED"); s && *s)
    return {std::strtoull(s, nullptr, 0)};
  return defaults;
}

bool have_device() {
  return !cuda_devices().empty();
}

Arena::Arena(Memory where) : where_(where) {
#ifndef SIGPU_HAVE_CUDA
  if (where != Memory::host) throw std::runtime_error("twin::Arena: device memory needs CUDA");
#endif
}

Arena::~Arena() {
  for (const Buffer& b : buffers_) {
#ifdef SIGPU_HAVE_CUDA
    if (where_ == Memory::device) cudaFree(b.base);
    if (where_ == Memory::pinned) cudaFreeHost(b.base);
#endif
    if (where_ == Memory::host) ::operator delete (b.base, std::align_val_t{kGuardBytes});
  }
}

void* Arena::add(std::string name, std::size_t bytes, const void* values, bool checked) {
  const std::size_t total = bytes + 2 * kGuardBytes;
  void* base = nullptr;
  if (where_ == Memory::host) base = ::operator new (total, std::align_val_t{kGuardBytes});
#ifdef SIGPU_HAVE_CUDA
  if (where_ == Memory::device) check(cudaMalloc(&base, total), "cudaMalloc");
  if (where_ == Memory::pinned) check(cudaMallocHost(&base, total), "cudaMallocHost");
#endif
  Buffer b{std::move(name), static_cast<std::byte*>(base), bytes, {}, checked};
  if (values) {
    const auto* v = static_cast<const std::byte*>(values);
    b.original.assign(v, v + bytes);
  }
  buffers_.push_back(std::move(b));
  fill(buffers_.back());
  return buffers_.back().base + kGuardBytes;
}

void Arena::fill(const Buffer& b) const {
  std::vector<std::byte> image(b.bytes + 2 * kGuardBytes, std::byte{kGuard});
  std::byte* body = image.data() + kGuardBytes;
  if (!b.original.empty())
    std::memcpy(body, b.original.data(), b.original.size());
  else
    std::memset(body, kPoison, b.bytes);
  copy_in(b.base, image.data(), image.size());
}

void Arena::poison() {
  for (const Buffer& b : buffers_) fill(b);
}

// Copies wait for the whole device: kernels on streams of their own (the library's are
// non-blocking) have finished with a buffer before it is read or filled.
void Arena::copy_out(void* to, const void* from, std::size_t bytes) const {
#ifdef SIGPU_HAVE_CUDA
  if (where_ != Memory::host) check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  if (where_ == Memory::device) {
    check(cudaMemcpy(to, from, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
    return;
  }
#endif
  if (bytes) std::memcpy(to, from, bytes);
}

void Arena::copy_in(void* to, const void* from, std::size_t bytes) const {
#ifdef SIGPU_HAVE_CUDA
  if (where_ != Memory::host) check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  if (where_ == Memory::device) {
    check(cudaMemcpy(to, from, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    return;
  }
#endif
  if (bytes) std::memcpy(to, from, bytes);
}

::testing::AssertionResult Arena::intact() const {
  bool ok = true;
  auto r = ::testing::AssertionFailure();
  for (const Buffer& b : buffers_) {
    std::vector<std::byte> image(b.bytes + 2 * kGuardBytes);
    copy_out(image.data(), b.base, image.size());
    // Byte offsets from the buffer's start: guard bytes before it are negative.
    auto report = [&](const char* what, std::ptrdiff_t first, std::ptrdiff_t last,
                      std::size_t count) {
      ok = false;
      r << "\"" << b.name << "\": " << what << ", " << count << " byte(s) from offset " << first
        << " to " << last << " (buffer of " << b.bytes << " bytes); ";
    };
    for (const auto& [from, to, what] :
         {std::tuple{std::size_t{0}, kGuardBytes, "written before its start"},
          std::tuple{kGuardBytes + b.bytes, image.size(), "written past its end"}}) {
      std::ptrdiff_t first = -1, last = -1;
      std::size_t count = 0;
      for (std::size_t i = from; i < to; ++i)
        if (image[i] != std::byte{kGuard}) {
          if (first < 0) first = std::ptrdiff_t(i);
          last = std::ptrdiff_t(i);
          ++count;
        }
      if (count)
        report(what, first - std::ptrdiff_t(kGuardBytes), last - std::ptrdiff_t(kGuardBytes),
               count);
    }
    if (b.is_input) {
      std::ptrdiff_t first = -1, last = -1;
      std::size_t count = 0;
      for (std::size_t i = 0; i < b.bytes; ++i)
        if (image[kGuardBytes + i] != b.original[i]) {
          if (first < 0) first = std::ptrdiff_t(i);
          last = std::ptrdiff_t(i);
          ++count;
        }
      if (count) report("input changed", first, last, count);
    }
  }
  return ok ? ::testing::AssertionSuccess() : r;
}

bool timing() {
  const char* on = std::getenv("SIGPU_TWIN_TIMING");
  return on && *on && std::string_view(on) != "0";
}

void time_worst_case(std::string_view what, const std::function<void(void* stream)>& run) {
  if (!timing()) return;
#ifdef SIGPU_HAVE_CUDA
  if (!have_device()) return;
  cudaStream_t s;
  cudaEvent_t start, stop;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  std::vector<float> ms;
  for (int rep = 0; rep < 5; ++rep) {
    // The device is idle at start and has finished everything run() queued, on any stream,
    // before stop.
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    check(cudaEventRecord(start, s), "cudaEventRecord");
    run(s);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    check(cudaEventRecord(stop, s), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float t = 0;
    check(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
    ms.push_back(t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaStreamDestroy(s);
  std::sort(ms.begin(), ms.end());
  std::printf("[ twin time ] %.*s: best %.3f ms, median %.3f ms (%zu runs)\n", int(what.size()),
              what.data(), double(ms.front()), double(ms[ms.size() / 2]), ms.size());
#else
  (void)what;
  (void)run;
#endif
}

}  // namespace sigpu::test::twin
