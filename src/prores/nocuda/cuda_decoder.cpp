// Builds without nvcc: the CUDA ProRes decoder refuses clearly.
#include <sigpu/prores.hpp>

namespace sigpu::prores {

struct CudaDecoder::Impl {};

CudaDecoder::CudaDecoder(int) {
  throw UnsupportedError("the cuda backend is not available: sigpu was built without CUDA");
}
CudaDecoder::~CudaDecoder() = default;
CudaDecoder::CudaDecoder(CudaDecoder&&) noexcept = default;
CudaDecoder& CudaDecoder::operator=(CudaDecoder&&) noexcept = default;
std::vector<Frame> CudaDecoder::decode(std::span<const std::span<const std::uint8_t>>, int,
                                       DecodeReport&, std::uint64_t) {
  return {};
}
BatchFrames CudaDecoder::decode_host(std::span<const std::span<const std::uint8_t>>, int,
                                     DecodeReport&, std::uint64_t) {
  return {};
}
BatchFrames CudaDecoder::decode_device(std::span<const std::span<const std::uint8_t>>, int,
                                       DecodeReport&, std::uint64_t) {
  return {};
}
void CudaDecoder::download(const BatchFrames&, std::size_t, std::uint16_t*) {}
CudaDecoder::StageSeconds CudaDecoder::last_kernel_seconds() const {
  return {};
}

}  // namespace sigpu::prores
