// A file mapped read-only into memory: the pages a reader touches are read, the rest never are,
// so cutting a few seconds out of an hour-long file costs what those seconds cost.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace sigpu {

class MappedFile {
 public:
  /// Throws sigpu::Error naming the path and the OS's reason.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::span<const std::uint8_t> bytes() const { return {data_, size_}; }

 private:
  const std::uint8_t* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace sigpu
