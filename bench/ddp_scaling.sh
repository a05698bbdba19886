#!/usr/bin/env bash
# ddp_scaling.sh — data-parallel training on 1 process x 1 thread and on 2 processes x 1
# thread, the same global batch: the exposed communication with and without the overlap,
# ZeRO-1's optimizer memory, and what the second process buys.
#
#   bench/ddp_scaling.sh BUILD_DIR [ddp_scaling options...]
#   bench/ddp_scaling.sh build --layers 12 --d-model 384 --heads 6    # the larger model
#
# efficiency = (tokens/s with 2 processes, overlapped) / (2 x tokens/s with 1 process): 100%
# when the second process halves the step time. The load average is printed before and after:
# other programs on the machine take cores away and lower the figures.
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
one=$(mpirun -n 1 "${mpirun_flags[@]}" "$exe" --threads 1 "$@")
printf '%s\n' "$one"
two=$(mpirun -n 2 "${mpirun_flags[@]}" "$exe" --threads 1 --zero1 "$@")
printf '%s\n' "$two"
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
t1=$(sed -n 's/.*mode=none .*tokens_per_s=\([0-9.]*\).*/\1/p' <<<"$one")
t2=$(sed -n 's/.*mode=overlap .*tokens_per_s=\([0-9.]*\).*/\1/p' <<<"$two")
awk -v t1="$t1" -v t2="$t2" \
  'BEGIN { printf "speedup %.2fx, scaling efficiency %.0f%% (2 processes x 1 thread, overlapped, vs 1 x 1, same global batch)\n", t2 / t1, 100 * t2 / (2 * t1) }'
