// sigpu core types shared by every module: backends, errors, devices.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace sigpu {

/// Where an operation runs. `cpu` is the serial reference; `cpu_parallel` uses all cores;
/// `cuda` the GPU; `automatic` picks cuda when a device is present, else cpu_parallel.
enum class Backend { cpu, cpu_parallel, cuda, automatic };

std::string_view to_string(Backend b);
/// Parses "cpu", "cpu-parallel", "cuda" or "auto"; throws Error on anything else.
Backend parse_backend(std::string_view name);
/// Resolves `automatic` to the backend that will actually run.
Backend resolve(Backend b);

/// Every failure sigpu reports is an Error (or a subclass) with a human-readable message
/// that names where it happened.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The input cannot be read (missing, a directory, no permission) or is not of the format
/// asked for (no stream found, nothing decodable in it). The CLI exits with 3.
class InputError : public Error {
 public:
  using Error::Error;
};

/// The input is of the format but uses a feature this build or decoder does not support (a
/// profile, a coding tool, a container without its library). The CLI exits with 4.
class UnsupportedError : public Error {
 public:
  using Error::Error;
};

/// The caller asked for something impossible: a bad option value, an output format that cannot
/// be told, an output that exists (without force) or is one of the inputs. The CLI exits with 2.
class UsageError : public Error {
 public:
  using Error::Error;
};

/// An output cannot be written (no permission, disk full, a closed pipe). The CLI exits with 5.
class OutputError : public Error {
 public:
  using Error::Error;
};

/// Raised when a CUDA call fails; the message names the call and file:line.
class CudaError : public Error {
 public:
  using Error::Error;
};

struct DeviceInfo {
  int index = 0;
  std::string name;
  int sm_count = 0;
  int compute_major = 0, compute_minor = 0;
  std::uint64_t memory_bytes = 0;
};

/// True when this build has the CUDA backend compiled in.
bool cuda_compiled();
/// Devices visible to this process; empty without CUDA or without a GPU. Never throws.
std::vector<DeviceInfo> cuda_devices();
/// Version of the library, e.g. "0.1.0".
std::string_view version();

}  // namespace sigpu
