// The open file behind a file-backed clip, read with pread, so that decoding a long clip holds
// only the frames of one call.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include <sigpu/prores.hpp>

namespace sigpu::prores {

/// A regular file, opened once; its length is taken when opened. Reads are safe from several
/// threads at once.
class ClipSource {
 public:
  /// Throws InputError when the path cannot be opened or is not a regular file.
  explicit ClipSource(const std::string& path);
  ~ClipSource();
  ClipSource(const ClipSource&) = delete;
  ClipSource& operator=(const ClipSource&) = delete;

  /// Copies up to dst.size() bytes from `offset`; returns how many there were (short at the
  /// end). Throws InputError on a read error.
  std::size_t read(std::uint64_t offset, std::span<std::uint8_t> dst) const;
  std::uint64_t length() const { return length_; }
  /// The bytes at offset..offset+size, read once and kept until the source is destroyed
  /// (Clip::frame(i)). Throws InputError when the file is shorter.
  std::span<const std::uint8_t> kept(std::uint64_t offset, std::uint64_t size) const;

 private:
  std::string path_;
  int fd_ = -1;
  std::uint64_t length_ = 0;
  mutable std::mutex kept_mutex_;
  mutable std::map<std::pair<std::uint64_t, std::uint64_t>, std::vector<std::uint8_t>> kept_;
};

/// Reads a file descriptor to its end (for pipes, which cannot be read on demand).
std::vector<std::uint8_t> read_to_end(int fd, const std::string& name);

/// Reads into `dst` until it is full or the input ends; returns the bytes read. Retries on
/// EINTR; throws InputError naming `name` on a read error.
std::size_t read_fully(int fd, std::span<std::uint8_t> dst, const std::string& name);

}  // namespace sigpu::prores
