#!/bin/sh
# Runs every StableHLO interpreter file that uses interpreter.run_parallel
# (found by grepping $XRT_INTERPRET_DIR and its chlo/ folder) with
# `xrt check --mpi --split-input-file` under mpirun with each process count
# of $MPI_NPROCS, so that the launches' participants are split across the
# processes.  Prints one line per file and count; exits 1 if any run fails
# or if fewer than $XRT_MPI_INTERPRET_MIN files were found.
#
# Environment: XRT_BIN (an xrt built with XRT_MPI=1; default
# build-mpi/xrt), XRT_INTERPRET_DIR (default ../shared/stablehlo/interpret),
# MPIRUN (default: mpirun --allow-run-as-root --oversubscribe), MPI_NPROCS
# (default "2 4"), XRT_TIMEOUT (seconds per run, default 300),
# XRT_MPI_INTERPRET_MIN (default 13, the files that use run_parallel
# today), XRT_VERBOSE=1 (show the output of failing runs).
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

bin=${XRT_BIN:-build-mpi/xrt}
dir=${XRT_INTERPRET_DIR:-../shared/stablehlo/interpret}
mpirun_cmd=${MPIRUN:-mpirun --allow-run-as-root --oversubscribe}
nprocs=${MPI_NPROCS:-2 4}
limit=${XRT_TIMEOUT:-300}
min=${XRT_MPI_INTERPRET_MIN:-13}

if [ ! -d "$dir" ]; then
  echo "interpret-mpi: $dir not found; skipping the interpreter tests"
  exit 0
fi
if [ ! -x "$bin" ]; then
  echo "interpret-mpi: $bin not built (make XRT_MPI=1 first)" >&2
  exit 2
fi

runner=""
command -v timeout >/dev/null 2>&1 && runner="timeout $limit"

log=$(mktemp)
trap 'rm -f "$log"' EXIT INT TERM
files=$(grep -l 'interpreter\.run_parallel' "$dir"/*.mlir "$dir"/chlo/*.mlir 2>/dev/null)
count=0
passed=0
failed=""
for f in $files; do
  count=$((count + 1))
  rel=${f#"$dir"/}
  for np in $nprocs; do
    # shellcheck disable=SC2086 # word splitting of the commands is wanted
    $runner $mpirun_cmd -np "$np" "$bin" check --mpi --split-input-file "$f" >"$log" 2>&1
    rc=$?
    # Process 0 prints the summary; the exit status is every process's.
    summary=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -n 1)
    if [ "$rc" -eq 0 ] && [ -n "$summary" ] && [ "${summary#* passed, }" = "0 failed" ]; then
      echo "PASS $rel -np $np (${summary%%,*})"
      passed=$((passed + 1))
    else
      why=""
      [ "$rc" -eq 124 ] && why=" timed out after ${limit}s"
      echo "FAIL $rel -np $np (exit $rc; ${summary:-no summary})$why"
      failed="$failed $rel:$np"
      if [ "${XRT_VERBOSE:-0}" = 1 ]; then sed 's/^/    /' "$log"; fi
    fi
  done
done

echo "interpret-mpi: $passed passed, $(echo $failed | wc -w) failed, $count files"
if [ "$count" -lt "$min" ]; then
  echo "interpret-mpi: only $count files use run_parallel, expected at least $min"
  exit 1
fi
if [ -n "$failed" ]; then
  echo "interpret-mpi: failed:$failed"
  exit 1
fi
exit 0
