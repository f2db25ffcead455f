// Builds without nvcc: the CUDA decoder refuses clearly.
#include <sigpu/flac.hpp>

namespace sigpu::flac {

struct CudaDecoder::Impl {};

CudaDecoder::CudaDecoder(int) {
  throw Error("the cuda backend is not available: sigpu was built without CUDA");
}
CudaDecoder::~CudaDecoder() = default;
CudaDecoder::CudaDecoder(CudaDecoder&&) noexcept = default;
CudaDecoder& CudaDecoder::operator=(CudaDecoder&&) noexcept = default;
Decoded CudaDecoder::decode(std::span<const std::uint8_t>, const DecodeOptions&) {
  return {};
}
Decoded CudaDecoder::decode_into(std::span<const std::uint8_t>, std::span<std::uint8_t>,
                                 const DecodeOptions&) {
  return {};
}
std::vector<BatchResult> CudaDecoder::decode_batch(std::span<const std::span<const std::uint8_t>>,
                                                   const DecodeOptions&) {
  return {};
}
DevicePcm CudaDecoder::decode_device(const std::uint8_t*, std::size_t, const Stream&,
                                     const DecodeOptions&, DecodeReport&) {
  return {};
}

}  // namespace sigpu::flac
