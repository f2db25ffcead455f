// A one-line progress bar on stderr for long jobs (many files, large outputs). It draws only
// when stderr is a terminal, so logs and pipes stay clean.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace sigpu::cli {

/// Seconds since `start`, for the timings commands print.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

class Progress {
 public:
  Progress(std::uint64_t total_bytes, std::size_t total_files);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool enabled() const { return enabled_; }
  /// The file being worked on, shown after the counts.
  void set_current(std::string name);
  void add_bytes(std::uint64_t n);
  void file_done();
  /// Erases the bar so a message can be printed; the next update draws it again.
  void clear();

 private:
  void draw(bool force);

  bool enabled_ = false, shown_ = false;
  std::uint64_t total_bytes_ = 0, bytes_ = 0;
  std::size_t total_files_ = 0, files_ = 0;
  std::string current_;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace sigpu::cli
