// mapped_file.cpp — open/fstat/mmap/close, and munmap in the destructor.
#include "mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "../io/errors.hpp"

namespace tapegrad::data {

namespace {

[[noreturn]] void throw_os_error(const std::string& what, const std::string& path, int err) {
  throw io::IoError("MappedFile: cannot " + what + " '" + path + "': " + std::strerror(err));
}

}  // namespace

MappedFile::MappedFile(const std::string& path) : path_(path) {
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) throw_os_error("open", path, errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw_os_error("stat", path, err);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    throw io::IoError("MappedFile: cannot map '" + path + "': " +
                      (S_ISDIR(st.st_mode) ? "it is a directory" : "not a regular file"));
  }
  if (st.st_size == 0) {
    ::close(fd);
    throw io::IoError("MappedFile: cannot map '" + path + "': the file is empty");
  }
  size_ = static_cast<std::size_t>(st.st_size);
  void* p = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  const int err = errno;
  ::close(fd);  // the mapping keeps its own reference to the file
  if (p == MAP_FAILED) throw_os_error("mmap", path, err);
  data_ = static_cast<const char*>(p);
  // Text is read front to back: let the kernel read ahead generously.
  ::madvise(p, size_, MADV_SEQUENTIAL);
}

MappedFile::~MappedFile() { unmap(); }

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    unmap();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void MappedFile::unmap() noexcept {
  if (data_ != nullptr) ::munmap(const_cast<char*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace tapegrad::data
