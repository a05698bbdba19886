#!/usr/bin/env bash
# trace_page.sh HTML K ID TEXT [K ID TEXT ...] — steps through a traced backward pass's page
# (examples/common/trace_page.hpp) in headless Chromium, as a reader does: for each K it opens
# the page with #next=K (the page presses its Next button K times) and checks, in the DOM dumped
# after its script ran, that
#   (a) the body says step K and highlights the element ID (data-step, data-current), which is
#       the one element of class "current";
#   (b) the text under the picture starts with TEXT (the step's line of BackwardTrace::text());
#   (c) nothing went to the console (no script error) and nothing is fetched (no src=, <link>,
#       @import or http address: the page works offline).
# Exits 0 when all hold, 1 with the reason when one does not, 77 (ctest's SKIP_RETURN_CODE) when
# Chromium is not installed. CHROMIUM names another browser binary (chromium by default).
set -uo pipefail

fail() {
  echo "trace_page: FAILED: $*" >&2
  exit 1
}
if [[ $# -lt 4 || $((($# - 1) % 3)) -ne 0 ]]; then
  echo "usage: trace_page.sh HTML K ID TEXT [K ID TEXT ...]" >&2
  exit 2
fi
html=$1
shift
browser=${CHROMIUM:-chromium}
if ! command -v "$browser" > /dev/null; then
  echo "trace_page: skipped: $browser is not installed (apt-get install chromium, or bash scripts/deps.sh --tests)"
  exit 77
fi
[[ -f $html ]] || fail "no file $html (autodiff_tour --trace writes it)"
if grep -Eq 'src=|<link|@import|https?://[^w]' "$html"; then  # the SVG namespace (http://www.w3...) is a name, not a fetch
  fail "$html fetches something: $(grep -Eo 'src=[^ ]*|<link[^>]*|@import[^;]*|https?://[^w][^" ]*' "$html" | head -1)"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
while [[ $# -gt 0 ]]; do
  k=$1 id=$2 text=$3
  shift 3
  timeout -k 10 120 "$browser" --headless --no-sandbox --disable-gpu --user-data-dir="$work/profile" \
    --no-first-run --disable-background-networking --disable-extensions --enable-logging=stderr --v=0 \
    --dump-dom "file://$(realpath "$html")#next=$k" > "$work/dom.html" 2> "$work/stderr.txt" ||
    fail "$browser exited with status $? at step $k"
  if grep -q "CONSOLE" "$work/stderr.txt"; then
    fail "the page wrote to the console at step $k: $(grep CONSOLE "$work/stderr.txt" | head -3)"
  fi
  grep -q "<body[^>]* data-step=\"$k\"" "$work/dom.html" || fail "step $k: the body does not say data-step=\"$k\""
  current=$(grep -o '<body[^>]* data-current="[^"]*"' "$work/dom.html" | sed 's/.*data-current="\([^"]*\)"/\1/')
  [[ $current == "$id" ]] || fail "step $k: the page highlights '$current', not '$id'"
  marked=$(grep -o 'class="box [a-z]* current" id="[^"]*"' "$work/dom.html")
  [[ $(grep -c . <<< "$marked") -eq 1 && $marked == *"id=\"$id\""* ]] ||
    fail "step $k: the elements of class current are: ${marked:-none} (expected $id alone)"
  what=$(grep -o '<div id="what">[^<]*' "$work/dom.html" | sed 's/<div id="what">//; s/&gt;/>/g; s/&lt;/</g; s/&amp;/\&/g')
  [[ $what == "$text"* ]] || fail "step $k: the text under the picture is '$what', not '$text...'"
  echo "trace_page: step $k highlights $id: $what"
done
echo "trace_page: all steps as expected"
