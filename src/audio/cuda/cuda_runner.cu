// The CUDA backend: the plan's groups become the nodes of one CUDA graph (a node waits only for
// the groups it reads, so independent branches run concurrently), between a gather node (input)
// and a scatter node (output); each kind adds its groups' nodes through its own CUDA processing
// (Kind::Cuda). A period is one graph launch; when the caller's I/O buffers change, only those
// two nodes are re-pointed (cudaGraphExecKernelNodeSetParams), nothing is captured again.
#include <algorithm>
#include <memory>
#include <tuple>
#include <vector>

#include "audio/cuda/graph_builder.cuh"
#include "audio/cuda/meter_kernel.cuh"
#include "audio/runner.hpp"

namespace sigpu::audio {
namespace {

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

template <typename L>
struct CudaKinds;
template <typename... K>
struct CudaKinds<KindList<K...>> {
  using type = std::tuple<std::unique_ptr<typename K::Cuda>...>;
};

class CudaRunner final : public Runner {
 public:
  explicit CudaRunner(Plan& plan)
      : plan_(plan),
        input_(std::size_t(plan.inputs) * plan.period),
        output_(plan.outputs.size() * plan.period),
        meters_(plan.meters ? 2 * std::size_t(plan.bus_channels()) : 0) {
    SIGPU_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    try {
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
  /// Written by the period's meter node; process() has waited for the graph.
  const float* meters() const override { return plan_.meters ? meters_.get() : nullptr; }

  void process(const float* in, float* out) override {
    for_each_kind([&](auto i) {
      constexpr auto I = decltype(i)::value;
      std::get<I>(kinds_)->upload(std::get<I>(plan_.kinds), stream_);
    });
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
  /// The I/O nodes' launch parameters, pointing at io_in_ / io_out_.
  void set_io_params() {
    gather_args_ = {io_in_, arena_.get(), std::uint32_t(plan_.inputs) * plan_.period};
    scatter_args_ = {outputs_.get(), arena_.get(), io_out_,
                     static_cast<std::uint32_t>(plan_.outputs.size()), plan_.period};
    gather_params_ = cuda::GraphBuilder::launch(reinterpret_cast<void*>(cuda::gather_kernel),
                                                gather_args_.count, gather_argv_, &gather_args_);
    scatter_params_ = cuda::GraphBuilder::launch(
        reinterpret_cast<void*>(cuda::copy_channels_kernel), scatter_args_.channels * plan_.period,
        scatter_argv_, &scatter_args_);
  }

  void build_graph() {
    arena_ = cuda::DeviceArray<float>(plan_.arena);
    outputs_ = cuda::device_copy(plan_.outputs, stream_);
    arena_.zero(stream_);
    SIGPU_CUDA_CHECK(cudaGraphCreate(&graph_, 0));
    cuda::GraphBuilder builder(graph_, stream_, arena_.get(), plan_.period);
    for_each_kind([&](auto i) {
      constexpr auto I = decltype(i)::value;
      using K = typename Kinds::template At<I>;
      std::get<I>(kinds_) = std::make_unique<typename K::Cuda>(std::get<I>(plan_.kinds), builder);
    });
    SIGPU_CUDA_CHECK(cudaStreamSynchronize(stream_));
    io_in_ = input_.get();
    io_out_ = output_.get();
    set_io_params();
    if (plan_.inputs > 0) {
      SIGPU_CUDA_CHECK(cudaGraphAddKernelNode(&gather_, graph_, nullptr, 0, &gather_params_));
      ++kernels_;
    }
    std::vector<cudaGraphNode_t> nodes;
    std::vector<bool> consumed(plan_.groups.size(), false);
    for (const Group& g : plan_.groups) {
      std::vector<cudaGraphNode_t> deps;
      for (int d : g.deps) {
        deps.push_back(nodes[d]);
        consumed[d] = true;
      }
      if (g.reads_input && gather_) deps.push_back(gather_);
      cudaGraphNode_t node{};
      with_kind(g.kind, [&](auto i) {
        constexpr auto I = decltype(i)::value;
        node = std::get<I>(kinds_)->add(builder, std::get<I>(plan_.kinds), g.begin, g.end, deps);
      });
      nodes.push_back(node);
    }
    kernels_ += builder.kernels();
    // The scatter waits for every group nobody else waits for, so it runs last.
    std::vector<cudaGraphNode_t> sinks;
    for (std::size_t g = 0; g < nodes.size(); ++g) {
      if (!consumed[g]) sinks.push_back(nodes[g]);
    }
    if (sinks.empty() && gather_) sinks.push_back(gather_);
    SIGPU_CUDA_CHECK(
        cudaGraphAddKernelNode(&scatter_, graph_, sinks.data(), sinks.size(), &scatter_params_));
    ++kernels_;
    if (plan_.meters && plan_.bus_channels() > 0) add_meter_node(sinks);
    SIGPU_CUDA_CHECK(cudaGraphInstantiate(&exec_, graph_, 0));
  }

  /// Beside the scatter, after every group: one block per bus channel, writing straight into
  /// pinned host memory, which the period's stream synchronisation makes readable.
  void add_meter_node(const std::vector<cudaGraphNode_t>& sinks) {
    cuda::MeterArgs args{arena_.get() + std::size_t(plan_.inputs) * plan_.period, meters_.get(),
                         plan_.period};
    void* argv[1] = {&args};
    cudaKernelNodeParams k{};
    k.func = reinterpret_cast<void*>(cuda::meter_kernel);
    k.gridDim = dim3(plan_.bus_channels());
    k.blockDim = dim3(cuda::kMeterBlock);
    k.kernelParams = argv;
    cudaGraphNode_t node{};
    SIGPU_CUDA_CHECK(cudaGraphAddKernelNode(&node, graph_, sinks.data(), sinks.size(), &k));
    ++kernels_;
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

  Plan& plan_;
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
  PinnedFloats meters_;  ///< per bus channel: peak, sum of squares (the last period)
  cuda::DeviceArray<float> arena_;
  cuda::DeviceArray<std::uint32_t> outputs_;
  CudaKinds<Kinds>::type kinds_;
};

}  // namespace

std::unique_ptr<Runner> make_cuda_runner(Plan& plan) {
  if (cuda_devices().empty())
    throw UnsupportedError("the cuda backend needs a CUDA device; none was found");
  return std::make_unique<CudaRunner>(plan);
}

}  // namespace sigpu::audio
