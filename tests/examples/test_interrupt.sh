#!/usr/bin/env bash
# Ctrl-C (SIGINT) during train_lm saves a checkpoint before exiting with status 130, and the
# saved run can be resumed. Usage: test_interrupt.sh TRAIN_LM SCRATCH_DIR
set -u
exe=$1 dir=$2
mkdir -p "$dir" && rm -f "$dir"/int.*
tiny=(--layers 1 --d-model 32 --heads 2 --seq-len 16 --batch 8 --threads 1 --sample-tokens 0 --checkpoint-interval 0)
"$exe" "${tiny[@]}" --steps 1000000 --checkpoint "$dir/int.tgc" --log "$dir/int.csv" > "$dir/int.out" 2>&1 &
pid=$!
for _ in $(seq 300); do grep -q "step 50/" "$dir/int.out" && break; sleep 0.1; done
kill -INT "$pid"
wait "$pid"
rc=$?
cat "$dir/int.out" | tail -3
[ "$rc" -eq 130 ] || { echo "FAIL: exit status $rc, expected 130"; exit 1; }
grep -q "checkpoint saved to .* (interrupted)" "$dir/int.out" || { echo "FAIL: no checkpoint message"; exit 1; }
"$exe" "${tiny[@]}" --steps 1000000 --stop-after 5 --resume --checkpoint "$dir/int.tgc" --log "$dir/int.csv" > "$dir/resume.out" 2>&1 ||
  { echo "FAIL: resume failed"; cat "$dir/resume.out"; exit 1; }
grep -q "resumed from" "$dir/resume.out" || { echo "FAIL: did not resume"; exit 1; }
echo "interrupt test passed"
