// A kind whose work is independent per-channel jobs running the same per-sample code on the CPU
// and the GPU (one thread per job): gain/pan/mixer/router (mix), eq, gate, compressor, delay.
// A kind K gives its types and one SIGPU_HD function; this file makes its plan data, its CPU
// processing and its CUDA processing (one batched kernel per group):
//
//   struct GateKind {
//     using Job = ..., Param = ..., State = ..., Aux = batched::None;
//     static constexpr bool heavy = false;
//     SIGPU_HD static void run(const batched::View<GateKind>& v, std::uint32_t j);
//     static void settle(Param& p);  // a period's ramp has reached its target
//   };
//   using Data = batched::Data<GateKind>; using Cpu = batched::Cpu<GateKind>; ...
#pragma once

#include <cstdint>

#include "audio/memory.hpp"
#include "core/hd.hpp"

#ifdef __CUDACC__
#include "audio/cuda/graph_builder.cuh"
#endif

namespace sigpu::audio::batched {

/// For kinds without an aux table or without state.
struct None {};

/// What job j reads and writes: host pointers on the CPU, device pointers on the GPU.
template <typename K>
struct View {
  const typename K::Job* jobs;
  const typename K::Aux* aux;  ///< constant lookup shared by the jobs (mix terms)
  const typename K::Param* params;
  typename K::State* state;
  float* scratch;  ///< zeroed floats the kind owns (delay lines)
  float* arena;
  int n;  ///< frames
};

/// The kind's part of a Plan: jobs and aux are fixed once the plan is built; params are
/// written by the effects at period boundaries (and uploaded by the CUDA runner when dirty).
template <typename K>
struct Data {
  HostVector<typename K::Job> jobs;
  HostVector<typename K::Aux> aux;
  HostVector<typename K::Param> params;
  std::uint32_t states = 0;   ///< State records the runner allocates, zeroed
  std::uint32_t scratch = 0;  ///< floats the runner allocates, zeroed
  bool dirty = false;         ///< params changed since the device copy
  bool ramping = false;       ///< params hold a ramp that settle() must end

  std::uint32_t size() const { return static_cast<std::uint32_t>(jobs.size()); }
  void touch(bool ramp) {
    dirty = true;
    ramping |= ramp;
  }
  /// After a period: every ramp has reached its target.
  void settle() {
    if (!ramping) return;
    for (auto& p : params) K::settle(p);
    dirty = true;
    ramping = false;
  }
};

/// The CPU side: the state the jobs keep between periods.
template <typename K>
class Cpu {
 public:
  Cpu(const Data<K>& d, int) : state_(d.states), scratch_(d.scratch, 0.0f) {}
  void run(const Data<K>& d, std::size_t begin, std::size_t end, float* arena, int n) {
    const View<K> v{
        d.jobs.data(), d.aux.data(), d.params.data(), state_.data(), scratch_.data(), arena, n};
    for (std::size_t j = begin; j < end; ++j) K::run(v, static_cast<std::uint32_t>(j));
  }

 private:
  HostVector<typename K::State> state_;
  HostVector<float> scratch_;
};

#ifdef __CUDACC__
template <typename K>
struct Launch {
  View<K> v;
  std::uint32_t count;
};

/// One thread per job of a group.
template <typename K>
__global__ void jobs_kernel(Launch<K> a) {
  const auto j = cuda::job_index();
  if (j < a.count) K::run(a.v, j);
}

/// The GPU side: device copies of the plan data and the state; one kernel node per group.
template <typename K>
class Cuda {
 public:
  Cuda(const Data<K>& d, cuda::GraphBuilder& b)
      : jobs_(cuda::device_copy(d.jobs, b.stream())),
        aux_(cuda::device_copy(d.aux, b.stream())),
        params_(cuda::device_copy(d.params, b.stream())),
        state_(d.states),
        scratch_(d.scratch) {
    state_.zero(b.stream());
    scratch_.zero(b.stream());
  }
  void upload(Data<K>& d, cudaStream_t s) {
    if (d.dirty) params_.upload(d.params, s);
    d.dirty = false;
  }
  cudaGraphNode_t add(cuda::GraphBuilder& b, const Data<K>&, std::uint32_t begin, std::uint32_t end,
                      const std::vector<cudaGraphNode_t>& deps) {
    Launch<K> a{{jobs_.get() + begin, aux_.get(), params_.get(), state_.get(), scratch_.get(),
                 b.arena(), b.period()},
                end - begin};
    return b.add_kernel(reinterpret_cast<void*>(jobs_kernel<K>), a.count, a, deps);
  }

 private:
  cuda::DeviceArray<typename K::Job> jobs_;
  cuda::DeviceArray<typename K::Aux> aux_;
  cuda::DeviceArray<typename K::Param> params_;
  cuda::DeviceArray<typename K::State> state_;
  cuda::DeviceArray<float> scratch_;
};
#endif

}  // namespace sigpu::audio::batched
