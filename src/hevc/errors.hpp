// The error every HEVC parser throws: a sigpu::Error whose message names the syntax element.
// The decoder catches it per NAL unit and adds which NAL unit it was.
#pragma once

#include <string>

#include <sigpu/core.hpp>

namespace sigpu::hevc {

class DecodeError : public Error {
 public:
  using Error::Error;
};

/// Raised for valid streams that use a tool this decoder refuses (inter slices, 4:2:2, ...).
class Unsupported : public DecodeError {
 public:
  using DecodeError::DecodeError;
};

}  // namespace sigpu::hevc
