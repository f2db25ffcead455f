// CudaBatch: the instances' weights, state and I/O pointer tables in device memory, one
// kernel launch per period (wavenet_kernel.cuh, lstm_kernel.cuh).
#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <sigpu/nam.hpp>

#include "core/cuda/buffer.hpp"
#include "nam/cuda/lstm_kernel.cuh"
#include "nam/cuda/net_desc.hpp"
#include "nam/cuda/wavenet_a2_kernel.cuh"
#include "nam/cuda/wavenet_kernel.cuh"
#include "nam/gpu_wavenet_program.hpp"
#include "nam/layout.hpp"
#include "nam/processor.hpp"
#include "nam/ring.hpp"

namespace sigpu::nam {

namespace {

using sigpu::cuda::DeviceBuffer;
using sigpu::cuda::PinnedBuffer;

constexpr int kMaxCudaFrames = 4096;
constexpr int kMaxWarpLstmHidden = 128;  // lstm_kernel.cuh: 4 units a lane

int padded(long n) {
  return static_cast<int>((n + 3) / 4 * 4);
}

bool is_a1_wavenet(const Model& m) {
  return m.architecture == Architecture::wavenet && m.sizes.empty() &&
         a2_feature(m.wavenet).empty();
}

// Which kernel runs the batch: the A1 one (its descriptor in the constant bank) for WaveNets of
// one A1 shape, the LSTM one (a warp per instance) for LSTMs of one shape it fits, else the
// general one (any WaveNet, LSTMs among them).
enum class Kernel { a1, lstm, any_wavenet };

Kernel pick_kernel(std::span<const Model* const> models) {
  const Model& m0 = *models[0];
  bool all_a1 = true, all_lstm = true;
  for (const Model* m : models) {
    if (m->architecture == Architecture::convnet || m->architecture == Architecture::linear)
      refuse_on_cuda(*m,
                     std::string(to_string(m->architecture)) + " runs on the CPU backends only");
    all_lstm = all_lstm && m->architecture == Architecture::lstm && m->same_shape(m0) &&
               m->lstm.hidden_size <= kMaxWarpLstmHidden;
    all_a1 = all_a1 && is_a1_wavenet(*m) && m->same_shape(m0);
  }
  return all_a1 ? Kernel::a1 : all_lstm ? Kernel::lstm : Kernel::any_wavenet;
}

cuda::WnNetDesc describe_wavenet(const Model& m, int max_frames) {
  const WaveNetLayout layout = wavenet_layout(m.wavenet);
  cuda::WnNetDesc d{};
  const auto& arrays = m.wavenet.layer_arrays;
  if (static_cast<int>(arrays.size()) > cuda::kMaxArrays)
    refuse_on_cuda(m, "more than " + std::to_string(cuda::kMaxArrays) + " layer arrays");
  d.num_arrays = static_cast<int>(arrays.size());
  d.head_scale = static_cast<int>(layout.head_scale);
  d.weight_floats = padded(layout.count);
  d.widest = 1;
  long state = 0;
  int layer = 0;
  for (int a = 0; a < d.num_arrays; ++a) {
    const LayerArray& c = arrays[a];
    const WaveNetArrayOffsets& off = layout.arrays[a];
    cuda::WnArrayDesc& A = d.arrays[a];
    A.in = c.input_size;
    A.channels = c.channels;
    A.zc = c.gated ? 2 * c.channels : c.channels;
    A.head_size = c.head_size;
    A.kernel = c.kernel_size;
    A.gated = c.gated;
    A.activation = static_cast<int>(c.activation);
    A.first_layer = layer;
    A.num_layers = static_cast<int>(c.dilations.size());
    A.rechannel_w = static_cast<int>(off.rechannel_w);
    A.head_w = static_cast<int>(off.head_w);
    A.head_b = static_cast<int>(off.head_b);
    d.widest = std::max({d.widest, c.channels, c.head_size, c.input_size});
    for (const WaveNetLayerOffsets& lo : off.layers) {
      if (layer == cuda::kMaxLayers)
        refuse_on_cuda(m, "more than " + std::to_string(cuda::kMaxLayers) + " layers");
      cuda::WnLayerDesc& L = d.layers[layer++];
      L.dilation = lo.dilation;
      L.conv_w = static_cast<int>(lo.conv_w);
      L.conv_b = static_cast<int>(lo.conv_b);
      L.mixin_w = static_cast<int>(lo.mixin_w);
      L.out_w = static_cast<int>(lo.out_w);
      L.out_b = static_cast<int>(lo.out_b);
      const long len = ring_size(static_cast<long>(c.kernel_size - 1) * lo.dilation + max_frames);
      L.ring = static_cast<int>(state);
      L.ring_mask = static_cast<int>(len - 1);
      state += len * c.channels;
    }
  }
  if (state > (1L << 30)) refuse_on_cuda(m, "its history does not fit 32-bit offsets");
  d.state_floats = static_cast<int>(state);
  return d;
}

cuda::LstmNetDesc describe_lstm(const Model& m) {
  const LstmLayout layout = lstm_layout(m.lstm);
  cuda::LstmNetDesc d{};
  if (m.lstm.num_layers > cuda::kMaxLstmLayers)
    refuse_on_cuda(m, "more than " + std::to_string(cuda::kMaxLstmLayers) + " LSTM layers");
  d.num_layers = m.lstm.num_layers;
  d.hidden = m.lstm.hidden_size;
  d.head_w = static_cast<int>(layout.head_w);
  d.head_b = static_cast<int>(layout.head_b);
  d.weight_floats = padded(layout.count);
  d.state_floats = 2 * d.hidden * d.num_layers;
  for (int l = 0; l < d.num_layers; ++l) {
    d.layers[l].in = layout.layers[l].input_size;
    d.layers[l].w = static_cast<int>(layout.layers[l].w);
    d.layers[l].b = static_cast<int>(layout.layers[l].b);
  }
  return d;
}

// Makes `device` current before the members that allocate on it are built.
int use_device(int device) {
  if (sigpu::cuda_devices().empty()) throw UnsupportedError("nam: no CUDA device");
  SIGPU_CUDA_CHECK(cudaSetDevice(device));
  return device;
}

}  // namespace

struct CudaBatch::Impl {
  int device;
  Kernel kernel = Kernel::a1;
  int n = 0, max_frames = 0;
  bool shared_weights = true;
  sigpu::cuda::Stream stream;
  cuda::WnNetDesc wn{};
  cuda::LstmNetDesc lstm{};
  int weight_floats = 0;  // per instance (A1, LSTM); of the largest net (any WaveNet)
  std::size_t state_total = 0;
  long prewarm = 0;
  std::size_t smem = 0;
  int block = 32;
  std::vector<float> lstm_initial;  // LSTM: every instance's h0, c0 (state layout)
  // Any WaveNet: the program's tables, each instance's size asked for (host memory the kernel
  // reads, so set_size is a plain store), the sizes' crossfades.
  WaveNetProgram program;
  DeviceBuffer<cuda::A2NetDesc> a2_nets;
  DeviceBuffer<cuda::A2ArrayDesc> a2_arrays;
  DeviceBuffer<cuda::A2LayerDesc> a2_layers;
  DeviceBuffer<cuda::A2InstanceDesc> a2_instances;
  DeviceBuffer<cuda::SizeFade> fades;
  PinnedBuffer<int> wanted;
  std::vector<Model> size_models;  // per instance: its sizes' config (no weights), for set_size
  cuda::A2Args a2{};

  DeviceBuffer<float> weights, state, in_buf, out_buf, zeros;
  DeviceBuffer<const float*> instance_weights;
  DeviceBuffer<long long> positions;
  // Pointer tables: the batch's own buffers, the caller's (bind), and silence for pre-warm.
  DeviceBuffer<const float*> own_in, bound_in, zero_in;
  DeviceBuffer<float*> own_out, bound_out;
  bool bound = false;
  PinnedBuffer<float> host_in, host_out;

  Impl(std::span<const Model* const> models, const CudaOptions& o)
      : device(use_device(o.device)),
        n(static_cast<int>(models.size())),
        max_frames(o.max_frames),
        shared_weights(o.shared_weights) {
    if (models.empty()) throw Error("nam: a CUDA batch needs at least one instance");
    const Model& m0 = *models[0];
    kernel = pick_kernel(models);
    for (const Model* m : models) check_sample_rate(*m, o.sample_rate);
    check_max_frames(o.max_frames);
    if (o.max_frames > kMaxCudaFrames)
      throw Error("nam: the cuda backend takes periods of up to " + std::to_string(kMaxCudaFrames) +
                  " frames, asked for " + std::to_string(o.max_frames));
    prewarm = m0.prewarm_samples();
    switch (kernel) {
      case Kernel::a1:
        wn = describe_wavenet(m0, max_frames);
        weight_floats = wn.weight_floats;
        state_total = static_cast<std::size_t>(n) * wn.state_floats;
        upload_weights(models);
        break;
      case Kernel::lstm:
        lstm = describe_lstm(m0);
        weight_floats = lstm.weight_floats;
        state_total = static_cast<std::size_t>(n) * lstm.state_floats;
        upload_weights(models);
        break;
      case Kernel::any_wavenet:
        upload_program(models);
        break;
    }
    configure_launch();

    const std::size_t io = static_cast<std::size_t>(n) * max_frames;
    state.reserve(state_total);
    positions.reserve(n);
    in_buf.reserve(io);
    out_buf.reserve(io);
    zeros.reserve(max_frames);
    SIGPU_CUDA_CHECK(cudaMemsetAsync(in_buf.get(), 0, io * sizeof(float), stream.get()));
    SIGPU_CUDA_CHECK(cudaMemsetAsync(zeros.get(), 0, max_frames * sizeof(float), stream.get()));
    host_in.reserve(io);
    host_out.reserve(io);
    std::vector<const float*> in_ptrs(n), zero_ptrs(n, zeros.get());
    std::vector<float*> out_ptrs(n);
    for (int i = 0; i < n; ++i) {
      in_ptrs[i] = in_buf.get() + static_cast<std::size_t>(i) * max_frames;
      out_ptrs[i] = out_buf.get() + static_cast<std::size_t>(i) * max_frames;
    }
    upload(own_in, in_ptrs);
    upload(zero_in, zero_ptrs);
    upload(own_out, out_ptrs);
    if (kernel == Kernel::lstm) {
      const LstmLayout layout = lstm_layout(m0.lstm);
      const int H = m0.lstm.hidden_size;
      for (const Model* m : models)
        for (const LstmLayerOffsets& lo : layout.layers) {
          lstm_initial.insert(lstm_initial.end(), m->weights.begin() + lo.h0,
                              m->weights.begin() + lo.h0 + H);
          lstm_initial.insert(lstm_initial.end(), m->weights.begin() + lo.c0,
                              m->weights.begin() + lo.c0 + H);
        }
    }
    reset();
  }

  template <typename T>
  void upload(DeviceBuffer<T>& dst, const std::vector<T>& src) {
    dst.reserve(src.size());
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.data(), src.size() * sizeof(T),
                                     cudaMemcpyHostToDevice, stream.get()));
    stream.synchronize();  // src is pageable and may go away
  }

  // One padded copy per distinct Model object; instances point at theirs.
  void upload_weights(std::span<const Model* const> models) {
    std::map<const Model*, std::size_t> slot;
    std::vector<float> all;
    std::vector<std::size_t> offset(n);
    for (int i = 0; i < n; ++i) {
      auto [it, fresh] = slot.try_emplace(models[i], all.size());
      if (fresh) {
        all.insert(all.end(), models[i]->weights.begin(), models[i]->weights.end());
        all.resize(it->second + weight_floats, 0.0f);
      }
      offset[i] = it->second;
    }
    upload(weights, all);
    std::vector<const float*> ptrs(n);
    for (int i = 0; i < n; ++i) ptrs[i] = weights.get() + offset[i];
    upload(instance_weights, ptrs);
  }

  void upload_program(std::span<const Model* const> models) {
    program = wavenet_program(models, max_frames);
    upload(weights, program.weights);
    program.bind_weights(weights.get());
    upload(a2_nets, program.nets);
    upload(a2_arrays, program.arrays);
    upload(a2_layers, program.layers);
    upload(a2_instances, program.instances);
    fades.reserve(n);
    wanted.reserve(n);
    for (int i = 0; i < n; ++i) {
      Model sized;
      sized.architecture = models[i]->architecture;
      sized.wavenet = models[i]->wavenet;
      sized.sizes = models[i]->sizes;
      size_models.push_back(std::move(sized));
      wanted.get()[i] = size_models.back().size_index(1.0);
    }
    int* wanted_on_device = nullptr;
    SIGPU_CUDA_CHECK(cudaHostGetDevicePointer(&wanted_on_device, wanted.get(), 0));
    weight_floats = program.largest_net;
    state_total = static_cast<std::size_t>(program.state_floats);
    prewarm = program.prewarm;
    a2.nets = a2_nets.get();
    a2.arrays = a2_arrays.get();
    a2.layers = a2_layers.get();
    a2.instances = a2_instances.get();
    a2.fades = fades.get();
    a2.wanted = wanted_on_device;
    a2.widest = program.widest;
    a2.max_sizes = program.max_sizes;
  }

  void configure_launch() {
    int dev = 0, max_smem = 0;
    SIGPU_CUDA_CHECK(cudaGetDevice(&dev));
    SIGPU_CUDA_CHECK(
        cudaDeviceGetAttribute(&max_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    auto fits = [&](std::size_t work) {
      return work + static_cast<std::size_t>(weight_floats) * sizeof(float) <=
             static_cast<std::size_t>(max_smem);
    };
    std::size_t work = 0;
    if (kernel == Kernel::a1) {
      work = (static_cast<std::size_t>(max_frames) * (1 + 5 * wn.widest)) * sizeof(float);
      // A warp per 32 frames of a channel; up to 512 threads for the widest array.
      int widest_c = 1;
      for (int a = 0; a < wn.num_arrays; ++a) widest_c = std::max(widest_c, wn.arrays[a].channels);
      block = std::clamp((widest_c * max_frames + 31) / 32 * 32, 64, 512);
    } else if (kernel == Kernel::any_wavenet) {
      work = static_cast<std::size_t>(
                 cuda::a2_work_floats(program.widest, program.max_sizes, max_frames)) *
             sizeof(float);
      block = std::clamp((program.widest * max_frames + 31) / 32 * 32, 64, 512);
    } else {
      work = static_cast<std::size_t>(3 * lstm.hidden * lstm.num_layers) * sizeof(float);
      block = 32;
    }
    if (static_cast<std::size_t>(max_smem) < work)
      throw Error("nam: a period of " + std::to_string(max_frames) +
                  " frames needs more shared memory than the device has");
    shared_weights = shared_weights && fits(work);
    smem = work + (shared_weights ? static_cast<std::size_t>(weight_floats) * sizeof(float) : 0);
    const int bytes = static_cast<int>(smem);
    a2.staged_floats = shared_weights ? weight_floats : 0;
    if (kernel == Kernel::any_wavenet) {
      SIGPU_CUDA_CHECK(cudaFuncSetAttribute(cuda::wavenet_a2_period_kernel<true>,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
      SIGPU_CUDA_CHECK(cudaFuncSetAttribute(cuda::wavenet_a2_period_kernel<false>,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    } else if (kernel == Kernel::a1) {
      SIGPU_CUDA_CHECK(cudaFuncSetAttribute(cuda::wavenet_period_kernel<true>,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
      SIGPU_CUDA_CHECK(cudaFuncSetAttribute(cuda::wavenet_period_kernel<false>,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    } else {
      SIGPU_CUDA_CHECK(cudaFuncSetAttribute(cuda::lstm_period_kernel<true>,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
      SIGPU_CUDA_CHECK(cudaFuncSetAttribute(cuda::lstm_period_kernel<false>,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    }
  }

  void launch(const float* const* in, float* const* out, int frames, cudaStream_t s) {
    if (frames <= 0) return;
    const float* const* w = instance_weights.get();
    if (kernel == Kernel::any_wavenet) {
      cuda::A2Args p = a2;
      p.state = state.get();
      p.positions = positions.get();
      p.inputs = in;
      p.outputs = out;
      if (shared_weights)
        cuda::wavenet_a2_period_kernel<true><<<n, block, smem, s>>>(p, frames);
      else
        cuda::wavenet_a2_period_kernel<false><<<n, block, smem, s>>>(p, frames);
    } else if (kernel == Kernel::a1) {
      if (shared_weights)
        cuda::wavenet_period_kernel<true>
            <<<n, block, smem, s>>>(wn, w, state.get(), positions.get(), in, out, frames);
      else
        cuda::wavenet_period_kernel<false>
            <<<n, block, smem, s>>>(wn, w, state.get(), positions.get(), in, out, frames);
    } else {
      if (shared_weights)
        cuda::lstm_period_kernel<true>
            <<<n, block, smem, s>>>(lstm, w, state.get(), in, out, frames);
      else
        cuda::lstm_period_kernel<false>
            <<<n, block, smem, s>>>(lstm, w, state.get(), in, out, frames);
    }
    SIGPU_CUDA_CHECK_LAUNCH();
  }

  void reset() {
    const std::size_t bytes = state_total * sizeof(float);
    if (kernel == Kernel::any_wavenet) {  // at the size asked for, not crossfading into it
      std::vector<cuda::SizeFade> f(n);
      for (int i = 0; i < n; ++i) f[i] = {wanted.get()[i], -1, 0};
      upload(fades, f);
    }
    if (kernel == Kernel::lstm)
      SIGPU_CUDA_CHECK(cudaMemcpyAsync(state.get(), lstm_initial.data(), bytes,
                                       cudaMemcpyHostToDevice, stream.get()));
    else if (kernel == Kernel::any_wavenet)
      SIGPU_CUDA_CHECK(cudaMemcpyAsync(state.get(), program.initial_state.data(), bytes,
                                       cudaMemcpyHostToDevice, stream.get()));
    else
      SIGPU_CUDA_CHECK(cudaMemsetAsync(state.get(), 0, bytes, stream.get()));
    SIGPU_CUDA_CHECK(cudaMemsetAsync(positions.get(), 0, n * sizeof(long long), stream.get()));
    for (long left = prewarm; left > 0; left -= max_frames)
      launch(zero_in.get(), own_out.get(), static_cast<int>(std::min<long>(left, max_frames)),
             stream.get());
    stream.synchronize();
  }
};

CudaBatch::CudaBatch(std::span<const Model* const> models, const CudaOptions& o)
    : impl_(std::make_unique<Impl>(models, o)) {}
CudaBatch::~CudaBatch() = default;
CudaBatch::CudaBatch(CudaBatch&&) noexcept = default;
CudaBatch& CudaBatch::operator=(CudaBatch&&) noexcept = default;

int CudaBatch::size() const {
  return impl_->n;
}
int CudaBatch::max_frames() const {
  return impl_->max_frames;
}
float* CudaBatch::device_input(int i) const {
  return impl_->in_buf.get() + static_cast<std::size_t>(i) * impl_->max_frames;
}
float* CudaBatch::device_output(int i) const {
  return impl_->out_buf.get() + static_cast<std::size_t>(i) * impl_->max_frames;
}
void CudaBatch::bind(std::span<float* const> d_inputs, std::span<float* const> d_outputs) {
  if (static_cast<int>(d_inputs.size()) != impl_->n ||
      static_cast<int>(d_outputs.size()) != impl_->n)
    throw Error("nam: bind() needs one input and one output pointer per instance (" +
                std::to_string(impl_->n) + ")");
  impl_->upload(impl_->bound_in, std::vector<const float*>(d_inputs.begin(), d_inputs.end()));
  impl_->upload(impl_->bound_out, std::vector<float*>(d_outputs.begin(), d_outputs.end()));
  impl_->bound = true;
}
void CudaBatch::process(int frames, void* stream) {
  Impl& b = *impl_;
  const cudaStream_t s = stream ? static_cast<cudaStream_t>(stream) : b.stream.get();
  const int f = std::min(frames, b.max_frames);
  if (b.bound)
    b.launch(b.bound_in.get(), b.bound_out.get(), f, s);
  else
    b.launch(b.own_in.get(), b.own_out.get(), f, s);
}
void CudaBatch::process_host(const float* const* in, float* const* out, int frames) {
  Impl& b = *impl_;
  const std::size_t stride = b.max_frames;
  for (int done = 0; done < frames;) {
    const int f = std::min(frames - done, b.max_frames);
    for (int i = 0; i < b.n; ++i)
      std::memcpy(b.host_in.get() + i * stride, in[i] + done, f * sizeof(float));
    const cudaStream_t s = b.stream.get();
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(b.in_buf.get(), b.host_in.get(), b.n * stride * sizeof(float),
                                     cudaMemcpyHostToDevice, s));
    b.launch(b.own_in.get(), b.own_out.get(), f, s);
    SIGPU_CUDA_CHECK(cudaMemcpyAsync(b.host_out.get(), b.out_buf.get(),
                                     b.n * stride * sizeof(float), cudaMemcpyDeviceToHost, s));
    b.stream.synchronize();
    for (int i = 0; i < b.n; ++i)
      std::memcpy(out[i] + done, b.host_out.get() + i * stride, f * sizeof(float));
    done += f;
  }
}
void* CudaBatch::stream() const {
  return impl_->stream.get();
}
void CudaBatch::reset() {
  impl_->reset();
}
void CudaBatch::set_size(int instance, double size) noexcept {
  Impl& b = *impl_;
  if (b.kernel != Kernel::any_wavenet) return;
  std::atomic_ref<int>(b.wanted.get()[instance])
      .store(b.size_models[static_cast<std::size_t>(instance)].size_index(size),
             std::memory_order_relaxed);
}

}  // namespace sigpu::nam
