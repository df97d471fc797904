#!/bin/sh
# tools/run_tests.sh LABEL [-w WRAPPER] [-t SECONDS] CMD... [-- CMD...] -
# the one pass/fail runner of the Makefile's test targets.  Runs every CMD
# (a shell command line) even when one fails, each under WRAPPER (say
# "valgrind ..." or "wine"; not the commands after --) and, with -t,
# killed after SECONDS; prints
# "== CMD" before each and "LABEL: N passed, M failed" at the end, and
# exits 1 if any failed.
set -u
label=$1
shift
wrap="" limit=""
while [ $# -gt 0 ]; do
  case $1 in
    -w) wrap=$2; shift 2 ;;
    -t) limit=$2; shift 2 ;;
    *) break ;;
  esac
done
passed=0 nfailed=0 failed=""
for cmd in "$@"; do
  if [ "$cmd" = -- ]; then
    wrap=""
    continue
  fi
  echo "== $cmd${wrap:+ ($wrap)}"
  t0=$(date +%s)
  sh -c "${limit:+timeout $limit }$wrap $cmd"
  rc=$?
  [ -n "$wrap" ] && echo "== $cmd: $(($(date +%s) - t0)) s"
  if [ $rc -eq 0 ]; then
    passed=$((passed + 1))
  else
    nfailed=$((nfailed + 1))
    failed="$failed
  $cmd"
  fi
done
[ -n "$failed" ] && echo "failed:$failed"
echo "$label: $passed passed, $nfailed failed"
[ -z "$failed" ]
