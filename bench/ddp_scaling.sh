#!/usr/bin/env bash
# ddp_scaling.sh — strong scaling of data-parallel training: the same global batch on
# 1 process x 1 thread and on 2 processes x 1 thread, and what the second process buys.
#
#   bench/ddp_scaling.sh BUILD_DIR [ddp_scaling options...]    e.g. --layers 4 --batch 16
#
# efficiency = (tokens/s with 2 processes) / (2 x tokens/s with 1 process): 100% when the
# second process halves the step time. The load average is printed before and after: other
# programs on the machine take cores away and lower the figures.
set -euo pipefail
build=$1
shift
exe=$build/bench/ddp_scaling
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../scripts/env.sh"
# Open MPI: as root only when told so (containers); more processes than cores allowed.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun_flags=()
if mpirun --version 2>&1 | grep -q "Open MPI"; then mpirun_flags=(--oversubscribe --bind-to "${BIND_TO:-core}"); fi

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)  ($(nproc) cores)"
declare -A tokens
for n in 1 2; do
  out=$(mpirun -n "$n" "${mpirun_flags[@]}" "$exe" --threads 1 "$@")
  printf '%s\n' "$out"
  tokens[$n]=$(sed -n 's/.*tokens_per_s=\([0-9.]*\).*/\1/p' <<<"$out")
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v t1="${tokens[1]}" -v t2="${tokens[2]}" \
  'BEGIN { printf "speedup %.2fx, scaling efficiency %.0f%% (2 processes x 1 thread vs 1 x 1, same global batch)\n", t2 / t1, 100 * t2 / (2 * t1) }'
