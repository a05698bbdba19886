// storage.cpp — aligned allocation for tensor data.
#include "storage.hpp"

#include <cstring>
#include <new>

namespace tapegrad {

// 64 bytes: one cache line, and the width of an AVX-512 register, so vector loads of a
// tensor's first element are aligned.
constexpr std::size_t kAlignment = 64;

namespace {
std::atomic<std::size_t> live_bytes_counter{0};
}

std::size_t Storage::live_bytes() { return live_bytes_counter.load(); }

Storage::Storage(std::size_t nbytes, bool zero) : nbytes_(nbytes) {
  // operator new with an alignment never returns null (it throws std::bad_alloc); allocate
  // at least one byte so that data() of an empty tensor is still a valid pointer.
  data_ = ::operator new(nbytes == 0 ? 1 : nbytes, std::align_val_t(kAlignment));
  if (zero) std::memset(data_, 0, nbytes);
  live_bytes_counter += nbytes_;
}

Storage::~Storage() {
  live_bytes_counter -= nbytes_;
  ::operator delete(data_, std::align_val_t(kAlignment));
}

}  // namespace tapegrad
