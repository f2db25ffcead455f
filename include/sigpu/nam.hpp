// sigpu NAM: Neural Amp Modeler (.nam) models, loaded and run in real time on the CPU and on
// the GPU, many instances at once.
//
//   auto model = sigpu::nam::load("amp.nam");              // throws Error naming file + field
//   sigpu::nam::Processor amp(model, {.sample_rate = 48000, .max_frames = 128});
//   amp.process(in, out, 128);                              // real-time safe, streaming
//
//   std::vector<const sigpu::nam::Model*> models(256, &model);   // one entry per instance
//   sigpu::nam::CudaBatch gpu(models, {.sample_rate = 48000, .max_frames = 128});
//   gpu.process(128, stream);          // reads gpu.device_input(i), writes gpu.device_output(i)
//
// Models stream: processing a signal in periods of any size gives bit-identical output to
// processing it in one piece. A fresh (or reset) instance is pre-warmed on silence like
// NeuralAmpModelerCore does (WaveNet and ConvNet: their receptive field; LSTM: half a second),
// so its first sample already sounds like the reference. No level calibration is applied
// unless asked for (normalized()).
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <sigpu/core.hpp>

namespace sigpu::nam {

// ---- the model file --------------------------------------------------------------------

enum class Architecture { wavenet, lstm, convnet, linear };
/// The activations PyTorch-trained NAM models name ("Tanh", "ReLU", ...).
enum class Activation { tanh, hardtanh, relu, leaky_relu, sigmoid, silu, hardswish };

std::string_view to_string(Architecture a);
std::string_view to_string(Activation a);

/// One WaveNet layer array: a 1x1 "rechannel" from input_size to channels, one residual layer
/// per dilation (dilated conv + condition mix-in, activation or gated activation, 1x1), and a
/// head 1x1 from channels to head_size fed by the sum of every layer's activation.
struct LayerArray {
  int input_size = 1, condition_size = 1, head_size = 1, channels = 1, kernel_size = 1;
  std::vector<int> dilations;
  Activation activation = Activation::tanh;
  bool gated = false, head_bias = false;
};
struct WaveNet {
  std::vector<LayerArray> layer_arrays;
  float head_scale = 1;  ///< the file's last weight (the config's copy is informative)
};
struct Lstm {
  int num_layers = 1, input_size = 1, hidden_size = 1;
};
/// Blocks of kernel-2 dilated convs (+ batch norm or bias) + activation, then a linear head.
struct ConvNet {
  int channels = 1;
  std::vector<int> dilations;
  bool batchnorm = false;
  Activation activation = Activation::tanh;
};
/// An FIR filter: y[n] = bias + sum_k w[k] x[n - k].
struct Linear {
  int receptive_field = 1;
  bool bias = false;
};

/// A parsed .nam file. Only the member that `architecture` names is meaningful.
struct Model {
  std::string source;   ///< the file path (or the name given to parse()), for messages
  std::string version;  ///< "0.5.x"
  std::string name;     ///< metadata.name, when present
  Architecture architecture = Architecture::wavenet;
  WaveNet wavenet;
  Lstm lstm;
  ConvNet convnet;
  Linear linear;
  std::vector<float> weights;  ///< in the file's order
  /// The rate the model was trained at. Files without "sample_rate" (versions before 0.5.2)
  /// were all trained at 48 kHz: sample_rate_in_file is false and sample_rate is 48000.
  double sample_rate = 48000;
  bool sample_rate_in_file = false;
  std::optional<double> loudness_db;  ///< metadata.loudness

  /// Samples of silence run through a fresh instance: 1 + receptive field (WaveNet, ConvNet),
  /// half a second at the model's rate (LSTM), 0 (Linear: its history is all zeros anyway).
  long prewarm_samples() const;
  /// Past input samples an output sample depends on (0 for the LSTM, which is recurrent).
  long receptive_field() const;
  /// True when both describe the same network (architecture and config): their instances can
  /// share CUDA launches even with different weights.
  bool same_shape(const Model& o) const;
};

/// Loads a .nam file (JSON, version 0.5.x). Throws Error naming the file and the field for a
/// missing or unreadable file, bad JSON (with the byte position), an unsupported version or
/// architecture, a bad config value, a weight count that does not match the config (both
/// numbers), or a weight that is not a finite float (its index).
Model load(const std::filesystem::path& path);
/// The same from text; `source` names it in messages.
Model parse(std::string_view json, std::string_view source);

/// A copy whose output is scaled so that the model's metadata loudness becomes target_db
/// (NeuralAmpModelerCore's "normalize output"). Throws Error when the file has no loudness.
Model normalized(const Model& m, double target_db = -18.0);

// ---- CPU ----------------------------------------------------------------------------------

struct Options {
  /// The rate the caller runs at. sigpu does not resample: a model trained at another rate is
  /// refused (Error naming both rates).
  double sample_rate = 48000;
  int max_frames = 4096;  ///< the largest period process() will be given (1..131072)
};

/// One model instance on the CPU: the serial reference.
class Processor {
 public:
  /// Allocates all state, checks the rate, pre-warms. Any thread; not real-time safe.
  Processor(const Model& m, const Options& o);
  ~Processor();
  Processor(Processor&&) noexcept;
  Processor& operator=(Processor&&) noexcept;

  /// Audio thread: 0 <= frames <= max_frames (larger periods are processed in pieces);
  /// in and out may alias. No allocation, lock or exception.
  void process(const float* in, float* out, int frames) noexcept;
  /// Back to the freshly pre-warmed state. Not real-time safe (it runs the pre-warm).
  void reset();
  const Model& model() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Many instances on all cores: instance i runs models[i] (the pointers must stay valid for
/// the constructor only), on `threads` threads (0: one per core). Between periods the threads
/// spin, so that a period starts at once; within one they take instances one at a time, so
/// that a thread the OS preempts holds up no fixed share.
class CpuBatch {
 public:
  CpuBatch(std::span<const Model* const> models, const Options& o, unsigned threads = 0);
  ~CpuBatch();
  CpuBatch(CpuBatch&&) noexcept;
  CpuBatch& operator=(CpuBatch&&) noexcept;

  int size() const;
  unsigned threads() const;
  /// in[i], out[i]: instance i's period. Blocks until every instance is done.
  void process(const float* const* in, float* const* out, int frames);
  void reset();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- CUDA ---------------------------------------------------------------------------------

struct CudaOptions {
  double sample_rate = 48000;
  int max_frames = 128;  ///< the largest period; ring buffers are sized for it
  int device = 0;
  /// Stage a block's weights in shared memory (when they fit) instead of reading them from
  /// global memory through the L1 cache.
  bool shared_weights = true;
};

/// Many instances on one GPU, all advanced by one kernel launch per period. Every instance
/// runs a model of the same shape (Model::same_shape); instances given the same Model pointer
/// share one copy of its weights. Supports WaveNet and LSTM models; others are refused.
/// Throws Error in builds without CUDA or without a device.
class CudaBatch {
 public:
  /// Allocates, uploads the weights and pre-warms every instance. Not real-time safe.
  CudaBatch(std::span<const Model* const> models, const CudaOptions& o);
  ~CudaBatch();
  CudaBatch(CudaBatch&&) noexcept;
  CudaBatch& operator=(CudaBatch&&) noexcept;

  int size() const;
  int max_frames() const;
  /// The batch's own device buffers: max_frames floats per instance.
  float* device_input(int instance) const;
  float* device_output(int instance) const;
  /// Points the kernel at the caller's device buffers instead (one pointer per instance,
  /// each holding max_frames floats). Copies the pointer tables; not real-time safe.
  void bind(std::span<float* const> d_inputs, std::span<float* const> d_outputs);

  /// Audio thread: enqueues one period (frames <= max_frames) on `stream` (a cudaStream_t;
  /// nullptr: the batch's own stream). No allocation and no synchronisation: the output is
  /// ready when the stream reaches this point. Capturable into a CUDA graph (all state,
  /// including the stream position, lives on the device).
  void process(int frames, void* stream = nullptr);
  /// Convenience for tests and tools: copies the inputs up, processes, copies the outputs
  /// back and waits.
  void process_host(const float* const* in, float* const* out, int frames);
  /// The batch's own stream (a cudaStream_t).
  void* stream() const;
  void reset();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sigpu::nam
