#!/bin/sh
# tools/run_tests.sh LABEL [-j JOBS] [-w WRAPPER] [-t SECONDS] [-r] CMD... [-- CMD...]
# - the one pass/fail runner of the Makefile's test targets.  Runs every
# CMD (a shell command line) even when one fails, each under WRAPPER (say
# "valgrind ..." or "wine"; not the commands after --) and, with -t,
# killed after SECONDS; prints "== CMD", its output and "== CMD: N s" for each, in the
# order given, and "LABEL: N passed, M failed" at the end, and exits 1 if
# any failed.
#
# -r runs a command once more when it fails without printing anything: a
# program under wine now and then exits 1 before its main() starts (no
# output at all; CI saw it once in the Windows tests), which
# says nothing about the program; a failing test prints what failed.
#
# -j JOBS runs up to JOBS commands at once (default 1): each worker claims
# the next command not yet taken (mkdir is atomic, so each command runs
# once), writes its output to a file of its own, and the outputs are
# printed in order as they complete.  The tests are independent processes
# with their own temporary files, so running them side by side is safe.
set -u
label=$1
shift
wrap="" limit="" jobs=1 retry=0
while [ $# -gt 0 ]; do
  case $1 in
    -j) jobs=$2; shift 2 ;;
    -w) wrap=$2; shift 2 ;;
    -t) limit=$2; shift 2 ;;
    -r) retry=1; shift ;;
    *) break ;;
  esac
done
case $jobs in '' | *[!0-9]* | 0) jobs=1 ;; esac

tmp=$(mktemp -d "${TMPDIR:-/tmp}/xrt_tests.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# Numbers the commands (N.cmd holds command N, N.wrap its wrapper).
n=0
for cmd in "$@"; do
  if [ "$cmd" = -- ]; then
    wrap=""
    continue
  fi
  n=$((n + 1))
  printf '%s' "$cmd" >"$tmp/$n.cmd"
  printf '%s' "$wrap" >"$tmp/$n.wrap"
done

# run_one I: runs command I, its output to I.out and its status to I.rc
# (written last: its presence says the command is done).
run_one() {
  c=$(cat "$tmp/$1.cmd")
  w=$(cat "$tmp/$1.wrap")
  {
    echo "== $c${w:+ ($w)}"
    t0=$(date +%s)
    tries=$((retry + 1))
    while :; do
      sh -c "${limit:+timeout $limit }$w $c" </dev/null >"$tmp/$1.run" 2>&1
      rc=$?
      tries=$((tries - 1))
      [ $rc -ne 0 ] && [ $tries -gt 0 ] && [ ! -s "$tmp/$1.run" ] || break
      echo "== exit $rc before printing anything: once more"
    done
    cat "$tmp/$1.run"
    echo "== $c: $(($(date +%s) - t0)) s"
  } >"$tmp/$1.out" 2>&1
  echo $rc >"$tmp/$1.rc.tmp"
  mv "$tmp/$1.rc.tmp" "$tmp/$1.rc"
}

# worker: runs the commands it claims until none is left.
worker() {
  i=1
  while [ $i -le $n ]; do
    if mkdir "$tmp/$i.claim" 2>/dev/null; then run_one $i; fi
    i=$((i + 1))
  done
}

w=1
while [ $w -le $jobs ] && [ $w -le $n ]; do
  worker &
  w=$((w + 1))
done

passed=0 nfailed=0 failed=""
i=1
while [ $i -le $n ]; do
  while [ ! -f "$tmp/$i.rc" ]; do sleep 0.2; done
  cat "$tmp/$i.out"
  if [ "$(cat "$tmp/$i.rc")" = 0 ]; then
    passed=$((passed + 1))
  else
    nfailed=$((nfailed + 1))
    failed="$failed $i"
  fi
  i=$((i + 1))
done
wait
# The failures again at the end, each with its error lines (cmocka's,
# sanitizers', compilers') and last lines: a log cut to its tail (CI's)
# still says what failed and why.
if [ -n "$failed" ]; then
  echo "failed:"
  for i in $failed; do
    echo "  $(cat "$tmp/$i.cmd") (exit $(cat "$tmp/$i.rc")):"
    grep -v '^== ' "$tmp/$i.out" |
      grep -E '^\[  ERROR|^\[   LINE|ERROR: |SUMMARY: |error:|FAIL' |
      head -n 12 | sed 's/^/    | /'
    echo "    ... its last lines:"
    tail -n 6 "$tmp/$i.out" | sed 's/^/    | /'
  done
fi
echo "$label: $passed passed, $nfailed failed"
[ -z "$failed" ]
