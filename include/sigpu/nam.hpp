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

enum class Architecture { wavenet, lstm, convnet, linear, slimmable_container };
/// The activations NAM models name ("Tanh", "ReLU", ...; from format 0.6 also objects with
/// parameters, ActivationSpec). fast_tanh is NAM core's "Fasttanh" approximation.
enum class Activation {
  tanh,
  hardtanh,
  relu,
  leaky_relu,
  sigmoid,
  silu,
  hardswish,
  fast_tanh,
  prelu,
  leaky_hardtanh,
  softsign
};
/// An activation with its parameters (NeuralAmpModelerCore's ActivationConfig). A plain name
/// in the file gives the defaults below.
struct ActivationSpec {
  Activation kind = Activation::tanh;
  float negative_slope = 0.01f;        ///< LeakyReLU, PReLU with one slope
  std::vector<float> negative_slopes;  ///< PReLU with one slope per channel
  float min_val = -1, max_val = 1, min_slope = 0.01f, max_slope = 0.01f;  ///< LeakyHardtanh
  bool operator==(const ActivationSpec&) const = default;
};
/// How a layer combines the two halves a, b of its doubled bottleneck: gated gives
/// act(a) * sec(b), blended sec(b) * act(a) + (1 - sec(b)) * a.
enum class Gating { none, gated, blended };
/// FiLM: x * scale + shift (shift optional), scale and shift from a grouped 1x1 of the condition.
struct Film {
  bool active = false, shift = false;
  int groups = 1;
  bool operator==(const Film&) const = default;
};
/// The FiLM slots of a layer, in the order of their weights in the file.
enum FilmSlot {
  conv_pre_film,
  conv_post_film,
  input_mixin_pre_film,
  input_mixin_post_film,
  activation_pre_film,
  activation_post_film,
  layer1x1_post_film,
  head1x1_post_film,
  film_slots
};

std::string_view to_string(Architecture a);
std::string_view to_string(Activation a);
struct Model;

/// One WaveNet layer array: a 1x1 "rechannel" from input_size to channels, one residual layer
/// per dilation (dilated conv + condition mix-in, activation or gated activation, 1x1), and a
/// head 1x1 from channels to head_size fed by the sum of every layer's activation.
///
/// Formats 0.6 and 0.7 (A2) add, per layer: its own kernel size, activation, gating mode and
/// secondary activation; per array: a bottleneck width, grouped convolutions, optional layer1x1
/// and head1x1 convolutions, eight FiLM slots and a head convolution with a kernel. The A1
/// fields above the line stay filled for A1-shaped arrays (kernel_size: the first layer's).
struct LayerArray {
  int input_size = 1, condition_size = 1, head_size = 1, channels = 1, kernel_size = 1;
  std::vector<int> dilations;
  Activation activation = Activation::tanh;
  bool gated = false, head_bias = false;
  // ----
  int bottleneck = 1;                       ///< the layer's inner width (default: channels)
  std::vector<int> kernel_sizes;            ///< per layer
  std::vector<ActivationSpec> activations;  ///< per layer
  std::vector<Gating> gating;               ///< per layer
  std::vector<ActivationSpec> secondary;    ///< per layer (used when gating is not none)
  int groups_input = 1, groups_input_mixin = 1;
  bool layer1x1 = true;
  int layer1x1_groups = 1;
  bool head1x1 = false;
  int head1x1_out_channels = 1, head1x1_groups = 1;
  Film film[film_slots];
  int head_kernel_size = 1, head_dilation = 1;
  /// "slimmable": {"method": "slice_channels_uniform"}: the channel counts a size may pick.
  std::vector<int> slim_channels;
};
struct WaveNet {
  std::vector<LayerArray> layer_arrays;
  float head_scale = 1;  ///< the file's last weight (the config's copy is informative)
  /// A nested WaveNet run on the input whose outputs are the condition of every layer array.
  std::shared_ptr<const Model> condition_dsp;
};
/// One model of a SlimmableContainer, or one channel slicing of a slimmable WaveNet.
struct SizedModel {
  double max_value = 1;       ///< container: chosen for sizes below this (the last one otherwise)
  std::vector<int> channels;  ///< slimmable WaveNet: each layer array's channels
  std::shared_ptr<const Model> model;
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
  /// The models a size picks: a SlimmableContainer's submodels, or every distinct slicing of a
  /// slimmable WaveNet (the full one included). Empty for a model of one size.
  std::vector<SizedModel> sizes;

  /// Which of `sizes` a size in 0..1 picks, as NeuralAmpModelerCore's SetSlimmableSize does
  /// (container: the first whose max_value exceeds it, else the last; slimmable WaveNet:
  /// allowed_channels[floor(size * count)] per layer array). 0 for a model of one size.
  int size_index(double size) const;

  /// Samples of silence run through a fresh instance: 1 + receptive field (WaveNet, ConvNet),
  /// half a second at the model's rate (LSTM), 0 (Linear: its history is all zeros anyway).
  long prewarm_samples() const;
  /// Past input samples an output sample depends on (0 for the LSTM, which is recurrent).
  long receptive_field() const;
  /// True when both describe the same network (architecture and config): their instances can
  /// share CUDA launches even with different weights.
  bool same_shape(const Model& o) const;
};

/// Loads a .nam file (JSON, versions 0.5.x to 0.7.x). Throws Error naming the file and the field
/// for a missing or unreadable file, bad JSON (with the byte position), an unsupported version or
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
  /// The size (0..1) of a slimmable model (Model::sizes); ignored by others. Any thread,
  /// real-time safe: every size's network runs on the input all the time (so a model of
  /// several sizes costs their sum), and a change crossfades the outputs over
  /// kSizeCrossfadeFrames, so it does not click. The default is 1 (the largest).
  void set_size(double size) noexcept;
  static constexpr int kSizeCrossfadeFrames = 1024;

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
  /// Instance i's size (Processor::set_size). Any thread, real-time safe.
  void set_size(int instance, double size) noexcept;

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

/// Many instances on one GPU, all advanced by one kernel launch per period; instances given
/// the same Model pointer share one copy of its weights. Each instance runs its own model:
/// WaveNets of any format (0.5 to 0.7: every A2 feature, condition_dsp), LSTMs, slimmable
/// WaveNets and SlimmableContainers of those, mixed in one batch. ConvNet and Linear (alone or
/// as a size) are refused with UnsupportedError naming the model and the feature.
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
  /// Back to the freshly pre-warmed state, at the sizes asked for (no crossfade).
  void reset();
  /// Instance i's size (Processor::set_size): taken at the next period, crossfading over
  /// Processor::kSizeCrossfadeFrames as Processor does. Any thread, real-time safe (a store to
  /// host memory the kernel reads); ignored for models of one size.
  void set_size(int instance, double size) noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sigpu::nam
