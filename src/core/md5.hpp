// Streaming MD5 over OpenSSL's EVP interface (a well-kept implementation, not our own).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace sigpu {

class Md5 {
 public:
  Md5();
  ~Md5();
  Md5(Md5&&) noexcept;
  Md5& operator=(Md5&&) noexcept;
  void update(const void* data, std::size_t n);
  std::array<std::uint8_t, 16> finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

std::string to_hex(const std::uint8_t* bytes, std::size_t n);

}  // namespace sigpu
