#!/usr/bin/env bash
# deps_test.sh — scripts/deps.sh against a fake apt: which packages each command asks for, that
# a plan removing a package stops before anything is installed (naming it, saying what to do),
# and that an install never removes (apt-get --no-remove). Fake dpkg-query, apt-get and id sit
# first on PATH; they log their calls. Prints "deps_test: passed" when every check holds.
set -uo pipefail
deps=$(cd "$(dirname "$0")/../../scripts" && pwd)/deps.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/bin"
# dpkg-query: a package is installed when it is listed in $work/installed.
cat > "$work/bin/dpkg-query" <<'FAKE'
#!/usr/bin/env bash
package=${!#}
echo "dpkg-query $package" >> "$FAKE_LOG"
grep -qx "$package" "$FAKE_DIR/installed" && printf 'install ok installed'
exit 0
FAKE
# apt-get: -s prints the plan in $work/plan; install logs its arguments.
cat > "$work/bin/apt-get" <<'FAKE'
#!/usr/bin/env bash
echo "apt-get $*" >> "$FAKE_LOG"
[[ $1 == -s ]] && cat "$FAKE_DIR/plan"
exit 0
FAKE
printf '#!/usr/bin/env bash\necho 0\n' > "$work/bin/id"  # root
chmod +x "$work/bin/"*
export FAKE_DIR=$work FAKE_LOG=$work/log PATH=$work/bin:$PATH
failures=0
check() {  # check WHAT CONDITION...
  local what=$1
  shift
  if "$@"; then echo "PASS $what"; else echo "FAIL $what"; failures=$((failures + 1)); fi
}
run() {  # run ARGS...: deps.sh with a fresh log; its output in $work/out, status in $status
  : > "$work/log"
  bash "$deps" "$@" > "$work/out" 2>&1
  status=$?
}

main=(build-essential cmake pkg-config libopenblas-openmp-dev libcereal-dev libcli11-dev libpcre2-dev)
tests=(catch2 libbenchmark-dev libopenmpi-dev openmpi-bin clang-16 libclang-rt-16-dev chromium)

# 1. Everything installed: nothing is planned or installed.
printf '%s\n' "${main[@]}" "${tests[@]}" > "$work/installed"
run --tests
check "all installed: exit 0, apt-get never called" test $status -eq 0 -a -z "$(grep apt-get "$work/log")"

# 2. The main job asks for its seven packages only, the tests for seven more.
: > "$work/installed"
: > "$work/plan"
run
asked=$(sed -n 's/^dpkg-query //p' "$work/log" | tr '\n' ' ')
check "the main job asks for ${main[*]} only (asked: $asked)" test "$asked" = "${main[*]} "
run --tests
asked=$(sed -n 's/^dpkg-query //p' "$work/log" | tr '\n' ' ')
check "the tests add ${tests[*]}" test "$asked" = "${main[*]} ${tests[*]} "
TAPEGRAD_NO_FUZZ=1 TAPEGRAD_NO_CHROMIUM=1 run --tests
asked=$(sed -n 's/^dpkg-query //p' "$work/log" | tr '\n' ' ')
check "TAPEGRAD_NO_FUZZ and TAPEGRAD_NO_CHROMIUM leave clang and chromium out" \
  test "$asked" = "${main[*]} catch2 libbenchmark-dev libopenmpi-dev openmpi-bin "

# 3. A plan that installs only: apt-get install --no-remove of the missing packages.
printf 'Inst cmake (3.25.1-1 Debian:12)\nInst cmake-data (3.25.1-1 Debian:12)\nConf cmake\n' > "$work/plan"
printf '%s\n' "${main[@]}" | grep -vx cmake > "$work/installed"
run
check "a plan without removals installs with --no-remove: exit $status" \
  grep -qx "apt-get install -y --no-install-recommends --no-remove cmake" "$work/log"
check "it says what it installs" grep -q "installing 2 package(s) for cmake: cmake cmake-data" "$work/out"

# 4. A plan that removes: stop before installing, name the packages, say what to do.
printf '%s\n' "${main[@]}" catch2 libbenchmark-dev libopenmpi-dev openmpi-bin chromium > "$work/installed"
printf 'Remv libomp-dev [1:14.0-55.7~deb12u1]\nRemv libomp5-14 [1:14.0.6-12]\nInst libomp-16-dev\nInst clang-16\n' > "$work/plan"
run --tests
check "a plan with removals exits 1 (got $status)" test $status -eq 1
check "and installs nothing" test -z "$(grep 'apt-get install' "$work/log")"
check "it names what would be removed" grep -q "would remove 2 package(s) you have: libomp-dev libomp5-14" "$work/out"
check "and what to do instead" grep -q "TAPEGRAD_NO_FUZZ=1 bash scripts/test.sh" "$work/out"

if [[ $failures -eq 0 ]]; then echo "deps_test: passed"; else echo "deps_test: $failures check(s) failed"; cat "$work/out"; exit 1; fi
