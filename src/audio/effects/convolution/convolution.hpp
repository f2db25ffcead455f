// convolution's processing (only in builds with the convolution module): one job per node, since
// the convolution engine batches its own channels and paths. On the CPU a CpuConvolver per node;
// on the GPU a kernel gathers the node's inputs, then the CudaConvolver's period, captured once
// from its stream, runs as a child graph writing the node's outputs.
#pragma once

#ifdef SIGPU_HAVE_AUDIO_CONVOLUTION
#include <cstring>
#include <memory>
#include <span>
#include <vector>

#include <sigpu/convolution.hpp>

#include "audio/memory.hpp"

#ifdef __CUDACC__
#include "audio/cuda/graph_builder.cuh"
#endif

namespace sigpu::audio::effects {

/// The IRs, paths, wet and dry; the partition is the engine's period, set by the runner.
struct ConvolutionSpec {
  convolution::Config config;
};

struct ConvolutionJob {
  std::shared_ptr<const ConvolutionSpec> spec;
  std::vector<std::uint32_t> in;  ///< arena offsets of the input channels
  std::uint32_t out = 0;          ///< arena offset of output channel 0 (the rest follow)
};

/// The config a runner builds its convolver from.
inline convolution::Config convolver_config(const ConvolutionJob& job, int period) {
  convolution::Config c = job.spec->config;
  c.partition = static_cast<std::uint32_t>(period);
  return c;
}

struct ConvolutionKind {
  static constexpr bool heavy = true;

  struct Data {
    std::vector<ConvolutionJob> jobs;
    std::uint32_t size() const { return static_cast<std::uint32_t>(jobs.size()); }
    void settle() {}
  };

  class Cpu {
   public:
    Cpu(const Data& d, int period) {
      for (const auto& job : d.jobs) {
        const auto config = convolver_config(job, period);
        nodes_.push_back({convolution::CpuConvolver(config),
                          HostVector<float>(std::size_t(config.inputs) * period)});
      }
    }
    /// A node's inputs gathered, then the convolver writes its outputs (contiguous in the arena).
    void run(const Data& d, std::size_t begin, std::size_t end, float* arena, int n) {
      for (std::size_t j = begin; j < end; ++j) {
        const ConvolutionJob& job = d.jobs[j];
        Node& c = nodes_[j];
        for (std::size_t ch = 0; ch < job.in.size(); ++ch) {
          std::memcpy(c.in.data() + ch * n, arena + job.in[ch], n * sizeof(float));
        }
        c.convolver.process(c.in, std::span<float>(arena + job.out, c.convolver.outputs() * n));
      }
    }

   private:
    struct Node {
      convolution::CpuConvolver convolver;
      HostVector<float> in;
    };
    std::vector<Node> nodes_;
  };

#ifdef __CUDACC__
  class Cuda {
   public:
    Cuda(const Data&, cuda::GraphBuilder&) {}
    void upload(Data&, cudaStream_t) {}
    /// Several nodes of one group join in an empty node.
    cudaGraphNode_t add(cuda::GraphBuilder& b, const Data& d, std::uint32_t begin,
                        std::uint32_t end, const std::vector<cudaGraphNode_t>& deps) {
      std::vector<cudaGraphNode_t> ends;
      for (std::uint32_t j = begin; j < end; ++j) {
        const ConvolutionJob& job = d.jobs[j];
        auto& c = *nodes_.emplace_back(std::make_unique<Node>(job, b.period()));
        c.gather = {c.offsets.get(), b.arena(), c.in.get(),
                    static_cast<std::uint32_t>(job.in.size()), b.period()};
        cudaGraphNode_t gather = b.add_kernel(reinterpret_cast<void*>(cuda::copy_channels_kernel),
                                              c.gather.channels * b.period(), c.gather, deps);
        float* out = b.arena() + job.out;
        ends.push_back(
            b.add_captured([&] { c.convolver.process(c.in.get(), out, b.stream()); }, gather));
      }
      return b.join(ends);
    }

   private:
    /// A node's engine, the gather of its inputs, and its device memory counted.
    struct Node {
      Node(const ConvolutionJob& job, int period)
          : convolver(convolver_config(job, period)),
            in(job.in.size() * std::size_t(period)),
            offsets(job.in.size()),
            bytes(static_cast<std::int64_t>(convolver.device_bytes())) {
        SIGPU_CUDA_CHECK(cudaMemcpy(offsets.get(), job.in.data(),
                                    job.in.size() * sizeof(std::uint32_t), cudaMemcpyHostToDevice));
        count_device(bytes, 1);
      }
      ~Node() { count_device(-bytes, -1); }
      convolution::CudaConvolver convolver;
      cuda::DeviceArray<float> in;
      cuda::DeviceArray<std::uint32_t> offsets;
      std::int64_t bytes;
      cuda::ChannelCopyArgs gather{};
    };
    std::vector<std::unique_ptr<Node>> nodes_;
  };
#endif
};

}  // namespace sigpu::audio::effects
#endif
