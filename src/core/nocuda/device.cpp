#include <sigpu/core.hpp>

namespace sigpu {

bool cuda_compiled() {
  return false;
}
std::vector<DeviceInfo> cuda_devices() {
  return {};
}

}  // namespace sigpu
