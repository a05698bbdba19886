#!/usr/bin/env bash
# test.sh — installs what is missing, then builds and runs the whole test suite twice:
#   1. Release build in build/ (benchmarks are built, not run), warnings as errors;
#   2. AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/, where any
#      sanitizer report fails the test that triggered it;
#   3. the libFuzzer targets of fuzz/ (file loaders), FUZZ_SECONDS (default 20) each.
# Exits non-zero if any stage failed; each stage runs even if the other failed.
#   bash scripts/test.sh          both stages
#   bash scripts/test.sh --fast   the Release stage only
# TAPEGRAD_NO_FUZZ=1 leaves out the fuzz stage and clang; TAPEGRAD_NO_CHROMIUM=1 chromium (the
# report-rendering test is then skipped).
# TAPEGRAD_BUILD_DIR renames build/ (the sanitizer build goes to $TAPEGRAD_BUILD_DIR-asan).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# Short processes: 2 MiB pages would cost more at start than they save (scripts/env.sh).
export TAPEGRAD_HUGE_PAGES=${TAPEGRAD_HUGE_PAGES:-0}
source scripts/env.sh

fast=0
for arg in "$@"; do
  case $arg in
    --fast) fast=1 ;;
    -h | --help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "test.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

build=${TAPEGRAD_BUILD_DIR:-build}
jobs=$(nproc)
bash scripts/deps.sh --tests

# stage NAME DIR CMAKE_ARGS...: configure, build and ctest in DIR; prints the time taken.
stage() {
  local name=$1 dir=$2 start=$SECONDS
  shift 2
  echo "=== $name: configure and build in $dir"
  cmake -S . -B "$dir" "$@" &&
    cmake --build "$dir" -j "$jobs" &&
    echo "=== $name: test" &&
    ctest --test-dir "$dir" --output-on-failure -j2
  local status=$?
  echo "=== $name: $([[ $status -eq 0 ]] && echo passed || echo FAILED) in $((SECONDS - start)) s"
  return "$status"
}

failed=()
# Tests, benchmarks and MPI named explicitly: train.sh may have configured the same folder
# without them (the main job needs none of them).
stage release "$build" -DCMAKE_BUILD_TYPE=Release -DTAPEGRAD_WERROR=ON \
  -DTAPEGRAD_BUILD_TESTS=ON -DTAPEGRAD_BUILD_BENCH=ON -DTAPEGRAD_WITH_MPI=ON || failed+=(release)

if [[ $fast -eq 0 ]]; then
  # Stop at the first error, leaks included, and say where.
  export ASAN_OPTIONS=detect_leaks=1:halt_on_error=1:abort_on_error=0:strict_init_order=1
  export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
  # -g1: line tables only, which is all a sanitizer's report needs for its stack traces; with
  # full -g (types and variables) library files compiled 15-70% longer (a checkpoint
  # loader: 14.1 -> 8.2 s), test files up to 40%.
  stage sanitizers "$build-asan" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-g1 -DTAPEGRAD_SANITIZE=ON \
    -DTAPEGRAD_WERROR=ON -DTAPEGRAD_BUILD_TESTS=ON -DTAPEGRAD_BUILD_BENCH=OFF -DTAPEGRAD_WITH_MPI=ON || failed+=(sanitizers)
  unset ASAN_OPTIONS UBSAN_OPTIONS
  start=$SECONDS
  if [[ ${TAPEGRAD_NO_FUZZ:-0} == 1 ]]; then
    echo "=== fuzz: left out (TAPEGRAD_NO_FUZZ=1)"
  else
    echo "=== fuzz: the loaders under libFuzzer, bounded time"
    if FUZZ_SECONDS=${FUZZ_SECONDS:-20} bash scripts/fuzz.sh; then
      echo "=== fuzz: passed in $((SECONDS - start)) s"
    else
      echo "=== fuzz: FAILED in $((SECONDS - start)) s"
      failed+=(fuzz)
    fi
  fi
fi

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "test.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "test.sh: all stages passed"
