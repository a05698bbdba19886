#!/usr/bin/env bash
# depth_study_same_records.sh A B: the depth-study outputs in folders A and B hold the same
# records, number for number (only the columns of seconds may differ). Prints the first
# difference and exits 1 otherwise.
set -euo pipefail
a=$1 b=$2
cmp "$a/profile.csv" "$b/profile.csv"
cmp "$a/skip.csv" "$b/skip.csv"
# runs.csv: every column but the 15th (seconds); translate.csv: every column before its seconds.
diff <(cut -d, -f1-14,16- "$a/runs.csv") <(cut -d, -f1-14,16- "$b/runs.csv")
diff <(cut -d, -f1-7 "$a/translate.csv") <(cut -d, -f1-7 "$b/translate.csv")
