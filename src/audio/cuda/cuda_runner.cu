// The CUDA backend: the plan's groups become the kernel nodes of one CUDA graph (a node waits
// only for the groups it reads, so independent branches run concurrently), between a gather
// node (input) and a scatter node (output). A period is one graph launch; when the caller's
// I/O buffers change, only those two nodes are re-pointed (cudaGraphExecKernelNodeSetParams),
// nothing is captured again.
#include <algorithm>
#include <span>
#include <utility>
#include <vector>

#include "audio/convolution_node.hpp"
#include "audio/cuda/kernels.cuh"
#include "audio/effects/nam_node.hpp"
#include "audio/runner.hpp"
#include "core/cuda/check.hpp"

namespace sigpu::audio {
namespace {

/// Device memory counted by the module's allocator hooks.
template <typename T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(std::size_t n) : n_(n) {
    if (!n) return;
    SIGPU_CUDA_CHECK(cudaMalloc(&p_, bytes()));
    count_device(static_cast<std::int64_t>(bytes()), 1);
  }
  ~DeviceArray() {
    if (!p_) return;
    cudaFree(p_);
    count_device(-static_cast<std::int64_t>(bytes()), -1);
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  T* get() const { return p_; }
  std::size_t bytes() const { return n_ * sizeof(T); }
  template <typename V>
  void upload(const V& host, cudaStream_t s) {
    if (n_) SIGPU_CUDA_CHECK(cudaMemcpyAsync(p_, host.data(), bytes(), cudaMemcpyHostToDevice, s));
  }
  void zero(cudaStream_t s) {
    if (n_) SIGPU_CUDA_CHECK(cudaMemsetAsync(p_, 0, bytes(), s));
  }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

/// Page-locked host memory the kernels read and write directly; counted as host memory.
class PinnedFloats {
 public:
  explicit PinnedFloats(std::size_t n) : n_(n) {
    SIGPU_CUDA_CHECK(cudaMallocHost(&p_, std::max<std::size_t>(1, n) * sizeof(float)));
    count_host(static_cast<std::int64_t>(n * sizeof(float)), 1);
  }
  ~PinnedFloats() {
    cudaFreeHost(p_);
    count_host(-static_cast<std::int64_t>(n_ * sizeof(float)), -1);
  }
  PinnedFloats(const PinnedFloats&) = delete;
  float* get() const { return p_; }

 private:
  float* p_ = nullptr;
  std::size_t n_ = 0;
};

template <typename T>
DeviceArray<T> device_copy(const HostVector<T>& host, cudaStream_t s) {
  DeviceArray<T> d(host.size());
  d.upload(host, s);
  return d;
}

class CudaRunner final : public Runner {
 public:
  explicit CudaRunner(const Plan& plan)
      : plan_(plan),
        input_(std::size_t(plan.inputs) * plan.period),
        output_(plan.outputs.size() * plan.period) {
    SIGPU_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    try {
      allocate();
      build_graph();
    } catch (...) {
      release();
      throw;
    }
  }
  ~CudaRunner() override { release(); }

  float* input_buffer() override { return input_.get(); }
  float* output_buffer() override { return output_.get(); }
  int kernels() const override { return kernels_; }

  void process(const float* in, float* out, Params& params) override {
    const Params& p = params;
    if (p.dirty[int(Kind::mix)]) gains_.upload(p.gains, stream_);
    if (p.dirty[int(Kind::eq)]) bands_.upload(p.bands, stream_);
    if (p.dirty[int(Kind::gate)]) gate_params_.upload(p.gate, stream_);
    if (p.dirty[int(Kind::compressor)]) compressor_params_.upload(p.compressor, stream_);
    if (p.dirty[int(Kind::delay)]) delay_params_.upload(p.delay, stream_);
    params.dirty = {};
    if (in != io_in_ || out != io_out_) {
      io_in_ = in;
      io_out_ = out;
      set_io_params();
      if (gather_) {
        SIGPU_CUDA_CHECK(cudaGraphExecKernelNodeSetParams(exec_, gather_, &gather_params_));
      }
      SIGPU_CUDA_CHECK(cudaGraphExecKernelNodeSetParams(exec_, scatter_, &scatter_params_));
    }
    SIGPU_CUDA_CHECK(cudaGraphLaunch(exec_, stream_));
    SIGPU_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

 private:
  void allocate() {
    const Plan& p = plan_;
    arena_ = DeviceArray<float>(p.arena);
    outputs_ = device_copy(p.outputs, stream_);
    mix_ = device_copy(p.mix, stream_);
    terms_ = device_copy(p.terms, stream_);
    eq_ = device_copy(p.eq, stream_);
    gate_ = device_copy(p.gate, stream_);
    compressor_ = device_copy(p.compressor, stream_);
    delay_ = device_copy(p.delay, stream_);
    gains_ = device_copy(p.params.gains, stream_);
    bands_ = device_copy(p.params.bands, stream_);
    gate_params_ = device_copy(p.params.gate, stream_);
    compressor_params_ = device_copy(p.params.compressor, stream_);
    delay_params_ = device_copy(p.params.delay, stream_);
    eq_state_ = DeviceArray<double>(p.eq_state);
    gate_state_ = DeviceArray<dsp::GateState>(p.gate_state);
    compressor_state_ = DeviceArray<dsp::CompressorState>(p.compressor_state);
    delay_state_ = DeviceArray<dsp::DelayState>(p.delay_state);
    rings_ = DeviceArray<float>(p.ring);
    arena_.zero(stream_);
    eq_state_.zero(stream_);
    gate_state_.zero(stream_);
    compressor_state_.zero(stream_);
    delay_state_.zero(stream_);
    rings_.zero(stream_);
    SIGPU_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  /// A group's kernel: one thread per job (cuda::jobs_kernel).
  template <typename Args>
  cudaGraphNode_t add_jobs(Args args, const std::vector<cudaGraphNode_t>& deps) {
    return add_kernel(reinterpret_cast<void*>(cuda::jobs_kernel<Args>), args.count, args, deps);
  }

  template <typename Args>
  cudaGraphNode_t add_kernel(void* fn, std::uint32_t count, Args& args,
                             const std::vector<cudaGraphNode_t>& deps) {
    void* argv[1];
    const cudaKernelNodeParams k = launch(fn, count, argv, &args);
    cudaGraphNode_t node;
    SIGPU_CUDA_CHECK(cudaGraphAddKernelNode(&node, graph_, deps.data(), deps.size(), &k));
    ++kernels_;
    return node;
  }

  /// The I/O nodes' launch parameters, pointing at io_in_ / io_out_.
  void set_io_params() {
    gather_args_ = {io_in_, arena_.get(), std::uint32_t(plan_.inputs) * plan_.period};
    scatter_args_ = {outputs_.get(), arena_.get(), io_out_,
                     static_cast<std::uint32_t>(plan_.outputs.size()), plan_.period};
    gather_params_ = launch(reinterpret_cast<void*>(cuda::gather_kernel), gather_args_.count,
                            gather_argv_, &gather_args_);
    scatter_params_ = launch(reinterpret_cast<void*>(cuda::copy_channels_kernel),
                             scatter_args_.channels * plan_.period, scatter_argv_, &scatter_args_);
  }
  static cudaKernelNodeParams launch(void* fn, std::uint32_t count, void** argv, void* args) {
    cudaKernelNodeParams k{};
    k.func = fn;
    k.gridDim = dim3(std::min<std::uint32_t>(4096, (count + cuda::kBlock - 1) / cuda::kBlock));
    k.blockDim = dim3(cuda::kBlock);
    argv[0] = args;
    k.kernelParams = argv;
    return k;
  }

  void build_graph() {
    SIGPU_CUDA_CHECK(cudaGraphCreate(&graph_, 0));
    io_in_ = input_.get();
    io_out_ = output_.get();
    set_io_params();
    if (plan_.inputs > 0) {
      SIGPU_CUDA_CHECK(cudaGraphAddKernelNode(&gather_, graph_, nullptr, 0, &gather_params_));
      ++kernels_;
    }
    const int n = plan_.period;
    std::vector<cudaGraphNode_t> nodes;
    std::vector<bool> consumed(plan_.groups.size(), false);
    for (const Group& g : plan_.groups) {
      std::vector<cudaGraphNode_t> deps;
      for (int d : g.deps) {
        deps.push_back(nodes[d]);
        consumed[d] = true;
      }
      if (g.reads_input && gather_) deps.push_back(gather_);
      const std::uint32_t count = g.end - g.begin;
      cudaGraphNode_t node{};
      const std::uint32_t b = g.begin;
      switch (g.kind) {
        case Kind::mix:
          node = add_jobs(
              cuda::MixArgs{mix_.get() + b, terms_.get(), gains_.get(), arena_.get(), n, count},
              deps);
          break;
        case Kind::eq:
          node = add_jobs(
              cuda::EqArgs{eq_.get() + b, bands_.get(), eq_state_.get(), arena_.get(), n, count},
              deps);
          break;
        case Kind::gate:
          node = add_jobs(cuda::GateArgs{gate_.get() + b, gate_params_.get(), gate_state_.get(),
                                         arena_.get(), n, count},
                          deps);
          break;
        case Kind::compressor:
          node = add_jobs(cuda::CompressorArgs{compressor_.get() + b, compressor_params_.get(),
                                               compressor_state_.get(), arena_.get(), n, count},
                          deps);
          break;
        case Kind::delay:
          node = add_jobs(cuda::DelayArgs{delay_.get() + b, delay_params_.get(), delay_state_.get(),
                                          rings_.get(), arena_.get(), n, count},
                          deps);
          break;
        case Kind::convolution:
          node = add_convolutions(g, deps);
          break;
        case Kind::nam:
          node = add_nams(g, deps);
          break;
      }
      nodes.push_back(node);
    }
    // The scatter waits for every group nobody else waits for, so it runs last.
    std::vector<cudaGraphNode_t> sinks;
    for (std::size_t g = 0; g < nodes.size(); ++g) {
      if (!consumed[g]) sinks.push_back(nodes[g]);
    }
    if (sinks.empty() && gather_) sinks.push_back(gather_);
    SIGPU_CUDA_CHECK(
        cudaGraphAddKernelNode(&scatter_, graph_, sinks.data(), sinks.size(), &scatter_params_));
    ++kernels_;
    SIGPU_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }

  /// What `enqueue` puts on the stream, captured once, as a child graph node after `dep`.
  template <typename Enqueue>
  cudaGraphNode_t add_captured(Enqueue&& enqueue, cudaGraphNode_t dep) {
    cudaGraph_t child = nullptr;
    SIGPU_CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    try {
      enqueue();
    } catch (...) {
      cudaStreamEndCapture(stream_, &child);
      if (child) cudaGraphDestroy(child);
      throw;
    }
    SIGPU_CUDA_CHECK(cudaStreamEndCapture(stream_, &child));
    cudaGraphNode_t node{};
    const cudaError_t err = cudaGraphAddChildGraphNode(&node, graph_, &dep, 1, child);
    cudaGraphDestroy(child);
    SIGPU_CUDA_CHECK(err);
    return node;
  }

  /// One node standing for all of `ends` (itself when there is one).
  cudaGraphNode_t join(const std::vector<cudaGraphNode_t>& ends) {
    if (ends.size() == 1) return ends[0];
    cudaGraphNode_t node{};
    SIGPU_CUDA_CHECK(cudaGraphAddEmptyNode(&node, graph_, ends.data(), ends.size()));
    return node;
  }

  /// Per convolution node: a kernel gathers its input channels, then the convolver's period,
  /// captured once from its stream, runs as a child graph writing the node's outputs. Several
  /// nodes of one group join in an empty node.
  cudaGraphNode_t add_convolutions([[maybe_unused]] const Group& g,
                                   [[maybe_unused]] const std::vector<cudaGraphNode_t>& deps) {
#ifdef SIGPU_HAVE_AUDIO_CONVOLUTION
    std::vector<cudaGraphNode_t> ends;
    for (std::uint32_t j = g.begin; j < g.end; ++j) {
      const ConvolutionJob& job = plan_.convolution[j];
      auto& c = *convolvers_.emplace_back(std::make_unique<Convolver>(job, plan_));
      c.gather = {c.offsets.get(), arena_.get(), c.in.get(),
                  static_cast<std::uint32_t>(job.in.size()), plan_.period};
      cudaGraphNode_t gather = add_kernel(reinterpret_cast<void*>(cuda::copy_channels_kernel),
                                          c.gather.channels * plan_.period, c.gather, deps);
      ends.push_back(add_captured(
          [&] { c.convolver.process(c.in.get(), arena_.get() + job.out, stream_); }, gather));
    }
    return join(ends);
#else
    throw Error("audio: a convolution node in a build without the convolution module");
#endif
  }

  /// Per nam node (its channels are consecutive jobs with one spec): a kernel gathers the
  /// inputs times the input gain, the node's nam::CudaBatch period (one instance per channel),
  /// captured once, runs as a child graph, and a kernel scatters the outputs times the output
  /// gain. Several nodes of one group join in an empty node.
  cudaGraphNode_t add_nams([[maybe_unused]] const Group& g,
                           [[maybe_unused]] const std::vector<cudaGraphNode_t>& deps) {
#ifdef SIGPU_HAVE_AUDIO_NAM
    std::vector<cudaGraphNode_t> ends;
    for (std::uint32_t j = g.begin; j < g.end;) {
      std::uint32_t e = j + 1;
      while (e < g.end && plan_.nam[e].spec == plan_.nam[j].spec) ++e;
      auto& a = *amps_.emplace_back(
          std::make_unique<Amp>(std::span(plan_.nam.data() + j, e - j), plan_.period));
      const NamSpec& s = *plan_.nam[j].spec;
      const auto channels = e - j;
      cuda::ScaledCopyArgs gather{a.in_offsets.get(), arena_.get(), a.in.get(),
                                  s.input_gain,       channels,     plan_.period};
      cudaGraphNode_t first = add_kernel(reinterpret_cast<void*>(cuda::scaled_gather_kernel),
                                         channels * plan_.period, gather, deps);
      const cudaGraphNode_t model =
          add_captured([&] { a.batch.process(plan_.period, stream_); }, first);
      cuda::ScaledCopyArgs scatter{a.out_offsets.get(), arena_.get(), a.out.get(),
                                   s.output_gain,       channels,     plan_.period};
      ends.push_back(add_kernel(reinterpret_cast<void*>(cuda::scaled_scatter_kernel),
                                channels * plan_.period, scatter, {model}));
      j = e;
    }
    return join(ends);
#else
    throw Error("audio: a nam node in a build without the nam module");
#endif
  }

  void release() {
    if (stream_) cudaStreamSynchronize(stream_);
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
    if (stream_) cudaStreamDestroy(stream_);
    exec_ = nullptr;
    graph_ = nullptr;
    stream_ = nullptr;
  }

#ifdef SIGPU_HAVE_AUDIO_CONVOLUTION
  /// A convolution node's engine, the gather of its inputs, and its device memory counted.
  struct Convolver {
    Convolver(const ConvolutionJob& job, const Plan& plan)
        : convolver(convolver_config(job, plan.period)),
          in(job.in.size() * std::size_t(plan.period)),
          offsets(job.in.size()),
          bytes(static_cast<std::int64_t>(convolver.device_bytes())) {
      SIGPU_CUDA_CHECK(cudaMemcpy(offsets.get(), job.in.data(),
                                  job.in.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
      count_device(bytes, 1);
    }
    ~Convolver() { count_device(-bytes, -1); }
    convolution::CudaConvolver convolver;
    DeviceArray<float> in;
    DeviceArray<std::uint32_t> offsets;
    std::int64_t bytes;
    cuda::ChannelCopyArgs gather{};
  };
  std::vector<std::unique_ptr<Convolver>> convolvers_;
#endif

#ifdef SIGPU_HAVE_AUDIO_NAM
  /// A nam node's batch (bound to planar in/out blocks) and its channels' arena offsets.
  struct Amp {
    Amp(std::span<const NamJob> jobs, int period)
        : batch(std::vector<const nam::Model*>(jobs.size(), jobs[0].spec->model.get()),
                {.sample_rate = jobs[0].spec->sample_rate, .max_frames = period}),
          in(jobs.size() * std::size_t(period)),
          out(jobs.size() * std::size_t(period)),
          in_offsets(jobs.size()),
          out_offsets(jobs.size()) {
      std::vector<float*> ins, outs;
      std::vector<std::uint32_t> in_at, out_at;
      for (std::size_t c = 0; c < jobs.size(); ++c) {
        ins.push_back(in.get() + c * period);
        outs.push_back(out.get() + c * period);
        in_at.push_back(jobs[c].in);
        out_at.push_back(jobs[c].out);
      }
      batch.bind(ins, outs);
      SIGPU_CUDA_CHECK(cudaMemcpy(in_offsets.get(), in_at.data(),
                                  in_at.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
      SIGPU_CUDA_CHECK(cudaMemcpy(out_offsets.get(), out_at.data(),
                                  out_at.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
    }
    nam::CudaBatch batch;
    DeviceArray<float> in, out;
    DeviceArray<std::uint32_t> in_offsets, out_offsets;
  };
  std::vector<std::unique_ptr<Amp>> amps_;
#endif

  const Plan& plan_;
  cudaStream_t stream_ = nullptr;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  cudaGraphNode_t gather_ = nullptr, scatter_ = nullptr;
  cudaKernelNodeParams gather_params_{}, scatter_params_{};
  cuda::GatherArgs gather_args_{};
  cuda::ChannelCopyArgs scatter_args_{};
  void* gather_argv_[1]{};
  void* scatter_argv_[1]{};
  const float* io_in_ = nullptr;
  float* io_out_ = nullptr;
  int kernels_ = 0;

  PinnedFloats input_, output_;
  DeviceArray<float> arena_, rings_;
  DeviceArray<std::uint32_t> outputs_;
  DeviceArray<dsp::MixJob> mix_;
  DeviceArray<dsp::MixTerm> terms_;
  DeviceArray<dsp::EqJob> eq_;
  DeviceArray<dsp::GateJob> gate_;
  DeviceArray<dsp::CompressorJob> compressor_;
  DeviceArray<dsp::DelayJob> delay_;
  DeviceArray<dsp::GainRamp> gains_;
  DeviceArray<dsp::EqBand> bands_;
  DeviceArray<dsp::GateParams> gate_params_;
  DeviceArray<dsp::CompressorParams> compressor_params_;
  DeviceArray<dsp::DelayParams> delay_params_;
  DeviceArray<double> eq_state_;
  DeviceArray<dsp::GateState> gate_state_;
  DeviceArray<dsp::CompressorState> compressor_state_;
  DeviceArray<dsp::DelayState> delay_state_;
};

}  // namespace

std::unique_ptr<Runner> make_cuda_runner(const Plan& plan) {
  if (cuda_devices().empty())
    throw UnsupportedError("the cuda backend needs a CUDA device; none was found");
  return std::make_unique<CudaRunner>(plan);
}

}  // namespace sigpu::audio
