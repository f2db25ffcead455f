#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>

#include <sigpu/io.hpp>

#include "io/temp_registry.hpp"

namespace sigpu::io {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kBufferBytes = 1 << 20;

std::string in_quotes(const std::string& path) {
  return "'" + path + "'";
}

/// Throws OutputError naming `name` (a full disk, a closed pipe).
void write_all(int fd, std::span<const std::uint8_t> bytes, const std::string& name) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw OutputError("cannot write " + in_quotes(name) + ": " + std::strerror(errno));
    done += static_cast<std::size_t>(n);
  }
}

std::string folder_of(const std::string& path) {
  const auto parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

/// The path of an unused hidden file next to `path`, created (mode 0666 less the umask) and
/// opened for writing.
int make_temp(const std::string& path, std::string* temp) {
  // The extension stays last, for libraries that choose a format by it (libsndfile).
  const fs::path p(path);
  const std::string ext = p.extension().string();
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) about literal + string chains.
  std::string base = ".";
  base.append(p.stem().string()).append(".sigpu-XXXXXX").append(ext);
  std::string name = (p.parent_path() / base).string();
  const int fd = ::mkstemps(name.data(), static_cast<int>(ext.size()));
  if (fd < 0) {
    const int err = errno;
    throw OutputError("cannot create a file in " + in_quotes(folder_of(path)) + " for " +
                      in_quotes(path) + ": " + std::strerror(err));
  }
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::fchmod(fd, 0666 & ~mask);
  *temp = std::move(name);
  return fd;
}

}  // namespace

Output::Output(std::string path, const OutputOptions& options)
    : path_(std::move(path)), force_(options.force) {
  if (path_.empty()) throw UsageError("an output path is empty");
  for (const Input* in : options.inputs)
    if (in && in->same_file_as(path_))
      throw UsageError("output " + in_quotes(name()) + " is the input " + in_quotes(in->name()) +
                       "; refusing to write over an input");
  if (path_ == "-") {
    fd_ = STDOUT_FILENO;
    struct stat st {};
    seekable_ = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && ::lseek(fd_, 0, SEEK_CUR) == 0;
  } else {
    struct stat st {};
    if (::stat(path_.c_str(), &st) == 0) {
      if (S_ISDIR(st.st_mode)) throw UsageError("output " + in_quotes(path_) + " is a directory");
      if (!S_ISREG(st.st_mode)) {
        // A device or pipe the user named (/dev/null, a FIFO): written as it is.
        fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd_ < 0)
          throw OutputError("cannot open " + in_quotes(path_) + ": " + std::strerror(errno));
        owns_fd_ = true;
        buffer_.reserve(kBufferBytes);
        return;
      }
      if (!force_) throw UsageError(in_quotes(path_) + " exists (use --force to overwrite it)");
    }
    fd_ = make_temp(path_, &temp_);
    owns_fd_ = true;
    seekable_ = true;
    temp_registry::add(temp_.c_str());
  }
  buffer_.reserve(kBufferBytes);
}

Output::~Output() {
  if (owns_fd_ && fd_ >= 0) ::close(fd_);
  if (!temp_.empty() && !committed_) {
    ::unlink(temp_.c_str());
    temp_registry::remove(temp_.c_str());
  }
}

void Output::flush() {
  write_all(fd_, buffer_, name());
  buffer_.clear();
}

void Output::write(std::span<const std::uint8_t> bytes) {
  if (committed_) throw Error("write to " + in_quotes(name()) + " after it was finished");
  if (buffer_.size() + bytes.size() > kBufferBytes) flush();
  if (bytes.size() >= kBufferBytes) {
    write_all(fd_, bytes, name());  // a large block gains nothing from a copy in the buffer
    return;
  }
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

void Output::write(std::string_view text) {
  write({reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
}

void Output::seek(std::uint64_t offset) {
  if (!seekable_) throw Error(name() + " cannot seek");
  flush();
  if (::lseek(fd_, static_cast<off_t>(offset), SEEK_SET) < 0)
    throw OutputError("cannot seek in " + in_quotes(name()) + ": " + std::strerror(errno));
}

const std::string& Output::staging_path() const {
  if (path_ == "-") throw UsageError("this output cannot go to stdout; name a file with -o");
  return temp_.empty() ? path_ : temp_;
}

void Output::commit() {
  if (committed_) return;
  flush();
  if (temp_.empty()) {
    committed_ = true;
    return;
  }
  if (::close(std::exchange(fd_, -1)) != 0)
    throw OutputError("cannot write " + in_quotes(path_) + ": " + std::strerror(errno));
  // Without force, link() refuses a name that appeared meanwhile, where rename() would replace.
  if (force_) {
    if (::rename(temp_.c_str(), path_.c_str()) != 0)
      throw OutputError("cannot rename to " + in_quotes(path_) + ": " + std::strerror(errno));
  } else {
    if (::link(temp_.c_str(), path_.c_str()) != 0) {
      const int err = errno;
      if (err == EEXIST)
        throw UsageError(in_quotes(path_) + " appeared while writing; not replaced");
      throw OutputError("cannot create " + in_quotes(path_) + ": " + std::strerror(err));
    }
    ::unlink(temp_.c_str());
  }
  temp_registry::remove(temp_.c_str());
  committed_ = true;
}

}  // namespace sigpu::io
