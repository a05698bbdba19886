#!/usr/bin/env bash
# test_tapegrad_learn.sh TOOL LEARN_SOURCE BUILD — the student's commands, run as a student:
# start a copy in a fresh folder, check exercise 1 (the stub: it fails, saying what is not
# written), put the solution in the copy, check again (every property holds); a start inside
# the library's sources is refused. The build points back at no copy when it ends.
set -uo pipefail
tool=$1 source=$2 build=$3
work=$(mktemp -d)
cleanup() {
  cmake -DTAPEGRAD_LEARN_WORKDIR= "$build" > /dev/null 2>&1
  rm -f "$build/learn/workdir.txt"
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAILED: $*"
  exit 1
}
"$tool" start "$work/mine" > "$work/start.txt" 2>&1 || fail "start: $(cat "$work/start.txt")"
grep -q "01_mul_add: copied" "$work/start.txt" || fail "start did not copy exercise 1: $(cat "$work/start.txt")"
[[ -f $work/mine/01_mul_add/README.md && ! -e $work/mine/01_mul_add/solution.cpp ]] ||
  fail "the copy must hold the page and the stub, not the solution"
"$tool" check 1 > "$work/stub.txt" 2>&1 && fail "check 1 of the stub exited 0"
grep -q "not written yet (TODO exercise 1" "$work/stub.txt" || fail "check 1 of the stub: $(cat "$work/stub.txt")"
cp "$source/01_mul_add/solution.cpp" "$work/mine/01_mul_add/exercise.cpp"
"$tool" check 1 > "$work/solved.txt" 2>&1 || fail "check 1 of the solution: $(cat "$work/solved.txt")"
grep -q "all [0-9]* properties hold" "$work/solved.txt" || fail "check 1 of the solution: $(cat "$work/solved.txt")"
echo 'this is not C++' > "$work/mine/01_mul_add/exercise.cpp"
"$tool" check 1 > "$work/broken.txt" 2>&1 && fail "check 1 of a file that does not compile exited 0"
grep -q "does not compile" "$work/broken.txt" || fail "check 1 of a broken file: $(cat "$work/broken.txt")"
"$tool" start "$source/mine" > "$work/inside.txt" 2>&1 && fail "start inside the library's sources was not refused"
grep -q "inside the library's sources" "$work/inside.txt" || fail "start inside the sources: $(cat "$work/inside.txt")"
cat "$work/stub.txt"
echo "tapegrad-learn: the student's commands work"
