#!/usr/bin/env bash
# expect_failure.sh PATTERN COMMAND [ARGS...] — for jobs that must fail cleanly: passes when
# COMMAND exits non-zero within 60 s and its output (stdout and stderr) has a line matching
# the extended regex PATTERN. A hang fails (timeout), so does success or a silent failure.
set -u
pattern=$1
shift
output=$(timeout --kill-after=5 60 "$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [[ $status -eq 124 || $status -eq 137 ]]; then
  echo "expect_failure: FAILED: the command hung (killed after 60 s)"
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
echo "expect_failure: passed (exit status $status, message found)"
