// The transmit side's rate matching on the GPU for the transport block simulator: the code
// blocks' codewords go up, the G bits of one transmission come back.
#include <string>

#include "core/cuda/buffer.hpp"
#include "turbo/cuda/rate_match_kernel.cuh"
#include "turbo/device_rate_match.hpp"

namespace sigpu::turbo {

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
