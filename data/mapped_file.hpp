// mapped_file.hpp — a read-only memory mapping of a whole file (POSIX mmap), so that a large
// text is read straight from the page cache instead of being copied into a std::string.
//
//   MappedFile file("corpus.txt");        // throws io::IoError if missing, empty, a directory
//   std::string_view text = file.bytes(); // valid while `file` lives
//
// The mapping is PROT_READ and MAP_PRIVATE; the destructor unmaps it. Movable, not copyable.
// Do not truncate the file while it is mapped (reading the lost pages raises SIGBUS).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tapegrad::data {

class MappedFile {
 public:
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  std::string_view bytes() const { return {data_, size_}; }
  std::int64_t size() const { return static_cast<std::int64_t>(size_); }
  const std::string& path() const { return path_; }

 private:
  void unmap() noexcept;

  std::string path_;
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace tapegrad::data
