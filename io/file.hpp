// file.hpp — whole-file reads and atomic writes, the only place in io/ that talks to the OS.
//
// write_file_atomic never leaves a half-written file under the final name: it writes a
// temporary file in the same directory, flushes it to disk (fsync), then renames it over the
// target (rename is atomic on POSIX file systems) and syncs the directory. A failure or a
// crash before the rename leaves the previous file untouched. After a real crash (kill -9,
// power loss) a stray ".<name>.tmp-XXXXXX" may remain next to it; it is safe to delete.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tapegrad::io {

// The whole content of a regular file. Throws IoError naming the path when it is missing, a
// directory, not a regular file (a FIFO would block forever) or unreadable.
std::string read_file(const std::string& path);

// Replaces (or creates) `path` with `bytes`, atomically as described above. Throws IoError.
void write_file_atomic(const std::string& path, std::string_view bytes);

namespace testing {

// Fault injection for tests: while an object lives, write_file_atomic on this thread writes
// `bytes` bytes of the temporary file and then fails with IoError("... injected write
// failure ..."), as a full disk or a crash in the middle of a save would. With
// WriteFault::kill the process instead kills itself there (SIGKILL, after a line on stderr):
// the crash itself, at a known point inside the write, leaving the temporary file of `bytes`
// bytes beside the untouched previous file (train_lm's --fail-mode kill-in-save uses it).
enum class WriteFault { throw_error, kill };
class FailWritesAfter {
 public:
  explicit FailWritesAfter(std::int64_t bytes, WriteFault fault = WriteFault::throw_error);
  ~FailWritesAfter();
  FailWritesAfter(const FailWritesAfter&) = delete;
  FailWritesAfter& operator=(const FailWritesAfter&) = delete;

 private:
  std::int64_t previous_;
  WriteFault previous_fault_;
};

}  // namespace testing

}  // namespace tapegrad::io
