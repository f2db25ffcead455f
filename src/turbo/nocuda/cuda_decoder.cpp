// Builds without nvcc: the CUDA turbo decoder refuses clearly.
#include <sigpu/turbo.hpp>

namespace sigpu::turbo {

struct CudaDecoder::Impl {};

CudaDecoder::CudaDecoder(int) {
  throw UnsupportedError("the cuda backend is not available: sigpu was built without CUDA");
}
CudaDecoder::~CudaDecoder() = default;
CudaDecoder::CudaDecoder(CudaDecoder&&) noexcept = default;
CudaDecoder& CudaDecoder::operator=(CudaDecoder&&) noexcept = default;
void CudaDecoder::load(std::span<const int>, std::span<const float>) {}
void CudaDecoder::load(std::span<const int>, std::span<const std::int16_t>) {}
void CudaDecoder::load(std::span<const int>, std::span<const std::int8_t>) {}
void CudaDecoder::load_channel(std::span<const int>, std::span<const std::uint8_t>,
                               const ChannelOptions&, std::uint64_t, LlrType, int) {}
void CudaDecoder::load_transport_block(std::span<const float>, const TransportBlockParams&,
                                       std::span<float>, float) {}
void CudaDecoder::load_transport_block(std::span<const std::int16_t>, const TransportBlockParams&,
                                       std::span<std::int16_t>, std::int16_t) {}
void CudaDecoder::load_transport_block(std::span<const std::int8_t>, const TransportBlockParams&,
                                       std::span<std::int8_t>, std::int8_t) {}
double CudaDecoder::run(const DecoderOptions&) {
  return 0;
}
std::vector<std::uint8_t> CudaDecoder::bits() const {
  return {};
}
std::vector<float> CudaDecoder::llrs() const {
  return {};
}
std::vector<int> CudaDecoder::iterations() const {
  return {};
}
std::string_view CudaDecoder::kernel() const {
  return {};
}

}  // namespace sigpu::turbo
