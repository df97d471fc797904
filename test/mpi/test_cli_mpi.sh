#!/bin/sh
# test_cli_mpi.sh - `xrt check --mpi` and `xrt run --mpi`: usage errors
# (also of an xrt built without MPI), exit statuses that agree across the
# processes when a check fails in one of them, and `xrt run --mpi` of a
# run_parallel program whose output must not depend on the process count.
# Prints one line per case; exits 1 if any case fails.
#
# Environment: XRT_BIN (an xrt built with XRT_MPI=1; default build-mpi/xrt),
# XRT_BIN_PLAIN (one built without; default build/xrt), MPIRUN (default:
# mpirun --allow-run-as-root --oversubscribe).
set -u

here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
bin=${XRT_BIN:-build-mpi/xrt}
plain=${XRT_BIN_PLAIN:-build/xrt}
mpirun_cmd=${MPIRUN:-mpirun --allow-run-as-root --oversubscribe}
for b in "$bin" "$plain"; do
  if [ ! -x "$b" ]; then
    echo "test_cli_mpi: $b not built" >&2
    exit 2
  fi
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/xrt_cli_mpi.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
failures=0
runner=""
command -v timeout >/dev/null 2>&1 && runner="timeout 120"

# verdict NAME OK: prints the case's line (with its output on failure).
verdict() {
  if [ "$2" -eq 1 ]; then
    echo "PASS $1"
  else
    echo "FAIL $1"
    touch "$tmp/err"
    sed 's/^/  | /' "$tmp/out" "$tmp/err"
    failures=$((failures + 1))
  fi
}

# has PATTERN...: whether $tmp/out or $tmp/err holds every pattern (fixed
# strings).
has() {
  touch "$tmp/err"
  for pat in "$@"; do
    cat "$tmp/out" "$tmp/err" | grep -qF -- "$pat" || {
      echo "  missing: $pat" >>"$tmp/out"
      return 1
    }
  done
  return 0
}

# mpi_each NP ARGS...: runs `xrt ARGS` in NP processes (ARGS may hold ':'
# for a different command line per process, as mpirun takes them); each
# process's exit status goes to $tmp/rc.RANK, stdout to $tmp/out, stderr
# to $tmp/err (where sanitizers add their own lines).
# Every command runs under sh, which exits 0, so that mpirun runs every
# process to its end.
mpi_each() {
  np=$1
  shift
  rm -f "$tmp"/rc.*
  set -- "$@" ":"
  cmd=""
  line=""
  for a in "$@"; do
    if [ "$a" = ":" ]; then
      cmd="$cmd${cmd:+ : }-np $np sh -c '\"\$0\" \"\$@\"; echo \$? >\"$tmp/rc.\${OMPI_COMM_WORLD_RANK:-\$PMI_RANK}\"' \"$bin\"$line"
      line=""
    else
      line="$line \"$a\""
    fi
  done
  eval "$runner $mpirun_cmd $cmd" >"$tmp/out" 2>"$tmp/err"
}

# all_exit WANT COUNT: whether COUNT processes wrote their status, all WANT.
all_exit() {
  n=0
  for f in "$tmp"/rc.*; do
    [ -f "$f" ] || return 1
    [ "$(cat "$f")" = "$1" ] || { echo "  $f: exit $(cat "$f"), want $1" >>"$tmp/out"; return 1; }
    n=$((n + 1))
  done
  [ "$n" -eq "$2" ] || { echo "  $n processes reported, want $2" >>"$tmp/out"; return 1; }
}

cat >"$tmp/pass.mlir" <<'EOF2'
func.func @main() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  check.expect_eq_const %0, dense<[1, 2]> : tensor<2xi32>
  func.return
}
EOF2
cat >"$tmp/fail.mlir" <<'EOF2'
func.func @main() {
  %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  check.expect_eq_const %0, dense<[1, 7]> : tensor<2xi32>
  func.return
}
EOF2

# --- usage errors ---
for cmd in check run; do
  "$plain" "$cmd" --mpi "$tmp/pass.mlir" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  ok=0
  [ $rc -eq 2 ] && has "--mpi: this xrt was built without MPI" && ok=1
  verdict "$cmd --mpi without MPI: exit 2 (got $rc)" $ok
done

mpi_each 2 check --mpi
ok=0
all_exit 2 2 && has "check: no file given" && ok=1
verdict "check --mpi without a file: every process exits 2" $ok

mpi_each 2 run --mpi --bogus "$tmp/pass.mlir"
ok=0
all_exit 2 2 && has "run: unknown option '--bogus'" && ok=1
verdict "run --mpi with an unknown option: every process exits 2" $ok

mpi_each 2 check --mpi "$tmp/pass.mlir"
ok=0
all_exit 0 2 && has "1 passed, 0 failed" && [ "$(grep -c 'passed,' "$tmp/out")" -eq 1 ] && ok=1
verdict "check --mpi: passes everywhere, only process 0 prints" $ok

# --- a failure in one process fails every process ---
mpi_each 1 check --mpi "$tmp/pass.mlir" : check --mpi "$tmp/fail.mlir"
ok=0
all_exit 1 2 && has "xrt: process 1 of 2 exits with status 1" "xrt: process 1 of 2:" \
  "check.expect_eq failed at element [1]" && ok=1
verdict "a check failing in process 1 only: both exit 1" $ok

mpi_each 2 check --mpi test/mpi/fail_one_process.mlir
ok=0
all_exit 1 2 && has "process 1: test/mpi/fail_one_process.mlir:12:3: check.expect_eq failed" \
  "0 passed, 1 failed" && ok=1
verdict "a check failing in a run_parallel participant of process 1: both exit 1" $ok

mpi_each 2 check --mpi test/mpi/probe_across.mlir
ok=0
all_exit 0 2 && has "1 passed, 0 failed" && ok=1
verdict "a probe made on process 1 is checked in every process" $ok

# Channel 7 has a sender in each replica: with 2 processes, on both.
cat >"$tmp/spread.mlir" <<'EOF2'
func.func @s(%x : tensor<2xi64>, %t : !stablehlo.token) -> !stablehlo.token {
  %0 = "stablehlo.send"(%x, %t) {
    channel_handle = #stablehlo.channel_handle<handle = 7, type = 2>,
    is_host_transfer = true
  } : (tensor<2xi64>, !stablehlo.token) -> !stablehlo.token
  func.return %0 : !stablehlo.token
}
func.func @r(%t : !stablehlo.token) -> (tensor<2xi64>, !stablehlo.token) {
  %0:2 = "stablehlo.recv"(%t) {
    channel_handle = #stablehlo.channel_handle<handle = 7, type = 3>,
    is_host_transfer = true
  } : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)
  func.return %0#0, %0#1 : tensor<2xi64>, !stablehlo.token
}
func.func @main() {
  %x = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
  %t = stablehlo.after_all : !stablehlo.token
  %r:6 = "interpreter.run_parallel"(%x, %t, %t, %x, %t, %t) {
    programs = [[@s, @r], [@s, @r]]
  } : (tensor<2xi64>, !stablehlo.token, !stablehlo.token, tensor<2xi64>, !stablehlo.token, !stablehlo.token)
      -> (!stablehlo.token, tensor<2xi64>, !stablehlo.token, !stablehlo.token, tensor<2xi64>, !stablehlo.token)
  check.expect_eq_const %r#1, dense<[1, 2]> : tensor<2xi64>
  func.return
}
EOF2
"$bin" check "$tmp/spread.mlir" >"$tmp/out" 2>"$tmp/err"
rc=$?
ok=0
[ $rc -eq 0 ] && has "1 passed, 0 failed" && ok=1
verdict "a channel with a sender in each replica, one process" $ok
mpi_each 2 check --mpi "$tmp/spread.mlir"
ok=0
all_exit 2 2 && has "channel 7 has senders or receivers on several processes" && ok=1
verdict "the same channel over 2 processes: a clear error everywhere" $ok

# --- xrt run --mpi: the same output with any number of processes ---
prog=test/mpi/run_parallel_mix.mlir
"$bin" run "$prog" >"$tmp/want" 2>"$tmp/err"
rc=$?
sed -n '/^result\[0\]/,$p' "$tmp/want" >"$tmp/want_results"
sort "$tmp/want" >"$tmp/want_sorted"
cp "$tmp/want" "$tmp/out"
ok=0
[ $rc -eq 0 ] && has "result[6]: tensor<2xi64>" "[1100, 4400]" && ok=1
verdict "run of $prog in one process" $ok
for np in 2 3 4; do
  mpi_each "$np" run --mpi "$prog"
  sed -n '/^result\[0\]/,$p' "$tmp/out" >"$tmp/got_results"
  sort "$tmp/out" >"$tmp/got_sorted"
  ok=0
  all_exit 0 "$np" && cmp -s "$tmp/want_results" "$tmp/got_results" &&
    cmp -s "$tmp/want_sorted" "$tmp/got_sorted" && ok=1
  verdict "run --mpi of $prog with $np processes: the same results and prints" $ok
done

if [ $failures -ne 0 ]; then
  echo "test_cli_mpi: $failures failed"
  exit 1
fi
echo "test_cli_mpi: all passed"
