#!/usr/bin/env bash
# The same training numbers, bit for bit, whichever GEMM backend runs the products: the output of
# numbers_fingerprint (53 models, 4 AdamW steps each, losses and parameter sums as hex floats) on
# openblas and on the backend named must be identical. tapegrad's own GEMM claims OpenBLAS's bits on
# its SkylakeX kernels (autograd/cpu/blocked_sgemm.hpp); the last model is config S, so that its
# products reach that kernel.
#
#   fingerprint_on_backends.sh <numbers_fingerprint> <backend>
#
# ctest runs it through on_skylakex.sh, which asks OpenBLAS for the kernels the claim is about
# wherever the CPU can run them.
#
# Exits 77, which ctest reports as skipped (not passed), where the backend is not built in, or
# where OpenBLAS runs other kernels than SkylakeX, for which no bitwise claim is made.
set -euo pipefail
program=$1 backend=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export OMP_NUM_THREADS=1
TAPEGRAD_GEMM_BACKEND=openblas "$program" > "$dir/openblas.txt" 2> "$dir/openblas.err"
core=$(sed -n 's/^numbers_fingerprint: BLAS core //p' "$dir/openblas.err")
if [[ $core != SkylakeX ]]; then
  echo "fingerprint_on_backends: skipped: OpenBLAS runs its '$core' kernels here, not SkylakeX"
  exit 77
fi
if ! TAPEGRAD_GEMM_BACKEND=$backend "$program" > "$dir/$backend.txt" 2> "$dir/$backend.err"; then
  if grep -q "was built without" "$dir/$backend.err"; then
    echo "fingerprint_on_backends: skipped: $(grep -m1 "was built without" "$dir/$backend.err")"
    exit 77
  fi
  cat "$dir/$backend.err"
  exit 1
fi
lines=$(wc -l < "$dir/openblas.txt")
if ! diff "$dir/openblas.txt" "$dir/$backend.txt"; then
  echo "fingerprint_on_backends: FAILED: the numbers on $backend differ from openblas's (lines above: < openblas, > $backend)"
  exit 1
fi
echo "fingerprint_on_backends: the same $lines lines on openblas and $backend"
