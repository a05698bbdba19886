#!/usr/bin/env bash
# Runs a command with OpenBLAS on its SkylakeX kernels (OPENBLAS_CORETYPE=SkylakeX), where the CPU
# can run them; exits 77, which ctest reports as skipped, where it cannot.
#
#   on_skylakex.sh <command> [args...]
#
# For the tests whose claims are about those kernels: tapegrad's own GEMM gives their bits
# (autograd/blocked_sgemm.hpp). Those tests pass with a warning under other kernels, so without this
# a CPU on which OpenBLAS picks others (an AMD Zen 4 or 5) never checked them.
set -euo pipefail
source "$(dirname "$0")/skylakex.sh"
if ! can_run_skylakex; then
  echo "on_skylakex: skipped: this CPU lacks the AVX-512 that OpenBLAS's SkylakeX kernels use"
  exit 77
fi
export OPENBLAS_CORETYPE=SkylakeX
exec "$@"
