// nam's processing (only in builds with the nam module): one job per channel, each its own model
// instance. On the CPU a nam::Processor per channel, as separate jobs: the runner's pool already
// spreads them over the cores, so a nam::CpuBatch (a second spinning pool) would only compete
// with it. On the GPU one nam::CudaBatch per node, between kernels applying the gains.
#pragma once

#ifdef SIGPU_HAVE_AUDIO_NAM
#include <memory>
#include <span>
#include <vector>

#include <sigpu/nam.hpp>

#include "audio/memory.hpp"

#ifdef __CUDACC__
#include "audio/cuda/graph_builder.cuh"
#endif

namespace sigpu::audio::effects {

/// One nam node: every channel runs its own instance of `model`.
struct NamSpec {
  std::shared_ptr<const nam::Model> model;
  double sample_rate = 48000;
  float input_gain = 1, output_gain = 1;  ///< linear, applied in float like the tests do
  double size = 1;                        ///< a slimmable model's size (nam::Processor::set_size)
};

/// One channel of a nam node, from arena channel `in` to arena channel `out`.
struct NamJob {
  std::shared_ptr<const NamSpec> spec;
  std::uint32_t in = 0, out = 0;
  std::uint32_t size_slot = 0;  ///< Data::sizes
};

#ifdef __CUDACC__
struct ScaledCopyArgs {
  const std::uint32_t* offsets;  ///< arena offset of each channel
  float* arena;
  float* planar;  ///< channel c at planar + c * n
  float gain;
  std::uint32_t channels;
  int n;
};
/// A nam node's input channels, times its input gain, into the planar block its batch reads.
__global__ void scaled_gather_kernel(ScaledCopyArgs a) {
  const std::uint32_t count = a.channels * static_cast<std::uint32_t>(a.n);
  for (auto i = cuda::job_index(); i < count; i += gridDim.x * blockDim.x) {
    a.planar[i] = a.arena[a.offsets[i / a.n] + i % a.n] * a.gain;
  }
}
/// The batch's planar output, times the output gain, into the node's arena channels.
__global__ void scaled_scatter_kernel(ScaledCopyArgs a) {
  const std::uint32_t count = a.channels * static_cast<std::uint32_t>(a.n);
  for (auto i = cuda::job_index(); i < count; i += gridDim.x * blockDim.x) {
    a.arena[a.offsets[i / a.n] + i % a.n] = a.planar[i] * a.gain;
  }
}
#endif

struct NamKind {
  static constexpr bool heavy = true;

  struct Data {
    std::vector<NamJob> jobs;
    std::vector<double> sizes;  ///< per node: a slimmable model's size, set at run time
    std::uint32_t size() const { return static_cast<std::uint32_t>(jobs.size()); }
    void settle() {}
  };

  class Cpu {
   public:
    Cpu(const Data& d, int period) {
      for (const auto& job : d.jobs) {
        const NamSpec& s = *job.spec;
        amps_.push_back(
            {nam::Processor(*s.model, {.sample_rate = s.sample_rate, .max_frames = period}),
             HostVector<float>(period)});
        if (!s.model->sizes.empty()) {  // starts at its size, not crossfading into it
          amps_.back().processor.set_size(s.size);
          amps_.back().processor.reset();
        }
      }
    }
    /// Input gain into the scratch, the model, output gain in place.
    void run(const Data& d, std::size_t begin, std::size_t end, float* arena, int n) {
      for (std::size_t j = begin; j < end; ++j) {
        const NamJob& job = d.jobs[j];
        Amp& a = amps_[j];
        const float* in = arena + job.in;
        float* out = arena + job.out;
        for (int i = 0; i < n; ++i) a.in[i] = in[i] * job.spec->input_gain;
        if (!job.spec->model->sizes.empty()) a.processor.set_size(d.sizes[job.size_slot]);
        a.processor.process(a.in.data(), out, n);
        for (int i = 0; i < n; ++i) out[i] *= job.spec->output_gain;
      }
    }

   private:
    struct Amp {
      nam::Processor processor;
      HostVector<float> in;
    };
    std::vector<Amp> amps_;
  };

#ifdef __CUDACC__
  class Cuda {
   public:
    Cuda(const Data&, cuda::GraphBuilder&) {}
    /// Each period: a slimmable model's size, which the batch takes at the period's start.
    void upload(Data& d, cudaStream_t) {
      for (const auto& a : amps_)
        if (a->slimmable)
          for (int c = 0; c < a->batch.size(); ++c) a->batch.set_size(c, d.sizes[a->size_slot]);
    }
    /// Per node (its channels are consecutive jobs with one spec): a kernel gathers the inputs
    /// times the input gain, the node's batch period (one instance per channel), captured once,
    /// runs as a child graph, and a kernel scatters the outputs times the output gain. Several
    /// nodes of one group join in an empty node.
    cudaGraphNode_t add(cuda::GraphBuilder& b, const Data& d, std::uint32_t begin,
                        std::uint32_t end, const std::vector<cudaGraphNode_t>& deps) {
      std::vector<cudaGraphNode_t> ends;
      const int n = b.period();
      for (std::uint32_t j = begin; j < end;) {
        std::uint32_t e = j + 1;
        while (e < end && d.jobs[e].spec == d.jobs[j].spec) ++e;
        auto& a =
            *amps_.emplace_back(std::make_unique<Amp>(std::span(d.jobs.data() + j, e - j), n));
        const NamSpec& s = *d.jobs[j].spec;
        const auto channels = e - j;
        ScaledCopyArgs gather{a.in_offsets.get(), b.arena(), a.in.get(), s.input_gain, channels, n};
        cudaGraphNode_t first =
            b.add_kernel(reinterpret_cast<void*>(scaled_gather_kernel), channels * n, gather, deps);
        const cudaGraphNode_t model =
            b.add_captured([&] { a.batch.process(n, b.stream()); }, first);
        ScaledCopyArgs scatter{a.out_offsets.get(), b.arena(), a.out.get(),
                               s.output_gain,       channels,  n};
        ends.push_back(b.add_kernel(reinterpret_cast<void*>(scaled_scatter_kernel), channels * n,
                                    scatter, {model}));
        j = e;
      }
      return b.join(ends);
    }

   private:
    /// A node's batch (bound to planar in/out blocks) and its channels' arena offsets.
    struct Amp {
      Amp(std::span<const NamJob> jobs, int period)
          : batch(std::vector<const nam::Model*>(jobs.size(), jobs[0].spec->model.get()),
                  {.sample_rate = jobs[0].spec->sample_rate, .max_frames = period}),
            in(jobs.size() * std::size_t(period)),
            out(jobs.size() * std::size_t(period)),
            in_offsets(jobs.size()),
            out_offsets(jobs.size()),
            slimmable(!jobs[0].spec->model->sizes.empty()),
            size_slot(jobs[0].size_slot) {
        if (slimmable) {  // starts at its size, not crossfading into it
          for (int c = 0; c < batch.size(); ++c) batch.set_size(c, jobs[0].spec->size);
          batch.reset();
        }
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
      cuda::DeviceArray<float> in, out;
      cuda::DeviceArray<std::uint32_t> in_offsets, out_offsets;
      bool slimmable;
      std::uint32_t size_slot;
    };
    std::vector<std::unique_ptr<Amp>> amps_;
  };
#endif
};

}  // namespace sigpu::audio::effects
#endif
