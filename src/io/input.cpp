#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <sigpu/io.hpp>

namespace sigpu::io {
namespace {

std::string in_quotes(const std::string& path) {
  return "'" + path + "'";
}

}  // namespace

Input::Input(std::string path) : path_(std::move(path)) {
  if (path_.empty()) throw UsageError("an input path is empty");
  if (path_ == "-") {
    fd_ = STDIN_FILENO;
  } else {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) throw InputError("cannot open " + in_quotes(path_) + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int err = errno;
    if (path_ != "-") ::close(fd_);
    throw InputError("cannot read " + in_quotes(name()) + ": " + std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd_);
    throw InputError(in_quotes(path_) + " is a directory");
  }
  seekable_ = S_ISREG(st.st_mode);
  size_ = seekable_ ? static_cast<std::uint64_t>(st.st_size) : 0;
  device_ = st.st_dev;
  inode_ = st.st_ino;
}

Input::~Input() {
  if (map_) ::munmap(const_cast<std::uint8_t*>(map_), size_);
  if (fd_ > STDIN_FILENO) ::close(fd_);
}

Input::Input(Input&& o) noexcept
    : path_(std::move(o.path_)),
      fd_(std::exchange(o.fd_, -1)),
      seekable_(o.seekable_),
      size_(o.size_),
      device_(o.device_),
      inode_(o.inode_),
      map_(std::exchange(o.map_, nullptr)),
      slurped_(std::move(o.slurped_)) {}

Input& Input::operator=(Input&& o) noexcept {
  if (this != &o) {
    this->~Input();
    new (this) Input(std::move(o));
  }
  return *this;
}

std::size_t Input::read(std::span<std::uint8_t> buffer) {
  std::size_t got = 0;
  while (got < buffer.size()) {
    const ssize_t n = ::read(fd_, buffer.data() + got, buffer.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError("cannot read " + in_quotes(name()) + ": " + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  return got;
}

std::size_t Input::read_at(std::uint64_t offset, std::span<std::uint8_t> buffer) {
  if (!seekable_) throw UsageError(name() + ": reading at an offset needs a seekable file");
  std::size_t got = 0;
  while (got < buffer.size()) {
    const ssize_t n =
        ::pread(fd_, buffer.data() + got, buffer.size() - got, static_cast<off_t>(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError("cannot read " + in_quotes(name()) + ": " + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  return got;
}

std::span<const std::uint8_t> Input::map() {
  if (!seekable_) throw UsageError(name() + " is not a regular file; this needs a seekable file");
  if (!map_ && size_ > 0) {
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
    if (p == MAP_FAILED)
      throw InputError("cannot map " + in_quotes(path_) + ": " + std::strerror(errno));
    map_ = static_cast<const std::uint8_t*>(p);
  }
  return {map_, static_cast<std::size_t>(size_)};
}

std::span<const std::uint8_t> Input::all(std::uint64_t max_bytes) {
  if (seekable_) return map();
  constexpr std::size_t kChunk = 1 << 20;
  while (true) {
    const std::size_t at = slurped_.size();
    if (at > max_bytes)
      throw InputError(name() + " is longer than " + std::to_string(max_bytes) +
                       " bytes, the most read from a stream; give a file instead");
    slurped_.resize(at + kChunk);
    const std::size_t n = read({slurped_.data() + at, kChunk});
    slurped_.resize(at + n);
    if (n == 0) break;
  }
  return slurped_;
}

bool Input::same_file_as(const std::string& path) const {
  struct stat st {};
  if (path == "-" || ::stat(path.c_str(), &st) != 0) return false;
  return static_cast<std::uint64_t>(st.st_dev) == device_ &&
         static_cast<std::uint64_t>(st.st_ino) == inode_;
}

}  // namespace sigpu::io
