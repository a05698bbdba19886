// blas_guards.hpp — settings the BLAS tests change for one scope and put back when it ends,
// whatever the test did: the thread count, the GEMM backend, and TAPEGRAD_GEMM_BACKEND.
// Header-only (tests/CMakeLists.txt compiles only test_*.cpp).
#pragma once

#include <cstdlib>
#include <optional>
#include <string>

#include <tapegrad/autograd/cpu/blas.hpp>

namespace tapegrad::testing {

// Restores the thread count (set_num_threads) when the scope ends.
struct ThreadCountGuard {
  int saved = get_num_threads();
  ~ThreadCountGuard() { set_num_threads(saved); }
};

// Restores the GEMM backend chosen before the scope.
struct BackendGuard {
  blas::GemmBackend saved = blas::gemm_backend();
  ~BackendGuard() { blas::set_gemm_backend(saved); }
};

// Sets TAPEGRAD_GEMM_BACKEND for one scope (unset when `value` is empty), then restores it.
struct BackendEnvGuard {
  std::optional<std::string> saved;
  explicit BackendEnvGuard(const std::string& value) {
    if (const char* old = std::getenv("TAPEGRAD_GEMM_BACKEND")) saved = old;
    if (value.empty())
      unsetenv("TAPEGRAD_GEMM_BACKEND");
    else
      setenv("TAPEGRAD_GEMM_BACKEND", value.c_str(), 1);
  }
  ~BackendEnvGuard() {
    if (saved)
      setenv("TAPEGRAD_GEMM_BACKEND", saved->c_str(), 1);
    else
      unsetenv("TAPEGRAD_GEMM_BACKEND");
  }
};

}  // namespace tapegrad::testing
