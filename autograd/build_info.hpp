// build_info.hpp — which tapegrad build this is, in one line, for a job to check that all its
// processes run the same one (distributed/consistency.hpp) and for bug reports:
//
//   tapegrad 0.1.0 (git 73667a6c1f2e-dirty, GNU 12.2.0, Release, -march=native
//   -mprefer-vector-width=512; float32 4 B, float64 8 B, int64 8 B, size_t 8 B, little-endian)
//
// The commit is the one the build was made from (cmake/build_id.cmake runs at every build);
// "-dirty" means uncommitted changes, which it cannot tell apart.
#pragma once

#include <string>

namespace tapegrad {

std::string build_id();

}  // namespace tapegrad
