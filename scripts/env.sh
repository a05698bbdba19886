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

# How long an idle OpenMP thread waits for the next parallel region before it sleeps.
# - GCC's OpenMP spins 300000 rounds by default (milliseconds): on a busy 2-core machine the
#   spinning threads take the cores that the next op needs (S at 2 threads, beside one busy
#   process: 330 ms a step against 34).
# - Sleeping at once (OMP_WAIT_POLICY=passive) pays the sleeping thread's wake-up at every
#   region: 40-80 us on a virtual machine, more than most of a small model's regions take (S at
#   2 threads: 29 ms a step, no faster than 1 thread).
# - 1000 rounds (10-30 us here) span the gaps between the regions of a step: S at 2 threads
#   18.7-19.2 ms, and 38.6 beside one busy process (13% more than sleeping at once).
# (docs/performance.md, "Threads".) A value of either variable already set is kept.
if [[ -z ${OMP_WAIT_POLICY:-} && -z ${GOMP_SPINCOUNT:-} ]]; then
  export GOMP_SPINCOUNT=1000
fi

# 2 MiB pages for tensor blocks of 2 MiB and more (autograd/storage.cpp): a step 1-1.3% faster
# for the main job, the studies and the benchmarks, at a cost once per process while the kernel
# zeroes the pages (about a second more for a model of GPT-2's size on a virtual machine).
# scripts/test.sh turns it off: its many short processes would pay the cost and not gain. A
# value already set is kept.
export TAPEGRAD_HUGE_PAGES=${TAPEGRAD_HUGE_PAGES:-1}
