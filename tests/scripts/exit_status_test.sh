#!/usr/bin/env bash
# exit_status_test.sh — tests/exit_status.sh, the wrapper of every test that passes on its output
# (tapegrad_add_test): it lets through exactly the statuses it should, passes the output on,
# and names the status it refuses. Exits 1 at the first check that fails (the test's verdict:
# no PASS_REGULAR_EXPRESSION, which would make ctest ignore it).
set -u
wrapper=$(cd "$(dirname "$0")/.." && pwd)/exit_status.sh
# expect STATUS LINE EXPECTATION COMMAND...: the wrapper exits STATUS, and LINE (a fixed string,
# or '' for no "exit_status:" line at all) is in its output.
expect() {
  local want=$1 line=$2
  shift 2
  local output status
  output=$(bash "$wrapper" "$@" 2>&1)
  status=$?
  if [[ $status -ne $want ]]; then
    echo "exit_status_test: FAILED: '$*' exited $status, expected $want. Output: $output"
    exit 1
  fi
  if [[ -z $line && $output == *"exit_status:"* ]] || [[ -n $line && $output != *"$line"* ]]; then
    echo "exit_status_test: FAILED: '$*' printed: $output (expected: ${line:-no exit_status line})"
    exit 1
  fi
}
expect 0 '' success bash -c 'echo out; exit 0'
expect 0 '' refusal bash -c 'echo "error: no"; exit 1'
expect 0 '' refusal bash -c 'exit 105'                     # CLI11's validation error
expect 1 'exit_status: FAILED: bash exited with status 1, expected 0' success bash -c 'echo the line looked for; exit 1'
expect 1 'exit_status: FAILED: bash exited with status 23, expected 0' success bash -c 'exit 23'   # LeakSanitizer's status
expect 1 'exit_status: FAILED: true exited with status 0, expected a refusal' refusal true
expect 1 'was ended by signal 6 (exit status 134), expected a refusal' refusal bash -c 'kill -ABRT $$'
expect 1 'was ended by signal 11 (exit status 139), expected 0' success bash -c 'kill -SEGV $$'
expect 1 'exited with status 127, expected a refusal' refusal no-such-program-here
expect 1 "the expectation must be success or refusal, got 'maybe'" maybe true
# the program's own output comes through, before the wrapper's line
output=$(bash "$wrapper" success bash -c 'echo first; echo second >&2; exit 2' 2>&1)
if [[ $output != $'first\nsecond\nexit_status: FAILED: bash exited with status 2, expected 0' ]]; then
  echo "exit_status_test: FAILED: output not passed on: $output"
  exit 1
fi
echo "exit_status_test: passed"
