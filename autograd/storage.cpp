// storage.cpp — aligned allocation for tensor data, through a cache of freed blocks.
#include "storage.hpp"

#include <bit>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include <sys/mman.h>

#include "env_switch.hpp"
#include "errors.hpp"

namespace tapegrad {

// 64 bytes: one cache line, and the width of an AVX-512 register, so vector loads of a
// tensor's first element are aligned.
constexpr std::size_t kAlignment = 64;

namespace {

// With TAPEGRAD_HUGE_PAGES=1 (scripts/env.sh sets it for the main job, the studies and the
// benchmarks), blocks of 2 MiB and more start on a 2 MiB boundary, and the kernel is asked to
// back them with 2 MiB pages (MADV_HUGEPAGE: Linux's transparent huge pages, which Debian gives
// only to memory that asks, the "madvise" setting).
// - Why: a head's rows in the packed qkv activation lie 4.6 KB apart at d_model 384, so with
//   4 KiB pages every row an attention product or a GEMM's packing reads is a new page and a
//   TLB miss; a 2 MiB page holds 450 of them. M's step 1.2% faster here, G's 1.3%.
// - Why not by default: the kernel zeroes each 2 MiB page at first touch, and on this virtual
//   machine that ran at about 0.4 GB/s: M's first step 0.1-0.6 s slower, and a test that builds
//   a GPT-2-small model 2.2 -> 3.2-3.5 s. That pays back only over a long run, where the cache
//   keeps the blocks. (PyTorch's THP_MEM_ALLOC_ENABLE, of later versions, is opt-in too.)
// docs/performance.md, "Memory".
constexpr std::size_t kHugePage = std::size_t(2) << 20;

bool huge_pages() {
  static const bool on = detail::env_switch("TAPEGRAD_HUGE_PAGES", false, "2 MiB pages for large tensor blocks");
  return on;
}

std::size_t alignment_of(std::size_t block) { return huge_pages() && block >= kHugePage ? kHugePage : kAlignment; }

void* new_block(std::size_t block) {
  void* p = ::operator new(block, std::align_val_t(alignment_of(block)));
#ifdef MADV_HUGEPAGE
  if (alignment_of(block) == kHugePage)  // a hint: where it fails, the block keeps 4 KiB pages
    madvise(p, block / kHugePage * kHugePage, MADV_HUGEPAGE);
#endif
  return p;
}

std::atomic<std::size_t> live_bytes_counter{0};
std::atomic<std::size_t> live_peak{0};  // the most live_bytes_counter has been since the last reset

// The size class of a request: multiples of 64 bytes up to 4 KiB, then 8 classes per power of
// two (4096, 4608, 5120, ...), so a block is at most 12.5% larger than asked.
std::size_t size_class(std::size_t nbytes) {
  if (nbytes <= 4096) return (std::max<std::size_t>(nbytes, 1) + 63) / 64 * 64;
  const std::size_t step = std::bit_floor(nbytes) / 8;
  return (nbytes + step - 1) / step * step;
}

// Under AddressSanitizer the cache is off by default: a reused block would hide a
// use-after-free from it.
#if defined(__SANITIZE_ADDRESS__)
constexpr std::size_t kDefaultLimit = 0;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr std::size_t kDefaultLimit = 0;
#else
constexpr std::size_t kDefaultLimit = std::size_t(2) << 30;
#endif
#else
constexpr std::size_t kDefaultLimit = std::size_t(2) << 30;
#endif

std::size_t limit_from_env() {
  return detail::cache_limit_from_setting(std::getenv("TAPEGRAD_CACHE_LIMIT_MB"), kDefaultLimit);
}

// A request of at least kBorrowFrom bytes whose own class has no free block takes the smallest
// free block of a larger class, up to twice its size: best fit without splitting (PyTorch's
// CUDA caching allocator serves large requests best fit, and splits). Why: a training step's
// gradients and activations have different sizes and are never all live at once: zero_grad
// frees the gradients before the forward, and the backward frees activations as the gradients
// appear. With exact classes alone each kind keeps its own blocks, and the weight gradients'
// blocks sit idle in the cache through the whole forward, at the step's peak. Borrowing lets
// the backward's gradients take the blocks the activations just left, and the next forward's
// activations take them back, so the cache holds little more than the peak of live tensors.
constexpr std::size_t kBorrowFrom = std::size_t(64) << 10;

// Free blocks by size class, ordered (for best fit). One mutex: allocations come from the
// thread running the ops, rarely from several at once, and each is far costlier than the lock.
struct Cache {
  std::mutex mutex;
  std::map<std::size_t, std::vector<void*>> bins;
  std::size_t cached = 0, held = 0, peak = 0, limit = limit_from_env();
  std::uint64_t allocations = 0, os_allocations = 0;

  void release_all() {
    for (auto& [block, blocks] : bins)
      for (void* p : blocks) ::operator delete(p, std::align_val_t(alignment_of(block)));
    held -= cached;
    cached = 0;
    bins.clear();
  }
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: Storages may outlive static destructors
  return *c;
}

// A block of at least `block` bytes; `block` becomes the size of the block handed out (its
// own class, or a larger one's when borrowed).
void* allocate(std::size_t& block) {
  Cache& c = cache();
  {
    std::lock_guard lock(c.mutex);
    ++c.allocations;
    const std::size_t largest = block >= kBorrowFrom ? 2 * block : block;
    for (auto it = c.bins.lower_bound(block); it != c.bins.end() && it->first <= largest; ++it) {
      if (it->second.empty()) continue;
      void* p = it->second.back();
      it->second.pop_back();
      block = it->first;
      c.cached -= block;
      return p;
    }
    ++c.os_allocations;
    c.held += block;
    c.peak = std::max(c.peak, c.held);
  }
  // operator new with an alignment never returns null (it throws std::bad_alloc). On failure,
  // give the cache back to the OS and try once more before giving up.
  try {
    return new_block(block);
  } catch (const std::bad_alloc&) {
    empty_cache();
    return new_block(block);
  }
}

void deallocate(void* p, std::size_t block) {
  Cache& c = cache();
  {
    std::lock_guard lock(c.mutex);
    if (c.cached + block <= c.limit) {
      c.bins[block].push_back(p);
      c.cached += block;
      return;
    }
    c.held -= block;
  }
  ::operator delete(p, std::align_val_t(alignment_of(block)));
}

}  // namespace

std::size_t detail::cache_limit_from_setting(const char* value, std::size_t fallback) {
  if (!value || !*value) return fallback;
  constexpr std::size_t kMaxMiB = std::numeric_limits<std::size_t>::max() >> 20;  // mib << 20 fits
  std::size_t mib = 0;
  for (const char* ch = value; *ch; ++ch) {
    const auto digit = static_cast<std::size_t>(*ch - '0');
    if (*ch < '0' || *ch > '9' || mib > (kMaxMiB - digit) / 10)
      throw ValueError("TAPEGRAD_CACHE_LIMIT_MB must be a whole number of MiB (0 turns the tensor cache off), got \"" +
                       std::string(value) + "\"");
    mib = mib * 10 + digit;
  }
  return mib << 20;
}

std::size_t Storage::live_bytes() { return live_bytes_counter.load(); }
std::size_t Storage::peak_live_bytes() { return live_peak.load(); }
void Storage::reset_peak_live_bytes() { live_peak = live_bytes_counter.load(); }

Storage::Storage(std::size_t nbytes, bool zero) : nbytes_(nbytes), block_(size_class(nbytes)) {
  // At least one byte, so that data() of an empty tensor is still a valid pointer.
  data_ = allocate(block_);
  if (zero) std::memset(data_, 0, nbytes);
  const std::size_t now = live_bytes_counter += nbytes_;
  for (std::size_t peak = live_peak.load(); now > peak && !live_peak.compare_exchange_weak(peak, now);) {
  }
}

Storage::~Storage() {
  live_bytes_counter -= nbytes_;
  deallocate(data_, block_);
}

AllocatorStats allocator_stats() {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  return {c.allocations, c.os_allocations, c.cached, c.peak};
}

void empty_cache() {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  c.release_all();
}

void set_cache_limit(std::size_t bytes) {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  c.limit = bytes;
  if (c.cached > bytes) c.release_all();
}

std::size_t cache_limit() {
  Cache& c = cache();
  std::lock_guard lock(c.mutex);
  return c.limit;
}

}  // namespace tapegrad
