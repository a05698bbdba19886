// errors.hpp — the two exceptions of tapegrad::io.
//
//   FormatError  the bytes are not a valid file of the expected format: wrong magic, a newer
//                format version, truncated data, a checksum mismatch, an absurd size, a name
//                that is not UTF-8... The message says which file and what is wrong.
//   IoError      the operating system refused: missing file, a directory, no permission, a
//                full disk. The message carries the path and strerror's text.
// Both derive from tapegrad::Error, so `catch (const tapegrad::Error&)` catches them too.
#pragma once

#include "../autograd/errors.hpp"

namespace tapegrad::io {

class FormatError : public Error {
 public:
  using Error::Error;
};

class IoError : public Error {
 public:
  using Error::Error;
};

}  // namespace tapegrad::io
