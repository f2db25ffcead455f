// Rate matching on the GPU: the launches of rate_match_kernel.cuh's kernels, for the decoder's
// transport block path (receive side) and for the transport block simulator (transmit side: the
// code blocks' codewords go up, the G bits of one transmission come back).
#include <algorithm>
#include <string>

#include "core/cuda/buffer.hpp"
#include "turbo/cuda/rate_match.hpp"
#include "turbo/cuda/rate_match_kernel.cuh"
#include "turbo/device_rate_match.hpp"

namespace sigpu::turbo {
namespace cuda {

template <typename T>
__global__ void __launch_bounds__(kRateMatchThreads)
    DeRateMatchKernel(const RateMatchBlock* __restrict__ blocks, int rv, const T* __restrict__ llr,
                      T* soft) {
  de_rate_match_body(blocks, rv, llr, soft);
}

__global__ void __launch_bounds__(kRateMatchThreads)
    RateMatchKernel(const RateMatchBlock* __restrict__ blocks, int rv,
                    const std::uint8_t* __restrict__ code, std::uint8_t* e) {
  rate_match_body(blocks, rv, code, e);
}

template <typename T>
__global__ void __launch_bounds__(kRateMatchThreads)
    SoftBufferToLlrsKernel(const RateMatchBlock* __restrict__ blocks, const T* __restrict__ soft,
                           T* llr, T filler_llr) {
  soft_buffer_to_llrs_body(blocks, soft, llr, filler_llr);
}

std::size_t rate_match_descriptor_bytes(std::size_t code_blocks) {
  return code_blocks * sizeof(RateMatchBlock);
}

template <typename T>
void de_rate_match_on_device(std::span<const CodeBlockPlan> cbs, int rv, void* d_blocks,
                             const T* d_llr, T* d_soft, T* d_out, T filler_llr, cudaStream_t s) {
  const auto rm = rate_match_blocks(cbs);
  auto* blocks = static_cast<RateMatchBlock*>(d_blocks);
  // From pageable memory: the call returns once rm has been read.
  SIGPU_CUDA_CHECK(
      cudaMemcpyAsync(blocks, rm.data(), rm.size() * sizeof(rm[0]), cudaMemcpyHostToDevice, s));
  const unsigned C = static_cast<unsigned>(rm.size());
  DeRateMatchKernel<T><<<C, kRateMatchThreads, 0, s>>>(blocks, rv, d_llr, d_soft);
  SIGPU_CUDA_CHECK_LAUNCH();
  int max_K = 0;
  for (const auto& cb : cbs) max_K = std::max(max_K, cb.K);
  const dim3 grid(
      (3u * (static_cast<unsigned>(max_K) + 4u) + kRateMatchThreads - 1) / kRateMatchThreads, C);
  SoftBufferToLlrsKernel<T><<<grid, kRateMatchThreads, 0, s>>>(blocks, d_soft, d_out, filler_llr);
  SIGPU_CUDA_CHECK_LAUNCH();
}

template void de_rate_match_on_device<float>(std::span<const CodeBlockPlan>, int, void*,
                                             const float*, float*, float*, float, cudaStream_t);
template void de_rate_match_on_device<std::int16_t>(std::span<const CodeBlockPlan>, int, void*,
                                                    const std::int16_t*, std::int16_t*,
                                                    std::int16_t*, std::int16_t, cudaStream_t);
template void de_rate_match_on_device<std::int8_t>(std::span<const CodeBlockPlan>, int, void*,
                                                   const std::int8_t*, std::int8_t*, std::int8_t*,
                                                   std::int8_t, cudaStream_t);

}  // namespace cuda

std::vector<std::uint8_t> rate_match_on_device(std::span<const std::uint8_t> codewords,
                                               const TransportBlockParams& p, int device) {
  const auto cbs = plan_transport_block(p);
  std::size_t total = 0;
  for (const auto& cb : cbs) total += llr_count(cb.K);
  if (codewords.size() != total)
    throw Error("turbo: rate matching a transport block of A = " + std::to_string(p.A) + " needs " +
                std::to_string(total) + " codeword bits, got " + std::to_string(codewords.size()));
  SIGPU_CUDA_CHECK(cudaSetDevice(device));
  const auto rm = cuda::rate_match_blocks(cbs);
  sigpu::cuda::Stream stream;
  sigpu::cuda::DeviceBuffer<cuda::RateMatchBlock> d_blocks;
  sigpu::cuda::DeviceBuffer<std::uint8_t> d_code, d_e;
  d_blocks.reserve(rm.size());
  d_code.reserve(total);
  d_e.reserve(static_cast<std::size_t>(p.G));
  cudaStream_t s = stream.get();
  SIGPU_CUDA_CHECK(cudaMemcpyAsync(d_blocks.get(), rm.data(), rm.size() * sizeof(rm[0]),
                                   cudaMemcpyHostToDevice, s));
  SIGPU_CUDA_CHECK(
      cudaMemcpyAsync(d_code.get(), codewords.data(), total, cudaMemcpyHostToDevice, s));
  cuda::RateMatchKernel<<<static_cast<unsigned>(rm.size()), cuda::kRateMatchThreads, 0, s>>>(
      d_blocks.get(), p.rv, d_code.get(), d_e.get());
  SIGPU_CUDA_CHECK_LAUNCH();
  std::vector<std::uint8_t> e(static_cast<std::size_t>(p.G));
  SIGPU_CUDA_CHECK(cudaMemcpyAsync(e.data(), d_e.get(), e.size(), cudaMemcpyDeviceToHost, s));
  stream.synchronize();
  return e;
}

}  // namespace sigpu::turbo
