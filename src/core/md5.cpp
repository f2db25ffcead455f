#include "core/md5.hpp"

#include <openssl/evp.h>

#include <sigpu/core.hpp>

namespace sigpu {

namespace {

// EVP_md5() makes OpenSSL 3 look the algorithm up in its provider store on every
// EVP_DigestInit_ex (about 0.9 M instructions, more than hashing a 1080p chroma plane's
// rows takes to set up); an explicitly fetched digest is looked up once per process.
const EVP_MD* md5_digest() {
  struct Fetched {
    EVP_MD* md = EVP_MD_fetch(nullptr, "MD5", nullptr);
    ~Fetched() { EVP_MD_free(md); }
  };
  static const Fetched fetched;
  if (!fetched.md) throw Error("MD5: OpenSSL has no MD5 digest");
  return fetched.md;
}

}  // namespace

struct Md5::Impl {
  EVP_MD_CTX* ctx = nullptr;
  ~Impl() { EVP_MD_CTX_free(ctx); }
};

Md5::Md5() : impl_(std::make_unique<Impl>()) {
  impl_->ctx = EVP_MD_CTX_new();
  if (!impl_->ctx || EVP_DigestInit_ex(impl_->ctx, md5_digest(), nullptr) != 1)
    throw Error("MD5: OpenSSL could not initialise a digest");
}
Md5::~Md5() = default;
Md5::Md5(Md5&&) noexcept = default;
Md5& Md5::operator=(Md5&&) noexcept = default;

void Md5::update(const void* data, std::size_t n) {
  if (n && EVP_DigestUpdate(impl_->ctx, data, n) != 1) throw Error("MD5: update failed");
}

std::array<std::uint8_t, 16> Md5::finish() {
  std::array<std::uint8_t, 16> out{};
  unsigned len = 0;
  if (EVP_DigestFinal_ex(impl_->ctx, out.data(), &len) != 1 || len != 16)
    throw Error("MD5: finish failed");
  return out;
}

std::string to_hex(const std::uint8_t* bytes, std::size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string s;
  s.reserve(n * 2);
  for (std::size_t i = 0; i < n; ++i) {
    s += digits[bytes[i] >> 4];
    s += digits[bytes[i] & 15];
  }
  return s;
}

}  // namespace sigpu
