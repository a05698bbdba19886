#!/usr/bin/env bash
# deps.sh — installs the Debian 12 packages tapegrad needs, when some are missing.
# As root it runs apt-get; otherwise it prints the command to run and exits 1. It never
# removes a package (apt-get --no-remove): if an install would need to, it stops and says so.
#   bash scripts/deps.sh           what building and training need (scripts/train.sh)
#   bash scripts/deps.sh --tests   and what only the tests need (scripts/test.sh)
set -euo pipefail

packages=(build-essential cmake pkg-config libopenblas-openmp-dev catch2 libcereal-dev
          libcli11-dev libbenchmark-dev
          libopenmpi-dev openmpi-bin  # tapegrad::distributed, train_lm --ddp and their tests
          clang-16 libclang-rt-16-dev)  # the libFuzzer stage of test.sh (OpenMP: GCC's libgomp, see fuzz.sh)
for arg in "$@"; do
  case $arg in
    --tests) packages+=(chromium) ;;  # tests/examples/render_html.sh draws a study's report.html
    -h | --help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "deps.sh: unknown option '$arg' (try --help)" >&2; exit 2 ;;
  esac
done

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ $status == "install ok installed" ]] || missing+=("$package")
done
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

if [[ $(id -u) -ne 0 ]]; then
  echo "deps.sh: missing packages: ${missing[*]}" >&2
  echo "Install them as root with:" >&2
  echo "  apt-get update && apt-get install -y --no-install-recommends --no-remove ${missing[*]}" >&2
  exit 1
fi
echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update
if ! apt-get install -y --no-install-recommends --no-remove "${missing[@]}"; then
  echo "deps.sh: apt-get could not install ${missing[*]} without removing packages you have;" >&2
  echo "         nothing was removed. Install them yourself, or run the stages that need none of them." >&2
  exit 1
fi
