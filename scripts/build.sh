#!/usr/bin/env bash
# build.sh — installs what building needs (scripts/deps.sh, without the tests' packages) and
# builds the named targets in Release, without the tests and benchmarks:
#   bash scripts/build.sh train_lm sample
# Build folder: build/ (TAPEGRAD_BUILD_DIR overrides it). train.sh and depth_study.sh use it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
source scripts/env.sh

build=${TAPEGRAD_BUILD_DIR:-build}
bash scripts/deps.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DTAPEGRAD_BUILD_TESTS=OFF -DTAPEGRAD_BUILD_BENCH=OFF
cmake --build "$build" -j "$(nproc)" --target "$@"
