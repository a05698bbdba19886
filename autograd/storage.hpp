// storage.hpp — a reference-counted, 64-byte aligned block of bytes, from a caching allocator.
//
// Several tensors (views: transpose, narrow, reshape, detach) can share one Storage; each
// keeps its own shape, strides and offset into it. The Storage gives its bytes back when the
// last tensor that uses it goes away (std::shared_ptr).
//
// Why a cache: a training step allocates the same buffers in the same sizes every step
// (activations, gradients). Fresh memory from the OS costs a page fault per 4 KiB on first
// touch, and large blocks go back to the OS on every free, so without a cache each step pays
// for its whole working set again (a GPT-2-size step spent more time zeroing fresh pages for
// the embedding gradient than computing it). Freed blocks are kept in bins by size class
// and handed out again; sizes are rounded up to a class (at most 1/8 more than asked) so that
// nearly equal sizes share blocks, and a large request whose class is empty may take a free
// block up to twice its size (storage.cpp says why). The cache holds at most cache_limit() bytes (default
// 2 GiB, or TAPEGRAD_CACHE_LIMIT_MB in whole MiB; 0 under AddressSanitizer, where reuse would hide a
// use-after-free); empty_cache() returns everything to the OS.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
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

  // Bytes held by all live Storages of the process (for memory tests and diagnostics), and
  // the most they have been since the last reset (activation memory: what checkpointing cuts).
  static std::size_t live_bytes();
  static std::size_t peak_live_bytes();
  static void reset_peak_live_bytes();

  // Counts the writes into these bytes after they were made (Tensor::copy_ and fill_, through
  // any view: views share the Storage), as PyTorch's version counter does. A recipe that
  // recomputes a tensor instead of keeping it (saved_tensor.hpp) is only used when the count
  // has not moved since the tensor was made.
  std::uint64_t version() const { return version_; }
  void bump_version() { ++version_; }

 private:
  void* data_ = nullptr;
  std::size_t nbytes_ = 0;
  std::size_t block_ = 0;  // the size of the block behind data_: nbytes_'s class, or larger
  std::uint64_t version_ = 0;
};

// The caching allocator behind Storage.
struct AllocatorStats {
  std::uint64_t allocations = 0;   // Storages created
  std::uint64_t os_allocations = 0;  // of which served by new memory (cache misses)
  std::size_t cached_bytes = 0;    // free blocks held for reuse now
  std::size_t peak_bytes = 0;      // most bytes ever held (in use + cached)
};
AllocatorStats allocator_stats();
// Returns every cached block to the OS (PyTorch's torch.cuda.empty_cache()).
void empty_cache();
// Bytes the cache may hold; 0 turns caching off.
void set_cache_limit(std::size_t bytes);
std::size_t cache_limit();

namespace detail {
// The limit TAPEGRAD_CACHE_LIMIT_MB's value sets: a whole number of MiB. Unset (nullptr) or
// empty keeps `fallback`; anything else (a unit, a sign, a number too large) is a ValueError
// naming the variable and the value, not a silent 0 that would turn the cache off.
std::size_t cache_limit_from_setting(const char* value, std::size_t fallback);
}  // namespace detail

}  // namespace tapegrad
