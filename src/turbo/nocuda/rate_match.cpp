// Builds without nvcc: rate matching on the GPU refuses clearly.
#include "turbo/device_rate_match.hpp"

namespace sigpu::turbo {

std::vector<std::uint8_t> rate_match_on_device(std::span<const std::uint8_t>,
                                               const TransportBlockParams&, int) {
  throw UnsupportedError("the cuda backend is not available: sigpu was built without CUDA");
}

}  // namespace sigpu::turbo
