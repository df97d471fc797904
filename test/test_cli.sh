#!/bin/sh
# test_cli.sh - the `xrt check` features the StableHLO interpreter's own
# tests use: results printed in the interpreter's format, FileCheck-style
# CHECK lines, --args on the RUN line, interpreter.print/probe and
# check.expect_serialized_eq.  Runs XRT_BIN (default build/xrt) on small
# files written to a temporary directory; prints one line per case and
# exits 1 if any case fails.
set -u

here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."
bin=${XRT_BIN:-build/xrt}
if [ ! -x "$bin" ]; then
  echo "test_cli: $bin not built (run make first)" >&2
  exit 2
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/xrt_cli.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
failures=0

# expect NAME WANT_EXIT FILE [GREP_PATTERN...]: runs `xrt check
# --split-input-file FILE`; the exit status must be WANT_EXIT and the output
# must contain each pattern (fixed strings).
expect() {
  name=$1 want=$2 file=$3
  shift 3
  "$bin" check --split-input-file "$file" >"$tmp/out" 2>&1
  got=$?
  ok=1
  [ "$got" -eq "$want" ] || ok=0
  for pat in "$@"; do
    grep -qF -- "$pat" "$tmp/out" || { ok=0; echo "  missing: $pat"; }
  done
  if [ $ok -eq 1 ]; then
    echo "PASS $name"
  else
    echo "FAIL $name (exit $got, want $want)"
    sed 's/^/  | /' "$tmp/out"
    failures=$((failures + 1))
  fi
}

# --- results, --args and CHECK lines ---
cat >"$tmp/args.mlir" <<'EOF'
// RUN: stablehlo-translate %s --interpret --args="[dense<1> : tensor<2xi32>, dense<[2, 5]> : tensor<2xi32>]" | FileCheck %s
// RUN: not stablehlo-translate %s --interpret --args="oops" 2>&1 | FileCheck %s --check-prefixes=CHECK-ERROR
// CHECK-ERROR: this line is not ours

func.func @main(%arg0: tensor<2xi32>, %arg1: tensor<2xi32>) -> tensor<2xi32> {
  %0 = stablehlo.add %arg0, %arg1 : tensor<2xi32>
  return %0 : tensor<2xi32>
}

// CHECK:      tensor<2xi32> {
// CHECK-NEXT:   [3, 6]
// CHECK-NEXT: }
EOF
expect "args and CHECK lines" 0 "$tmp/args.mlir" "tensor<2xi32> {" "  [3, 6]" "1 passed, 0 failed"

sed 's/\[3, 6\]/[3, 7]/' "$tmp/args.mlir" >"$tmp/args_bad.mlir"
expect "CHECK-NEXT mismatch" 1 "$tmp/args_bad.mlir" \
  "args_bad.mlir:11: CHECK-NEXT: expected string not found: '[3, 7]'" "0 passed, 1 failed"

cat >"$tmp/args_count.mlir" <<'EOF'
// RUN: stablehlo-translate %s --interpret --args="[dense<1> : tensor<2xi32>]" | FileCheck %s
func.func @main(%arg0: tensor<2xi32>, %arg1: tensor<2xi32>) -> tensor<2xi32> {
  return %arg0 : tensor<2xi32>
}
EOF
expect "wrong number of --args" 2 "$tmp/args_count.mlir" "takes 2 arguments but --args has 1"

cat >"$tmp/args_syntax.mlir" <<'EOF'
// RUN: stablehlo-translate %s --interpret --args="[4.0 : f32]" | FileCheck %s
func.func @main(%arg0: tensor<f32>) -> tensor<f32> {
  return %arg0 : tensor<f32>
}
EOF
expect "--args that is not dense" 2 "$tmp/args_syntax.mlir" "expected dense<...> : tensor<...>"

# --- the printing format, per chunk, and a CHECK line not found ---
cat >"$tmp/print.mlir" <<'EOF'
// RUN: stablehlo-translate --interpret --split-input-file %s | FileCheck %s
// RUN: stablehlo-translate --interpret --interpreter-print-dense --split-input-file %s | FileCheck %s --check-prefix=CHECK-DENSE

func.func @values() -> (tensor<2x2xf32>, tensor<i1>, tensor<0xui8>, tensor<f32>, tensor<2xcomplex<f32>>) {
  // CHECK:      tensor<2x2xf32> {
  // CHECK-NEXT:   [
  // CHECK-NEXT:     [1.000000e+00, 5.000000e-01],
  // CHECK-NEXT:     [0.333333343, 0x7FC00000]
  // CHECK-NEXT:   ]
  // CHECK-NEXT: }
  // CHECK-DENSE: not ours
  %a = stablehlo.constant dense<[[1.0, 0.5], [0.3333333432674408, 0x7FC00000]]> : tensor<2x2xf32>
  // CHECK-NEXT: tensor<i1> {true}
  %b = stablehlo.constant dense<true> : tensor<i1>
  // CHECK-NEXT: tensor<0xui8> {
  // CHECK-NEXT:   []
  %c = stablehlo.constant dense<> : tensor<0xui8>
  // CHECK: tensor<f32> {-1.23456788E+10}
  %d = stablehlo.constant dense<-1.23456788e10> : tensor<f32>
  // CHECK{LITERAL}: [[1.000000e+00, -2.000000e+00], [0.000000e+00, 0.000000e+00]]
  %e = stablehlo.constant dense<[(1.0, -2.0), (0.0, 0.0)]> : tensor<2xcomplex<f32>>
  func.return %a, %b, %c, %d, %e : tensor<2x2xf32>, tensor<i1>, tensor<0xui8>, tensor<f32>, tensor<2xcomplex<f32>>
}

// -----

func.func @missing() -> tensor<i32> {
  // CHECK: tensor<i32> {7}
  %a = stablehlo.constant dense<8> : tensor<i32>
  func.return %a : tensor<i32>
}
EOF
expect "interpreter printing format" 1 "$tmp/print.mlir" \
  "print.mlir:28: CHECK: expected string not found: 'tensor<i32> {7}'" \
  "tensor<i32> {8}" "1 passed, 1 failed"

# --- interpreter.print, interpreter.probe, check.expect_serialized_eq ---
cat >"$tmp/probe.mlir" <<'EOF'
// RUN: stablehlo-translate --interpret --split-input-file %s | FileCheck %s

func.func @printed() {
  // CHECK: %1 = tensor<2xi32> {
  // CHECK-NEXT: [1, 2]
  // CHECK: %4:2 = tensor<i32> {5}
  %0 = stablehlo.constant dense<0> : tensor<i32>
  %1 = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  interpreter.print %1 : tensor<2xi32>
  %2:2 = stablehlo.optimization_barrier %0, %0 : tensor<i32>, tensor<i32>
  %3 = stablehlo.constant dense<5> : tensor<i32>
  %4:2 = stablehlo.optimization_barrier %3, %3 : tensor<i32>, tensor<i32>
  interpreter.print %4#1 : tensor<i32>
  func.return
}

// -----

func.func @probe_loop() {
  %init = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %three = stablehlo.constant dense<3> : tensor<i64>
  %r = stablehlo.while(%i = %init) : tensor<i64>
  cond {
    %c = stablehlo.compare LT, %i, %three : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %n = stablehlo.add %i, %one : tensor<i64>
    %p = interpreter.probe %n, probe_id = "loop/n" : tensor<i64>
    stablehlo.return %p : tensor<i64>
  }
  check.expect_eq_const %r, dense<3> : tensor<i64>
  check.expect_serialized_eq %one, probe_id = "loop/n" : tensor<i64>
  check.expect_serialized_eq %three, probe_id = "loop/n", iter = 2 : tensor<i64>
  func.return
}

// -----

func.func @probe_mismatch() {
  %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
  %b = stablehlo.constant dense<[1, 3]> : tensor<2xi32>
  %p = interpreter.probe %a, probe_id = "a" : tensor<2xi32>
  check.expect_serialized_eq %b, probe_id = "a" : tensor<2xi32>
  func.return
}

// -----

func.func @probe_missing_iteration() {
  %a = stablehlo.constant dense<1> : tensor<i32>
  %p = interpreter.probe %a, probe_id = "once" : tensor<i32>
  check.expect_serialized_eq %p, probe_id = "once", iter = 1 : tensor<i32>
  func.return
}

// -----

func.func @probes_do_not_leak_across_chunks() {
  %a = stablehlo.constant dense<1> : tensor<i32>
  check.expect_serialized_eq %a, probe_id = "once" : tensor<i32>
  func.return
}
EOF
expect "interpreter ops" 1 "$tmp/probe.mlir" \
  "probe.mlir:44:3: check.expect_serialized_eq: tensor<2xi32> differs from probe 'a' iteration 0" \
  "probe.mlir:53:3: check.expect_serialized_eq: probe 'once' has no iteration 1 (it ran 1 time)" \
  "probe.mlir:61:3: check.expect_serialized_eq: probe 'once' has no iteration 0 (it ran 0 times)" \
  "2 passed, 3 failed"

# --- without a FileCheck RUN line nothing is printed (the old behaviour) ---
cat >"$tmp/plain.mlir" <<'EOF'
// RUN: stablehlo-translate --interpret -split-input-file %s
func.func @main() -> tensor<i32> {
  // CHECK: never matched
  %a = stablehlo.constant dense<8> : tensor<i32>
  check.expect_eq_const %a, dense<8> : tensor<i32>
  func.return %a : tensor<i32>
}
EOF
"$bin" check --split-input-file "$tmp/plain.mlir" >"$tmp/out" 2>&1
if [ $? -eq 0 ] && [ "$(cat "$tmp/out")" = "1 passed, 0 failed" ]; then
  echo "PASS plain check prints only the summary"
else
  echo "FAIL plain check prints only the summary"
  sed 's/^/  | /' "$tmp/out"
  failures=$((failures + 1))
fi

if [ $failures -ne 0 ]; then
  echo "test_cli: $failures failed"
  exit 1
fi
echo "test_cli: all passed"
