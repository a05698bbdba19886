#!/usr/bin/env bash
# train.sh — installs what is missing, builds tapegrad (Release) and runs the main job:
# examples/train_lm, a small transformer LM trained on the licence texts of Debian
# (/usr/share/common-licenses), about five minutes on 2 cores.
# Extra arguments go to train_lm:  bash scripts/train.sh --placement post --steps 2000
# Build folder: build/ (TAPEGRAD_BUILD_DIR overrides it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/build.sh train_lm sample tapegrad-inspect
source scripts/env.sh
"${TAPEGRAD_BUILD_DIR:-build}/examples/train_lm" "$@"
