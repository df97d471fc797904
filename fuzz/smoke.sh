#!/bin/sh
# fuzz/smoke.sh BUILD SECONDS JOBS TARGET...: runs each libFuzzer target
# SECONDS over BUILD/corpus/TARGET, JOBS at a time (each target is one
# process on one core, so 2 cores halve the wall time), and prints each
# log's end (the whole log of a target that failed).  Exits 1 if any
# target found something.
set -u
build=$1 secs=$2 jobs=$3
shift 3
fail=0
while [ $# -gt 0 ]; do
  batch="" pids=""
  n=0
  while [ $# -gt 0 ] && [ $n -lt "$jobs" ]; do
    t=$1
    shift
    n=$((n + 1))
    mkdir -p "$build/findings/$t"
    ASAN_OPTIONS="allocator_may_return_null=1 ${ASAN_OPTIONS:-}" \
      "$build/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$build/findings/$t/" \
      "$build/corpus/$t" > "$build/$t.smoke.log" 2>&1 &
    batch="$batch $t"
    pids="$pids $!"
  done
  i=0
  for p in $pids; do
    i=$((i + 1))
    t=$(echo $batch | cut -d' ' -f$i)
    echo "== $build/$t ($secs s)"
    if wait "$p"; then
      tail -n 12 "$build/$t.smoke.log"
    else
      cat "$build/$t.smoke.log"
      echo "fuzz-smoke: $t found something (input in $build/findings/$t/)"
      fail=1
    fi
  done
done
exit $fail
