#include "prores/clip_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace sigpu::prores {

ClipSource::ClipSource(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    const bool dir = S_ISDIR(st.st_mode);
    ::close(fd_);
    throw InputError(path + (dir ? ": is a directory" : ": not a regular file"));
  }
  length_ = static_cast<std::uint64_t>(st.st_size);
}

ClipSource::~ClipSource() {
  if (fd_ >= 0) ::close(fd_);
}

std::size_t ClipSource::read(std::uint64_t offset, std::span<std::uint8_t> dst) const {
  std::size_t done = 0;
  while (done < dst.size()) {
    const ssize_t n =
        ::pread(fd_, dst.data() + done, dst.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw InputError(path_ + ": read failed at byte " + std::to_string(offset + done) + ": " +
                       std::strerror(errno));
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

std::span<const std::uint8_t> ClipSource::kept(std::uint64_t offset, std::uint64_t size) const {
  std::lock_guard lock(kept_mutex_);
  auto [it, added] = kept_.try_emplace({offset, size});
  if (added) {
    if (offset > length_ || size > length_ - offset) {
      kept_.erase(it);
      throw InputError(path_ + ": bytes " + std::to_string(offset) + "+" + std::to_string(size) +
                       " lie past the end of the file");
    }
    it->second.resize(size);
    if (read(offset, it->second) != size) {
      kept_.erase(it);
      throw InputError(path_ + ": the file ends before byte " + std::to_string(offset + size) +
                       " (changed since opened?)");
    }
  }
  return it->second;
}

std::size_t read_fully(int fd, std::span<std::uint8_t> dst, const std::string& name) {
  std::size_t done = 0;
  while (done < dst.size()) {
    const ssize_t n = ::read(fd, dst.data() + done, dst.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw InputError(name + ": read failed: " + std::strerror(errno));
    if (n == 0) break;
    done += static_cast<std::size_t>(n);
  }
  return done;
}

std::vector<std::uint8_t> read_to_end(int fd, const std::string& name) {
  std::vector<std::uint8_t> bytes;
  constexpr std::size_t kChunk = 1 << 20;
  for (;;) {
    const std::size_t at = bytes.size();
    bytes.resize(at + kChunk);
    const std::size_t n = read_fully(fd, {bytes.data() + at, kChunk}, name);
    bytes.resize(at + n);
    if (n < kChunk) return bytes;
  }
}

}  // namespace sigpu::prores
