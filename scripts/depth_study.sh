#!/usr/bin/env bash
# depth_study.sh — installs what is missing, builds tapegrad (Release) and runs the depth study
# (examples/studies/depth_study): ten claims about residual connections and normalization in
# deep transformers and a training diagnostic, each tested; about twenty minutes on 2 cores.
# It writes depth_study_out/report.html (open it in a browser) and report.md; run it again
# after a stop and it resumes from the runs recorded in depth_study_out/records.
# Extra arguments go to depth_study:  bash scripts/depth_study.sh --full
# The PyTorch comparison needs Debian's python3-torch (apt-get install python3-torch); without
# it the report says it was not run.
# Build folder: build/ (TAPEGRAD_BUILD_DIR overrides it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/build.sh depth_study
source scripts/env.sh
"${TAPEGRAD_BUILD_DIR:-build}/examples/depth_study" "$@"
