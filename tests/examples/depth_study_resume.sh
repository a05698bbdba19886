#!/usr/bin/env bash
# depth_study_resume.sh DEPTH_STUDY SCRATCH STRAIGHT: a study that stops part-way resumes
# without redoing a finished run, and ends with the records of the straight run in STRAIGHT
# (the smoke plan, run in one go).
#   1. a kill -9 in the middle of the plan (two worker processes): the runs that finished
#      are on disk, the same command resumes and ends with the straight run's records;
#   2. half of the records removed: the same command runs exactly that half again;
#   3. --stop-after a moment: each worker ends the one run it started, records it and starts
#      no other; the study says so (status 130), and the same command without it resumes.
set -u
exe=$1 dir=$2 straight=$3
here=$(dirname "$0")
rm -rf "$dir" && mkdir -p "$dir"
run=("$exe" --smoke --jobs 2 --out "$dir/out")

# 1. killed part-way (the whole process group: the parent and its workers)
setsid "${run[@]}" > "$dir/killed.out" 2>&1 &
pid=$!
for _ in $(seq 200); do [ "$(ls "$dir/out/records" 2> /dev/null | wc -l)" -ge 10 ] && break; sleep 0.05; done
kill -KILL -- -"$pid" 2> /dev/null
wait "$pid" 2> /dev/null
kept=$(ls "$dir/out/records" | grep -c '\.bin$')
total=$(sed -n 's/^plan: .* \([0-9]*\) tasks, .*/\1/p' "$dir/killed.out")
echo "killed with $kept of $total runs recorded"
"${run[@]}" > "$dir/resumed.out" 2>&1 || { echo "FAIL: the resumed run failed"; tail "$dir/resumed.out"; exit 1; }
if [ "$kept" -lt "$total" ]; then
  grep -q "resuming: $kept of the $total runs are already recorded" "$dir/resumed.out" ||
    { echo "FAIL: no 'resuming: $kept of the $total' line"; grep resum "$dir/resumed.out"; exit 1; }
fi
bash "$here/depth_study_same_records.sh" "$straight" "$dir/out" || { echo "FAIL: resumed after a kill: other records"; exit 1; }
# its report's time table: the shares of the runs' own clocks over both sittings, none negative
if [ "$kept" -gt 0 ]; then
  grep -q "The plan ran in several sittings; this last one resumed $kept of the $total runs" "$dir/out/report.md" ||
    { echo "FAIL: the resumed report's time table does not say it ran in several sittings"; exit 1; }
fi
if sed -n '/^## Where the time goes/,/^## /p' "$dir/out/report.md" | grep -qE '\| -[0-9]'; then
  echo "FAIL: a negative figure in the resumed report's time table"; exit 1
fi

# 2. every other record removed: exactly those runs again
ls "$dir/out/records"/*.bin | awk 'NR % 2 == 0' | xargs rm -f
"${run[@]}" > "$dir/again.out" 2>&1 || { echo "FAIL: the second resumed run failed"; exit 1; }
half=$((total / 2))
grep -q "resuming: $((total - half)) of the $total runs are already recorded (.*), $half to run" "$dir/again.out" ||
  { echo "FAIL: expected $((total - half)) of $total recorded"; grep resum "$dir/again.out"; exit 1; }
bash "$here/depth_study_same_records.sh" "$straight" "$dir/out" || { echo "FAIL: resumed with half the records: other records"; exit 1; }

# 3. --stop-after 0.000001 (60 µs): the first run of each of the 2 workers starts (nothing is known
# of the rate yet), none after it
rm -rf "$dir/out"
"${run[@]}" --stop-after 0.000001 > "$dir/stopped.out" 2>&1
status=$?
[ "$status" -eq 130 ] || { echo "FAIL: --stop-after: status $status, expected 130"; tail "$dir/stopped.out"; exit 1; }
grep -q "stopped by --stop-after 1e-06: this share recorded 1 of its" "$dir/stopped.out" ||
  { echo "FAIL: --stop-after: no worker says it stopped after its first run"; tail "$dir/stopped.out"; exit 1; }
grep -q "stopped (--stop-after 1e-06, or Ctrl-C); interrupted: the runs that finished are recorded" "$dir/stopped.out" ||
  { echo "FAIL: --stop-after: the study does not say how to resume"; tail "$dir/stopped.out"; exit 1; }
kept=$(ls "$dir/out/records" | grep -c '\.bin$')
[ "$kept" -eq 2 ] || { echo "FAIL: --stop-after: $kept runs recorded, expected 2 (one per worker)"; exit 1; }
"${run[@]}" > "$dir/after_stop.out" 2>&1 || { echo "FAIL: the run resumed after --stop-after failed"; exit 1; }
grep -q "resuming: 2 of the $total runs are already recorded" "$dir/after_stop.out" ||
  { echo "FAIL: after --stop-after: no 'resuming: 2 of the $total' line"; grep resum "$dir/after_stop.out"; exit 1; }
bash "$here/depth_study_same_records.sh" "$straight" "$dir/out" || { echo "FAIL: resumed after --stop-after: other records"; exit 1; }
echo "depth_study resume: same records as the straight run"
