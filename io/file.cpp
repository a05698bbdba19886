// file.cpp — POSIX reads and atomic writes (open/fstat/read, mkstemp/write/fsync/rename).
#include "file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "errors.hpp"

namespace tapegrad::io {

namespace {

// Bytes the temporary file may receive before the injected failure; -1 = no injection.
thread_local std::int64_t fail_writes_after = -1;
thread_local testing::WriteFault fail_writes_how = testing::WriteFault::throw_error;

[[noreturn]] void throw_os_error(const std::string& what, const std::string& path, int err) {
  throw IoError(what + " '" + path + "': " + std::strerror(err));
}

// Closes a file descriptor when it goes out of scope (also on exceptions).
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

// write(2) until everything is written: it may write less than asked, or be interrupted.
void write_all(int fd, const char* data, std::size_t size, const std::string& path) {
  std::size_t done = 0;
  while (done < size) {
    std::size_t chunk = size - done;
    if (fail_writes_after >= 0) {
      const auto allowed = static_cast<std::size_t>(fail_writes_after);
      if (done >= allowed && fail_writes_how == testing::WriteFault::kill) {
        std::fprintf(stderr, "write_file_atomic: killing this process after %zu bytes of '%s' (injected)\n", done,
                     path.c_str());
        std::fflush(stderr);
        ::raise(SIGKILL);
      }
      if (done >= allowed)
        throw IoError("write_file_atomic: injected write failure after " + std::to_string(done) +
                      " bytes while writing '" + path + "'");
      chunk = std::min(chunk, allowed - done);
    }
    const ssize_t n = ::write(fd, data + done, chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_os_error("write_file_atomic: cannot write", path, errno);
    }
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

std::string read_file(const std::string& path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw_os_error("cannot open", path, errno);
  FdCloser closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw_os_error("cannot stat", path, errno);
  if (S_ISDIR(st.st_mode)) throw IoError("cannot read '" + path + "': it is a directory, not a file");
  if (!S_ISREG(st.st_mode)) throw IoError("cannot read '" + path + "': not a regular file");

  // The buffer is the size the file system reports, never a size read from the file.
  std::string bytes(static_cast<std::size_t>(st.st_size), '\0');
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw_os_error("cannot read", path, errno);
    }
    if (n == 0) throw IoError("cannot read '" + path + "': the file shrank while it was being read");
    done += static_cast<std::size_t>(n);
  }
  return bytes;
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  if (target.filename().empty()) throw IoError("cannot write '" + path + "': not a file name");
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");

  // Same directory as the target, so that rename() stays on one file system (atomic).
  std::string temp = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
  std::vector<char> temp_buf(temp.begin(), temp.end());
  temp_buf.push_back('\0');
  const int fd = ::mkstemp(temp_buf.data());
  if (fd < 0) throw_os_error("cannot create a temporary file in", dir.string(), errno);
  temp.assign(temp_buf.data());
  try {
    FdCloser closer{fd};
    // mkstemp creates the file readable by its owner only; a checkpoint is an ordinary file.
    if (::fchmod(fd, 0644) != 0) throw_os_error("cannot chmod", temp, errno);
    write_all(fd, bytes.data(), bytes.size(), path);
    // The data must be on disk before the rename makes it visible under the final name.
    if (::fsync(fd) != 0) throw_os_error("cannot fsync", temp, errno);
  } catch (...) {
    ::unlink(temp.c_str());
    throw;
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(temp.c_str());
    throw_os_error("cannot replace", path, err);
  }
  // Persist the rename itself. Best effort: some file systems refuse fsync on a directory,
  // and the new file is already complete under its name either way.
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
}

namespace testing {

FailWritesAfter::FailWritesAfter(std::int64_t bytes, WriteFault fault)
    : previous_(fail_writes_after), previous_fault_(fail_writes_how) {
  fail_writes_after = std::max<std::int64_t>(bytes, 0);
  fail_writes_how = fault;
}
FailWritesAfter::~FailWritesAfter() {
  fail_writes_after = previous_;
  fail_writes_how = previous_fault_;
}

}  // namespace testing

}  // namespace tapegrad::io
