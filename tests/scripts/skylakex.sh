# skylakex.sh — sourced by the test scripts that check a claim about OpenBLAS's SkylakeX kernels.
#
# can_run_skylakex: whether this CPU has what those kernels use (AVX-512 F, CD, DQ, BW and VL).
# Where it does, a test asks OpenBLAS for them (OPENBLAS_CORETYPE=SkylakeX) instead of taking the
# kernels OpenBLAS 0.3.21 picks by itself, which on an AMD Zen 4 or 5 are others: left to that, the
# bitwise claims were never checked on those machines.
can_run_skylakex() {
  local flags flag
  flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true) "
  for flag in avx512f avx512cd avx512dq avx512bw avx512vl; do
    [[ $flags == *" $flag "* ]] || return 1
  done
}
