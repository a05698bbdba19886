#!/usr/bin/env bash
# render_html.sh HTML SCREENSHOT_PNG — opens a page of study::Document::html() (a study's
# report.html, train_lm's live report) in headless Chromium and checks what a reader would see:
#   (a) every chart is drawn: the page's render check (the small script at its end) writes the
#       number of charts and of those drawn at a size into <body data-charts data-charts-drawn>;
#       the DOM dumped after load must hold both, equal and above 0;
#   (b) nothing on the console: no exception, no syntax error, no console.error (the page writes
#       nothing there, so any console message at all fails the test);
#   (c) nothing fetched: no src=, <link>, url( or @import in the DOM (the page is self-contained);
#   (d) a screenshot of 1200x3000 pixels, larger than a blank page's, is written to SCREENSHOT_PNG.
# Exits 0 when all hold, 1 with the reason when one does not, 77 (ctest's SKIP_RETURN_CODE) when
# Chromium is not installed. CHROMIUM names another browser binary (chromium by default).
set -uo pipefail

fail() {
  echo "render_html: FAILED: $*" >&2
  exit 1
}

if [[ $# -ne 2 ]]; then
  echo "usage: render_html.sh HTML SCREENSHOT_PNG" >&2
  exit 2
fi
html=$1 png=$2
browser=${CHROMIUM:-chromium}
if ! command -v "$browser" > /dev/null; then
  echo "render_html: skipped: $browser is not installed (apt-get install chromium, or bash scripts/deps.sh --tests)"
  exit 77
fi
[[ -f $html ]] || fail "no file $html (a study writes report.html with study::Document::html())"
# A report.html left by an earlier run would pass for one this run did not write: it must be
# about as new as the report.md beside it, when there is one (a study writes both at its end).
md=$(dirname "$html")/report.md
if [[ -f $md ]] && (($(stat -c %Y "$md") - $(stat -c %Y "$html") > 5)); then
  fail "$html is older than $md: left by an earlier run (did this one write report.html?)"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
png=$(realpath -m "$png")  # Chromium writes a relative path under its own working directory
rm -f "$png"

# One run does all: --dump-dom prints the DOM once the page has loaded (its scripts run),
# --screenshot draws the window. --enable-logging=stderr --v=0 puts the page's console messages
# on stderr, as lines "...:INFO:CONSOLE:12] "Uncaught ReferenceError: ...", source: file://...".
# Chromium logs every console level as INFO, hence (b)'s rule: any console line fails. A fresh
# profile in $work and no background networking: nothing from an earlier run, nothing fetched.
start=$SECONDS
timeout -k 10 120 "$browser" --headless --no-sandbox --disable-gpu --user-data-dir="$work/profile" \
  --no-first-run --disable-background-networking --disable-extensions --hide-scrollbars \
  --enable-logging=stderr --v=0 --window-size=1200,3000 --screenshot="$png" --dump-dom \
  "file://$(realpath "$html")" > "$work/dom.html" 2> "$work/stderr.txt"
status=$?
seconds=$((SECONDS - start))
if [[ $status -ne 0 ]]; then
  tail -n 20 "$work/stderr.txt" >&2
  fail "$browser exited with status $status after $seconds s$([[ $status -ge 124 ]] && echo ' (timed out)')"
fi

# (b) the console
if grep -q ':CONSOLE[:(]' "$work/stderr.txt"; then
  grep ':CONSOLE[:(]' "$work/stderr.txt" | sed 's/^[^]]*] /  /' >&2
  fail "the page wrote to the console (above) in $html"
fi

# (a) the charts
body=$(grep -o '<body[^>]*>' "$work/dom.html" | head -n 1)
charts=$(sed -n 's/.* data-charts="\([0-9]*\)".*/\1/p' <<< "$body")
drawn=$(sed -n 's/.* data-charts-drawn="\([0-9]*\)".*/\1/p' <<< "$body")
if [[ -z $charts || -z $drawn ]]; then
  fail "the page's render check did not run (no data-charts on <body>: not a study::Document page, or its script failed)"
fi
[[ $charts -gt 0 ]] || fail "no chart in $html"
[[ $drawn -eq $charts ]] || fail "$drawn of $charts charts drawn in $html"

# (c) nothing fetched
if grep -Eoi '\ssrc=[^ >]*|<link[^>]*>|url\([^)]*\)|@import[^;]*' "$work/dom.html" > "$work/fetches.txt"; then
  sed 's/^/  /' "$work/fetches.txt" >&2
  fail "the page loads files (above); it must be self-contained"
fi

# (d) the screenshot: a PNG (its 8-byte signature), 1200x3000 (the IHDR chunk's width and height,
# big-endian at bytes 16 and 20), and more than a blank page: a blank 1200x3000 screenshot is
# about 17 kB, one with a line of text 19 kB, a report with tables and charts 100 kB and more.
[[ -s $png ]] || fail "no screenshot written to $png"
signature=$(od -A n -t x1 -N 8 "$png" | tr -d ' \n')
[[ $signature == 89504e470d0a1a0a ]] || fail "$png is not a PNG file"
read -r width height < <(od -A n -t u1 -j 16 -N 8 "$png" |
  awk '{ print $1 * 16777216 + $2 * 65536 + $3 * 256 + $4, $5 * 16777216 + $6 * 65536 + $7 * 256 + $8 }')
[[ $width -eq 1200 && $height -eq 3000 ]] || fail "the screenshot is ${width}x${height}, not 1200x3000"
bytes=$(stat -c %s "$png")
[[ $bytes -gt 40000 ]] || fail "the screenshot is $bytes bytes, as small as a blank page's (under 40000)"

echo "render_html: passed: $drawn of $charts charts drawn, no console message, nothing fetched," \
     "screenshot ${width}x${height} of $bytes bytes in $png ($seconds s)"
