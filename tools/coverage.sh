#!/bin/sh
# tools/coverage.sh REQUIRED DIR... - reads the coverage counts that the
# COV=1 builds in DIR... left (gcovr), prints per source file of src/
#   coverage.<file>.lines = N      (% of lines executed)
#   coverage.<file>.branches = N   (% of branches taken)
# and the totals (coverage.total.*), writes build-cov/html/index.html, and
# fails when a total is below the figures of REQUIRED ("lines N" and
# "branches N" lines: the ratchet CI holds the project to).
set -eu
required=$1
shift
mkdir -p build-cov/html
# Branches that only exception or unreachable edges make are not counted
# (none in C, but gcc emits some for calls it cannot see through).
gcovr --root . --filter 'src/' --exclude-unreachable-branches \
  --json-summary build-cov/coverage.json \
  --html-details build-cov/html/index.html "$@" >/dev/null
python3 - build-cov/coverage.json "$required" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
for f in sorted(summary["files"], key=lambda f: f["filename"]):
    name = f["filename"]
    print("coverage.%s.lines = %.1f" % (name, f["line_percent"]))
    print("coverage.%s.branches = %.1f" % (name, f["branch_percent"]))
total = {"lines": summary["line_percent"], "branches": summary["branch_percent"]}
print("coverage.total.lines = %.1f" % total["lines"])
print("coverage.total.branches = %.1f" % total["branches"])
low = []
for line in open(sys.argv[2]):
    words = line.split("#")[0].split()
    if len(words) == 2 and words[0] in total and total[words[0]] < float(words[1]):
        low.append("%s %.1f%% < %s%% required" % (words[0], total[words[0]], words[1]))
print("coverage: HTML report in build-cov/html/index.html")
if low:
    print("coverage: below %s: %s" % (sys.argv[2], "; ".join(low)))
    sys.exit(1)
PY
