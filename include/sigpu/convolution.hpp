// sigpu convolution: many long FIR filters (reverbs, cabinets) in real time, on the CPU (FFTW)
// and on the GPU (cuFFT), with no latency beyond one period.
//
//   sigpu::convolution::Config c{.partition = 128, .inputs = 2, .outputs = 2,
//                                .irs = {ll, lr, rl, rr},          // true stereo
//                                .paths = {{0, 0, 0}, {0, 1, 1}, {1, 2, 0}, {1, 3, 1}}};
//   sigpu::convolution::CpuConvolver cpu(c);                       // allocates and plans
//   cpu.process(in, out);   // one period: in [inputs][partition] -> out [outputs][partition]
//
// Algorithm: uniformly partitioned overlap-save. The partition equals the period, the FFT size
// is twice that, every IR is cut into partitions whose spectra are computed once, and each
// input keeps a frequency-domain delay line of its last spectra. Output o of a period is
//   wet * sum over paths (i, ir, o) of (in[i] * irs[ir]) + dry * in[o]
// exactly as a direct convolution of the whole stream would give it (up to float rounding).
// Buffers are channel-major: channel c's samples are [c * partition, (c + 1) * partition).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include <sigpu/core.hpp>

struct CUstream_st;  // cudaStream_t is CUstream_st*; callers need not include CUDA headers

namespace sigpu::convolution {

inline constexpr std::uint32_t kMinPartition = 16, kMaxPartition = 8192;
/// 10 s at 48 kHz.
inline constexpr std::size_t kMaxIrTaps = 480000;

/// out[output] += in[input] convolved with irs[ir]. Several paths may share an input, an IR or
/// an output (their results add up).
struct Path {
  std::uint32_t input = 0, ir = 0, output = 0;
};

struct Config {
  std::uint32_t partition = 0;  ///< the period in frames: a power of two in [16, 8192]
  std::uint32_t inputs = 0, outputs = 0;
  std::vector<std::vector<float>> irs;  ///< 1 to kMaxIrTaps taps each
  std::vector<Path> paths;              ///< at least one
  float wet = 1, dry = 0;               ///< dry != 0 needs inputs == outputs (in[c] -> out[c])
};

/// Throws Error naming the field (`partition`, `irs[3]`, `paths[2].output`, `dry`) when the
/// config is not usable.
void validate(const Config& config);

/// Partitions of an IR of `taps` taps: ceil(taps / partition).
inline std::size_t partitions(std::size_t taps, std::uint32_t partition) {
  return (taps + partition - 1) / partition;
}

/// The CPU backend. threads == 1 is the serial reference (only the calling thread works);
/// otherwise a pool of `threads` threads (0: one per hardware thread) splits each period over
/// inputs, then over outputs. FFTW plans are made in the constructor.
/// Its workers spin for 4 ms after each period before they sleep (core/rt_pool.hpp), so a
/// period's hand-off costs no scheduler wake-up.
/// Threads: construct and destroy off the real-time thread (they allocate and plan); process()
/// and reset() from one thread at a time (the audio thread).
class CpuConvolver {
 public:
  explicit CpuConvolver(const Config& config, unsigned threads = 1);
  ~CpuConvolver();
  CpuConvolver(CpuConvolver&&) noexcept;
  CpuConvolver& operator=(CpuConvolver&&) noexcept;

  /// One period. `in` holds inputs * partition samples, `out` outputs * partition (throws Error
  /// otherwise). Allocates nothing. Call from one thread at a time.
  void process(std::span<const float> in, std::span<float> out);
  /// Clears the history: the next period starts as if the stream began there.
  void reset();

  std::uint32_t partition() const;
  std::uint32_t inputs() const;
  std::uint32_t outputs() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The CUDA backend. The constructor allocates all device memory, makes the cuFFT plans and
/// computes the IR spectra on the device (on the legacy default stream), then synchronises the
/// device; construction and destruction (cudaFree) belong off the real-time thread.
///
/// process() enqueues one period on `stream` and returns: it allocates nothing, never
/// synchronises and keeps its history counter in device memory, so a sequence of calls can be
/// captured once into a CUDA graph (cudaStreamBeginCapture on a non-default stream) and the
/// graph replayed every period with new samples in the same `d_in` buffer. Periods must be
/// processed in order: do not enqueue one convolver on two streams at once.
class CudaConvolver {
 public:
  explicit CudaConvolver(const Config& config, int device = 0);
  ~CudaConvolver();
  CudaConvolver(CudaConvolver&&) noexcept;
  CudaConvolver& operator=(CudaConvolver&&) noexcept;

  /// One period on `stream`: d_in (device, inputs * partition floats) -> d_out (device,
  /// outputs * partition floats). The constructor's device must be current.
  void process(const float* d_in, float* d_out, CUstream_st* stream);
  /// Enqueues the clearing of the history on `stream` (no synchronisation).
  void reset(CUstream_st* stream);

  std::uint32_t partition() const;
  std::uint32_t inputs() const;
  std::uint32_t outputs() const;
  /// Device memory this convolver holds (spectra, delay lines, buffers, cuFFT work areas).
  std::size_t device_bytes() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sigpu::convolution
