#!/usr/bin/env python3
"""check_depth_study_report.py DIR [--all-untrained] — the depth study's report as a reader opens it.

DIR holds a depth_study run's report.md, report.html and SVG charts. Checks that
  (a) every verdict of the table at the top links to its claim's section: in report.html to a
      heading's id, in report.md to GitHub's anchor of a heading's text (computed here as
      github-slugger does, independently of study::heading_id);
  (b) every chart has a caption under it, in both reports;
  (c) the deepest-trainable-depth chart draws every placement at every learning rate, on a
      depth axis with a "none" row; with --all-untrained (a run too short for anything to
      train) every marker sits on that row.
Prints one line per failure and exits 1, or prints a summary and exits 0.
"""
import argparse
import os
import re
import sys
import unicodedata


def github_anchor(text, taken):
    """GitHub's anchor of a heading (github-slugger): lower case, letters, marks, digits, '_', '-'
    kept, each space a '-', all else dropped; a repeat gets -1, -2, ..."""
    text = re.sub(r"[`*]", "", text).lower()  # the inline Markdown's marks, as GitHub renders them away
    slug = "".join("-" if c == " " else c for c in text
                   if c in " -_" or unicodedata.category(c)[0] in "LMN")
    anchor, n = slug, 0
    while anchor in taken:
        n += 1
        anchor = f"{slug}-{n}"
    taken.add(anchor)
    return anchor


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("dir")
    p.add_argument("--all-untrained", action="store_true")
    args = p.parse_args()
    md = open(os.path.join(args.dir, "report.md"), encoding="utf-8").read()
    html = open(os.path.join(args.dir, "report.html"), encoding="utf-8").read()
    problems = []

    # (a) the verdicts' links
    taken = set()
    anchors = [github_anchor(line.lstrip("#").strip(), taken) for line in md.splitlines() if re.match(r"#{1,6} ", line)]
    glance = md.split("## Verdicts at a glance", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in glance.splitlines() if re.match(r"\| \d+ \|", line)]
    if not rows:
        problems.append("report.md: no verdict rows in the table at the top")
    for row in rows:
        claim, verdict = [cell.strip() for cell in row.split("|")[1:3]]
        link = re.fullmatch(r"\[(supported|not supported|depends|not measured)\]\(#([^)]+)\)", verdict)
        if not link:
            problems.append(f"report.md: claim {claim}'s verdict is not a link: {verdict}")
        elif link[2] not in anchors or not link[2].startswith(f"claim-{claim}-"):
            problems.append(f"report.md: claim {claim}'s verdict links to #{link[2]}, not to its section's anchor")
    ids = set(re.findall(r' id="([^"]+)"', html))
    hrefs = re.findall(r'href="#([^"]+)"', html)
    for href in hrefs:
        if href not in ids:
            problems.append(f"report.html: a link to #{href}, which no element has as its id")
    html_verdict_links = re.findall(r'<td><a href="#(claim-\d+-[^"]+)">(?:supported|not supported|depends|not measured)</a></td>', html)
    if len(html_verdict_links) != len(rows):
        problems.append(f"report.html: {len(html_verdict_links)} verdict links for {len(rows)} verdicts")
    if set(html_verdict_links) - set(anchors):
        problems.append("report.html: verdict links that are not report.md's anchors: " + ", ".join(set(html_verdict_links) - set(anchors)))

    # (b) the captions
    images = re.findall(r"^!\[[^\n]*\]\(([^)]+\.svg)\)\n\n([*_])(.+)\2$", md, re.M)
    all_images = re.findall(r"^!\[[^\n]*\]\([^)]+\.svg\)$", md, re.M)
    if len(images) != len(all_images) or not all_images:
        problems.append(f"report.md: {len(images)} of {len(all_images)} charts have a caption under them")
    figures = re.findall(r'<figure class="chart">.*?</figure>', html, re.S)
    captioned = [f for f in figures if re.search(r"</svg>\n<figcaption>[^<\s][^\n]*</figcaption>\n</figure>$", f)]
    if len(captioned) != len(figures) or not figures:
        problems.append(f"report.html: {len(captioned)} of {len(figures)} charts have a caption under them")

    # (c) the deepest-trainable-depth chart
    svg = open(os.path.join(args.dir, "deepest_trainable_depth.svg"), encoding="utf-8").read()
    none = re.search(r'y="([-0-9.e]+)" text-anchor="end">none<', svg)
    groups = re.findall(r'<g class="series" data-name="([^"]*)">(.*?)</g>', svg, re.S)
    counts = {name: re.findall(r'class="marker [a-z-]+" transform="translate\(([-0-9.e]+),([-0-9.e]+)\)"', body)
              for name, body in groups}
    if not none:
        problems.append("deepest_trainable_depth.svg: no 'none' row on the depth axis")
    if not groups or len({len(m) for m in counts.values()}) != 1 or not all(counts.values()):
        problems.append("deepest_trainable_depth.svg: not every placement drawn at every lr: " +
                        ", ".join(f"{n} {len(m)}" for n, m in counts.items()))
    if args.all_untrained and none:
        row = float(none[1]) - 4  # a tick label's baseline is 4 px below its line
        off = [n for n, m in counts.items() if any(abs(float(y) - row) > 0.01 for _, y in m)]
        if off:
            problems.append("deepest_trainable_depth.svg: untrained placements not on the 'none' row: " + ", ".join(off))

    for problem in problems:
        print("problem:", problem)
    if problems:
        return 1
    print(f"depth_study report: {len(rows)} verdicts linked to their sections, {len(figures)} charts captioned, "
          f"{len(groups)} placements drawn{' on the none row' if args.all_untrained else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
