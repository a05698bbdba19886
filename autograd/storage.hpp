// storage.hpp — a reference-counted, 64-byte aligned block of bytes.
//
// Several tensors (views: transpose, narrow, reshape, detach) can share one Storage; each
// keeps its own shape, strides and offset into it. The Storage frees its bytes when the last
// tensor that uses it goes away (std::shared_ptr). Not a caching allocator (yet).
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>

namespace tapegrad {

class Storage {
 public:
  // Allocates nbytes, zero-filled when `zero` is true, otherwise uninitialized.
  explicit Storage(std::size_t nbytes, bool zero = false);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  void* data() { return data_; }
  const void* data() const { return data_; }
  std::size_t nbytes() const { return nbytes_; }

  // Bytes held by all live Storages of the process (for memory tests and diagnostics).
  static std::size_t live_bytes();

 private:
  void* data_ = nullptr;
  std::size_t nbytes_ = 0;
};

}  // namespace tapegrad
