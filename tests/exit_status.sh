#!/usr/bin/env bash
# exit_status.sh success|refusal COMMAND [ARGS...] — runs COMMAND, its output untouched, then
# checks how it ended. A test that passes on its output (PASS_REGULAR_EXPRESSION) needs this:
# ctest then ignores the exit status, so a program that printed the line it looks for and then
# crashed, leaked (LeakSanitizer reports at exit) or returned an error would pass.
#   success: COMMAND must exit 0.
#   refusal: COMMAND must refuse cleanly, exiting 1 to 125. 126 and 127 mean it could not run
#            at all, and above 128 a signal ended it (an uncaught exception aborts: 134).
# On anything else it prints a line starting "exit_status: FAILED", which the test's
# FAIL_REGULAR_EXPRESSION matches (tapegrad_add_test in the root CMakeLists.txt), and exits 1.
# (tests/distributed/expect_failure.sh is the other wrapper: for jobs that must fail within a time
# limit with a given line, where a signal may end them, as mpirun's ranks.)
set -u
expected=$1
shift
"$@"
status=$?
if ((status > 128)); then
  how="was ended by signal $((status - 128)) (exit status $status)"
else
  how="exited with status $status"
fi
case $expected in
  success) ((status == 0)) && exit 0
           echo "exit_status: FAILED: ${1##*/} $how, expected 0" ;;
  refusal) ((status >= 1 && status <= 125)) && exit 0
           echo "exit_status: FAILED: ${1##*/} $how, expected a refusal (1 to 125)" ;;
  *)       echo "exit_status: FAILED: the expectation must be success or refusal, got '$expected'" ;;
esac
exit 1
