#!/usr/bin/env bash
# expect_failure.sh [--within SECONDS] PATTERN COMMAND [ARGS...] — for jobs that must fail
# cleanly: passes when COMMAND exits non-zero within SECONDS (default 60) and its output
# (stdout and stderr) has a line matching the extended regex PATTERN. A hang fails (timeout),
# so does success or a silent failure. Prints how long the job took to end. Its exit status is
# the test's verdict: a PASS_REGULAR_EXPRESSION on the test would make ctest ignore it.
set -u
limit=60
if [[ ${1:-} == --within ]]; then
  limit=$2
  shift 2
fi
pattern=$1
shift
start=$(date +%s%N)
output=$(timeout --kill-after=5 "$limit" "$@" 2>&1)
status=$?
tenths=$((($(date +%s%N) - start) / 100000000))
elapsed=$((tenths / 10)).$((tenths % 10))
printf '%s\n' "$output"
# 124: timeout ended it; 137 after the limit: timeout had to kill it. (mpirun itself exits
# with 137 at once when a rank was killed by SIGKILL.)
if [[ $status -eq 124 || ($status -eq 137 && $tenths -ge $((limit * 10))) ]]; then
  echo "expect_failure: FAILED: the command hung (killed after $limit s)"
  exit 1
fi
if [[ $status -eq 0 ]]; then
  echo "expect_failure: FAILED: the command succeeded"
  exit 1
fi
if ! grep -Eq -- "$pattern" <<<"$output"; then
  echo "expect_failure: FAILED: exit status $status, but no line matches: $pattern"
  exit 1
fi
echo "expect_failure: passed (exit status $status after $elapsed s, message found)"
