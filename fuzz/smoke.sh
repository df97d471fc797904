#!/bin/sh
# fuzz/smoke.sh BUILD JOBS fixed SEED TARGET=RUNS...
# fuzz/smoke.sh BUILD JOBS random SECONDS TARGET...
#
# Runs libFuzzer targets (BUILD/TARGET), JOBS at a time (each is one
# process on one core, so 2 cores halve the wall time), prints a summary of
# each log (BUILD/TARGET.smoke.log; the whole log of a target that failed)
# and exits 1 if any target found something (input in
# BUILD/findings/TARGET/).
#
# fixed (make fuzz-smoke, what CI runs): the same work every time, so a
# finding can only come from the code under test, never from chance:
#  1. replays fuzz/regressions/TARGET-* (each input once);
#  2. fuzzes with -seed=SEED for RUNS executions past the seeds of
#     BUILD/seeds/TARGET (make_corpus.sh's, which are replayed first, as
#     libFuzzer loads them), writing what it adds to BUILD/smoke/TARGET
#     (emptied first; the seeds stay as they are).  A timeout is 30 s here
#     (10 s in random runs), so that a loaded machine cannot turn a slow
#     input into a failure.
# random (make fuzz-long, make fuzz-smoke FUZZ_RANDOM=1 or FUZZ_TIME=N):
#  SECONDS of fuzzing from a random seed over BUILD/corpus/TARGET, which
#  keeps what each run adds.
set -u
build=$1 jobs=$2 mode=$3 arg=$4
shift 4
root=$(cd "$(dirname "$0")/.." && pwd)

# run_one TARGET RUNS: the target's whole job (one background process).
run_one() {
  t=$1 runs=$2 bin="$build/$1"
  mkdir -p "$build/findings/$t"
  export ASAN_OPTIONS="allocator_may_return_null=1 ${ASAN_OPTIONS:-}"
  if [ "$mode" = random ]; then
    mkdir -p "$build/corpus/$t"
    "$bin" -max_total_time="$arg" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$build/findings/$t/" \
      "$build/corpus/$t"
    return
  fi
  regs=$(ls "$root/fuzz/regressions/$t"-* 2>/dev/null)
  if [ -n "$regs" ]; then
    echo "smoke: $t: replaying $(echo "$regs" | wc -l) regression input(s)"
    # shellcheck disable=SC2086 # one argument per file (no spaces in them)
    "$bin" -timeout=30 -rss_limit_mb=2048 \
      -artifact_prefix="$build/findings/$t/" $regs || return 1
  fi
  rm -rf "$build/smoke/$t"
  mkdir -p "$build/smoke/$t" "$build/seeds/$t"
  seeds=$(ls "$build/seeds/$t" | wc -l)
  echo "smoke: $t: $seeds seed(s), then $runs runs from seed $arg"
  # -runs counts the seeds' executions too
  "$bin" -seed="$arg" -runs=$((seeds + runs)) -timeout=30 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build/findings/$t/" \
    "$build/smoke/$t" "$build/seeds/$t"
}

# A pool of JOBS: the next target starts as soon as one ends.
fail=0 started=0 all=""
rm -f "$build"/*.smoke.rc
for spec in "$@"; do
  while [ $((started - $(ls "$build"/*.smoke.rc 2>/dev/null | wc -l))) -ge "$jobs" ]
  do sleep 1; done
  t=${spec%%=*} runs=${spec#*=}
  all="$all $t"
  rm -f "$build/$t.smoke.rc"
  started=$((started + 1))
  (t0=$(date +%s)
   run_one "$t" "$runs" > "$build/$t.smoke.log" 2>&1
   rc=$?
   echo "smoke: $t: $(($(date +%s) - t0)) s, exit $rc" >> "$build/$t.smoke.log"
   echo $rc > "$build/$t.smoke.rc.tmp"
   mv "$build/$t.smoke.rc.tmp" "$build/$t.smoke.rc") &
done
wait
for t in $all; do
  if [ "$mode" = random ]; then echo "== $build/$t ($arg s)"
  else echo "== $build/$t (seed $arg)"; fi
  if [ "$(cat "$build/$t.smoke.rc")" = 0 ]; then
    grep -E '^(smoke: |Done |stat::)' "$build/$t.smoke.log"
  else
    cat "$build/$t.smoke.log"
    echo "fuzz-smoke: $t found something (input in $build/findings/$t/)"
    fail=1
  fi
  rm -f "$build/$t.smoke.rc"
done
exit $fail
