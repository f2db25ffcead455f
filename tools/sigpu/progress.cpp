#include "progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace sigpu::cli {
namespace {

constexpr auto kRedrawEvery = std::chrono::milliseconds(100);
constexpr int kBarWidth = 24;

int terminal_width() {
  winsize ws{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

}  // namespace

Progress::Progress(std::uint64_t total_bytes, std::size_t total_files)
    : enabled_(isatty(STDERR_FILENO) != 0), total_bytes_(total_bytes), total_files_(total_files) {}

Progress::~Progress() {
  clear();
}

void Progress::set_current(std::string name) {
  current_ = std::move(name);
  draw(true);
}

void Progress::add_bytes(std::uint64_t n) {
  bytes_ = std::min(total_bytes_, bytes_ + n);
  draw(false);
}

void Progress::file_done() {
  files_ = std::min(total_files_, files_ + 1);
  draw(true);
}

void Progress::clear() {
  if (!shown_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  shown_ = false;
}

void Progress::draw(bool force) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (!force && shown_ && now - last_draw_ < kRedrawEvery) return;
  last_draw_ = now;

  const double frac = total_bytes_ ? double(bytes_) / double(total_bytes_) : 0.0;
  const int filled = static_cast<int>(frac * kBarWidth);
  char line[160];
  int n =
      std::snprintf(line, sizeof line, "\r\033[K[%.*s%.*s] %3d%%  %.1f/%.1f MB", filled,
                    "########################", kBarWidth - filled, "------------------------",
                    static_cast<int>(frac * 100), double(bytes_) / 1e6, double(total_bytes_) / 1e6);
  if (total_files_ > 1)
    n += std::snprintf(line + n, sizeof line - n, "  %zu/%zu files", files_, total_files_);
  std::string text(line, std::min<std::size_t>(n, sizeof line - 1));
  // "\r\033[K" takes no columns; keep the name within the terminal so the line never wraps.
  const int room = terminal_width() - (static_cast<int>(text.size()) - 4) - 3;
  if (room > 8 && !current_.empty()) {
    const std::string name = current_.size() <= std::size_t(room)
                                 ? current_
                                 : "..." + current_.substr(current_.size() - (room - 3));
    text += "  " + name;
  }
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
  shown_ = true;
}

}  // namespace sigpu::cli
