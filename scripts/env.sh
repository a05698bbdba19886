# env.sh — environment shared by the other scripts (sourced, not run).
#
# Debian 12's OpenBLAS 0.3.21 does not recognise recent Xeons and then silently runs its
# slow generic kernels. OPENBLAS_CORETYPE, read when the library loads, names the kernels to
# use instead. A value already set is kept.
if [[ -z ${OPENBLAS_CORETYPE:-} ]]; then
  if grep -qw avx512f /proc/cpuinfo 2>/dev/null; then
    export OPENBLAS_CORETYPE=SkylakeX
  elif grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
    export OPENBLAS_CORETYPE=Haswell
  fi
fi

# Idle OpenMP threads sleep instead of spinning: on a busy 2-core machine spinning threads
# take the cores that the next op needs (a training step measured 4-5x slower). A value
# already set is kept.
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
