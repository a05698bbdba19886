#!/usr/bin/env bash
# Runs a command with OpenBLAS on its SkylakeX kernels (OPENBLAS_CORETYPE=SkylakeX), where the CPU
# can run them (AVX-512 F, CD, DQ, BW and VL); exits 77, which ctest reports as skipped, where it
# cannot.
#
#   on_skylakex.sh <command> [args...]
#
# For the tests whose claims are about those kernels: tapegrad's own GEMM gives their bits
# (autograd/cpu/blocked_sgemm.hpp). Left to itself OpenBLAS 0.3.21 picks other kernels on an AMD Zen 4
# or 5, and a shell may have set OPENBLAS_CORETYPE to another core; there the [blas] cases passed
# without their bitwise checks and the fingerprint test skipped, so those machines never checked
# the claims.
set -euo pipefail
flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true) "
for flag in avx512f avx512cd avx512dq avx512bw avx512vl; do
  if [[ $flags != *" $flag "* ]]; then
    echo "on_skylakex: skipped: this CPU lacks $flag, which OpenBLAS's SkylakeX kernels use"
    exit 77
  fi
done
export OPENBLAS_CORETYPE=SkylakeX
exec "$@"
