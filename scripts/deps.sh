#!/usr/bin/env bash
# deps.sh — installs the Debian 12 packages tapegrad needs, when some are missing, and no more.
#   bash scripts/deps.sh           what the main job builds with (scripts/train.sh): a compiler,
#                                  CMake, OpenBLAS, cereal, CLI11, PCRE2
#   bash scripts/deps.sh --tests   and what the tests add (scripts/test.sh): Catch2, Google
#                                  Benchmark, Open MPI, clang-16 with libFuzzer, chromium
# TAPEGRAD_NO_FUZZ=1 leaves clang out (no fuzz stage), TAPEGRAD_NO_CHROMIUM=1 chromium.
# As root it runs apt-get; otherwise it prints the command to run and exits 1. It never removes
# a package: it asks apt for its plan first (apt-get -s) and, when the plan removes anything,
# stops before installing, names what would go, and says what to do instead.
set -euo pipefail
shopt -s extglob

# libpcre2-dev: the Unicode classes (\p{L}, \p{N}) of GPT-2's pre-tokenization pattern
# (data/gpt2_tokenizer.cpp).
packages=(build-essential cmake pkg-config libopenblas-openmp-dev libcereal-dev libcli11-dev
          libpcre2-dev)
for arg in "$@"; do
  case $arg in
    --tests)
      packages+=(catch2 libbenchmark-dev                      # the test suite, the benchmarks
                 libopenmpi-dev openmpi-bin                   # tapegrad::distributed and its tests
                 clang-16 libclang-rt-16-dev                  # the libFuzzer stage (OpenMP: GCC's libgomp)
                 chromium) ;;                                 # tests/examples/render_html.sh
    -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "deps.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

# What the user chose to leave out of the tests (scripts/test.sh skips those parts too).
[[ ${TAPEGRAD_NO_FUZZ:-0} == 1 ]] && packages=("${packages[@]/@(clang-16|libclang-rt-16-dev)/}")
[[ ${TAPEGRAD_NO_CHROMIUM:-0} == 1 ]] && packages=("${packages[@]/chromium/}")

missing=()
for package in "${packages[@]}"; do
  [[ -n $package ]] || continue
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$package")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

install=(apt-get install -y --no-install-recommends --no-remove)
if [[ $(id -u) -ne 0 ]]; then
  echo "deps.sh: missing packages: ${missing[*]}" >&2
  echo "Install them as root with:" >&2
  echo "  apt-get update && ${install[*]} ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# apt's plan, simulated: "Inst pkg ..." for each package it would install, "Remv pkg ..." for
# each it would remove.
plan=$(apt-get -s install --no-install-recommends "${missing[@]}" 2>&1) || {
  printf '%s\n' "$plan" >&2
  echo "deps.sh: apt-get cannot plan the install of ${missing[*]} (above); nothing was changed." >&2
  exit 1
}
mapfile -t removals < <(awk '$1 == "Remv" { print $2 }' <<<"$plan")
if [[ ${#removals[@]} -gt 0 ]]; then
  echo "deps.sh: installing ${missing[*]} would remove ${#removals[@]} package(s) you have: ${removals[*]}." >&2
  echo "         Nothing was installed or removed. What to do instead:" >&2
  for package in "${missing[@]}"; do
    case $package in
      clang-16 | libclang-rt-16-dev)
        echo "         - $package is for the fuzz stage only (its fuzzers use GCC's libgomp, not clang's libomp):" >&2
        echo "           run 'TAPEGRAD_NO_FUZZ=1 bash scripts/test.sh' to leave it out, or install a clang" >&2
        echo "           16+ with libFuzzer that fits your system and point FUZZ_CXX at it." >&2 ;;
      chromium)
        echo "         - chromium only renders a report in one test (it is skipped without it):" >&2
        echo "           run 'TAPEGRAD_NO_CHROMIUM=1 bash scripts/test.sh'." >&2 ;;
    esac
  done
  echo "         - or install the packages yourself, choosing what to keep: apt-get install ${missing[*]}" >&2
  exit 1
fi
mapfile -t installs < <(awk '$1 == "Inst" { print $2 }' <<<"$plan")
echo "deps.sh: installing ${#installs[@]} package(s) for ${missing[*]}: ${installs[*]}"
"${install[@]}" "${missing[@]}"
