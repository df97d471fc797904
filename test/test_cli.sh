#!/bin/sh
# test_cli.sh - the `xrt check` features the StableHLO interpreter's own
# tests use: results printed in the interpreter's format, FileCheck-style
# CHECK lines, --args on the RUN line, interpreter.print/probe,
# check.expect_serialized_eq and interpreter.run_parallel; `xrt run
# --devices N`; `xrt print`; and `xrt bench`.  Runs XRT_BIN (default
# build/xrt) on small files written to a temporary directory; prints one
# line per case and exits 1 if any case fails.
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

# --- interpreter.run_parallel: launches over replicas and partitions ---
cat >"$tmp/parallel.mlir" <<'EOF'
// RUN: stablehlo-translate --interpret --split-input-file %s | FileCheck %s

module @ids {
  // %s: max over the replicas of a partition (cross_replica); %t: over
  // all four (cross_replica_and_partition, as a channel_handle is given).
  func.func @ids(%x: tensor<2xi32>) -> (tensor<ui32>, tensor<ui32>, tensor<2xi32>, tensor<2xi32>) {
    %r = stablehlo.replica_id : tensor<ui32>
    %p = stablehlo.partition_id : tensor<ui32>
    %s = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        %0 = stablehlo.maximum %a, %b : tensor<i32>
        stablehlo.return %0 : tensor<i32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi32>) -> tensor<2xi32>
    %t = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        %0 = stablehlo.maximum %a, %b : tensor<i32>
        stablehlo.return %0 : tensor<i32>
    }) {
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>,
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 0>
    } : (tensor<2xi32>) -> tensor<2xi32>
    return %r, %p, %s, %t : tensor<ui32>, tensor<ui32>, tensor<2xi32>, tensor<2xi32>
  }
  func.func @main() {
    %a = stablehlo.constant dense<[1, 9]> : tensor<2xi32>
    %b = stablehlo.constant dense<[5, 2]> : tensor<2xi32>
    %c = stablehlo.constant dense<[7, -1]> : tensor<2xi32>
    %d = stablehlo.constant dense<[0, 3]> : tensor<2xi32>
    // Replica 0 runs partitions 0 and 1 on %a and %b, replica 1 on %c, %d.
    %r:16 = "interpreter.run_parallel"(%a, %b, %c, %d) {
      programs = [[@ids, @ids], [@ids, @ids]]
    } : (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) ->
        (tensor<ui32>, tensor<ui32>, tensor<2xi32>, tensor<2xi32>,
         tensor<ui32>, tensor<ui32>, tensor<2xi32>, tensor<2xi32>,
         tensor<ui32>, tensor<ui32>, tensor<2xi32>, tensor<2xi32>,
         tensor<ui32>, tensor<ui32>, tensor<2xi32>, tensor<2xi32>)
    check.expect_eq_const %r#0, dense<0> : tensor<ui32>
    check.expect_eq_const %r#1, dense<0> : tensor<ui32>
    check.expect_eq_const %r#2, dense<[7, 9]> : tensor<2xi32>
    check.expect_eq_const %r#3, dense<[7, 9]> : tensor<2xi32>
    check.expect_eq_const %r#4, dense<0> : tensor<ui32>
    check.expect_eq_const %r#5, dense<1> : tensor<ui32>
    check.expect_eq_const %r#6, dense<[5, 3]> : tensor<2xi32>
    check.expect_eq_const %r#7, dense<[7, 9]> : tensor<2xi32>
    check.expect_eq_const %r#8, dense<1> : tensor<ui32>
    check.expect_eq_const %r#9, dense<0> : tensor<ui32>
    check.expect_eq_const %r#10, dense<[7, 9]> : tensor<2xi32>
    check.expect_eq_const %r#11, dense<[7, 9]> : tensor<2xi32>
    check.expect_eq_const %r#12, dense<1> : tensor<ui32>
    check.expect_eq_const %r#13, dense<1> : tensor<ui32>
    check.expect_eq_const %r#14, dense<[5, 3]> : tensor<2xi32>
    check.expect_eq_const %r#15, dense<[7, 9]> : tensor<2xi32>
    func.return
  }
}

// -----

module @host_queues {
  func.func @producer(%x: tensor<2xi64>, %t: !stablehlo.token) -> !stablehlo.token {
    %v:2 = "stablehlo.infeed"(%t) : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)
    %y = stablehlo.multiply %x, %v#0 : tensor<2xi64>
    %s = "stablehlo.send"(%y, %v#1) {
      channel_handle = #stablehlo.channel_handle<handle = 4, type = 2>,
      is_host_transfer = true
    } : (tensor<2xi64>, !stablehlo.token) -> !stablehlo.token
    %o = "stablehlo.outfeed"(%y, %s) : (tensor<2xi64>, !stablehlo.token) -> !stablehlo.token
    return %o : !stablehlo.token
  }
  func.func @consumer(%t: !stablehlo.token) -> (!stablehlo.token, tensor<2xi64>) {
    %r:2 = "stablehlo.recv"(%t) {
      channel_handle = #stablehlo.channel_handle<handle = 4, type = 3>,
      is_host_transfer = true
    } : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)
    %one = stablehlo.constant dense<1> : tensor<2xi64>
    %z = stablehlo.add %r#0, %one : tensor<2xi64>
    interpreter.print %z : tensor<2xi64>
    return %r#1, %z : !stablehlo.token, tensor<2xi64>
  }
  func.func @feed() -> tensor<2xi64> {
    %c = stablehlo.constant dense<[3, -4]> : tensor<2xi64>
    return %c : tensor<2xi64>
  }
  func.func @main() {
    %x = stablehlo.constant dense<[10, 20]> : tensor<2xi64>
    %t = stablehlo.after_all : !stablehlo.token
    // CHECK: %2 = tensor<2xi64> {
    // CHECK-NEXT: [31, -79]
    %r:3 = "interpreter.run_parallel"(%x, %t, %t) {
      infeed = [@feed], programs = [[@producer], [@consumer]]
    } : (tensor<2xi64>, !stablehlo.token, !stablehlo.token) ->
        (!stablehlo.token, !stablehlo.token, tensor<2xi64>)
    check.expect_eq_const %r#2, dense<[31, -79]> : tensor<2xi64>
    func.return
  }
}

// -----

module @reduce_to_roots {
  // Groups {2, 0} and {1, 3}: replicas 2 and 1 are the roots.
  func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {
    %s = "stablehlo.collective_reduce"(%x) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %0 = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %0 : tensor<f32>
    }) {replica_groups = dense<[[2, 0], [1, 3]]> : tensor<2x2xi64>} : (tensor<2xf32>) -> tensor<2xf32>
    return %s : tensor<2xf32>
  }
  func.func @main() {
    %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %b = stablehlo.constant dense<[10.0, 20.0]> : tensor<2xf32>
    %c = stablehlo.constant dense<[100.0, 200.0]> : tensor<2xf32>
    %d = stablehlo.constant dense<[1000.0, 2000.0]> : tensor<2xf32>
    %r:4 = "interpreter.run_parallel"(%a, %b, %c, %d) {
      programs = [[@f], [@f], [@f], [@f]]
    } : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) ->
        (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
    check.expect_eq_const %r#0, dense<[0.0, 0.0]> : tensor<2xf32>
    check.expect_eq_const %r#1, dense<[1010.0, 2020.0]> : tensor<2xf32>
    check.expect_eq_const %r#2, dense<[101.0, 202.0]> : tensor<2xf32>
    check.expect_eq_const %r#3, dense<[0.0, 0.0]> : tensor<2xf32>
    func.return
  }
}
EOF
expect "run_parallel: ids, all_reduce, infeed, send/recv, print, collective_reduce" 0 \
  "$tmp/parallel.mlir" "3 passed, 0 failed"

cat >"$tmp/parallel_bad.mlir" <<'EOF'
module @count {
  func.func @f(%a: tensor<2xi32>) -> tensor<2xi32> {
    return %a : tensor<2xi32>
  }
  func.func @main() {
    %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
    %r:2 = "interpreter.run_parallel"(%a) {
      programs = [[@f], [@f]]
    } : (tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>)
    func.return
  }
}
// -----
module @type {
  func.func @f(%a: tensor<2xi32>) -> tensor<2xi32> {
    return %a : tensor<2xi32>
  }
  func.func @main() {
    %a = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
    %r = "interpreter.run_parallel"(%a) {
      programs = [[@f]]
    } : (tensor<2xi64>) -> tensor<2xi32>
    func.return
  }
}
// -----
module @missing {
  func.func @main() {
    %r = "interpreter.run_parallel"() {
      programs = [[@nope]]
    } : () -> tensor<i32>
    func.return
  }
}
// -----
module @ragged {
  func.func @main() {
    %r = "interpreter.run_parallel"() {
      programs = [[@a, @b], [@a]]
    } : () -> tensor<i32>
    func.return
  }
}
// -----
module @lonely_recv {
  func.func @recv(%t: !stablehlo.token) -> (tensor<2xi64>, !stablehlo.token) {
    %r:2 = "stablehlo.recv"(%t) {
      channel_handle = #stablehlo.channel_handle<handle = 7, type = 3>,
      is_host_transfer = true
    } : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)
    return %r#0, %r#1 : tensor<2xi64>, !stablehlo.token
  }
  func.func @main() {
    %t = stablehlo.after_all : !stablehlo.token
    %r:2 = "interpreter.run_parallel"(%t) {
      programs = [[@recv]]
    } : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)
    func.return
  }
}
// -----
module @empty_infeed {
  func.func @f(%t: !stablehlo.token) -> tensor<2xi64> {
    %v:2 = "stablehlo.infeed"(%t) : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)
    return %v#0 : tensor<2xi64>
  }
  func.func @main() {
    %t = stablehlo.after_all : !stablehlo.token
    %r = "interpreter.run_parallel"(%t) {
      programs = [[@f]]
    } : (!stablehlo.token) -> tensor<2xi64>
    func.return
  }
}
// -----
module @nested {
  func.func @f() -> tensor<i32> {
    %a = stablehlo.constant dense<1> : tensor<i32>
    return %a : tensor<i32>
  }
  func.func @g() -> tensor<i32> {
    %r = "interpreter.run_parallel"() {programs = [[@f]]} : () -> tensor<i32>
    return %r : tensor<i32>
  }
  func.func @main() {
    %r = "interpreter.run_parallel"() {programs = [[@g]]} : () -> tensor<i32>
    func.return
  }
}
// -----
module @failing_participant {
  func.func @f(%x: tensor<2xi32>) -> tensor<2xi32> {
    %s = "stablehlo.all_reduce"(%x) ({
      ^bb0(%a: tensor<i32>, %b: tensor<i32>):
        %0 = stablehlo.add %a, %b : tensor<i32>
        stablehlo.return %0 : tensor<i32>
    }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2xi32>) -> tensor<2xi32>
    check.expect_eq_const %s, dense<[0, 0]> : tensor<2xi32>
    return %s : tensor<2xi32>
  }
  func.func @main() {
    %a = stablehlo.constant dense<[1, 2]> : tensor<2xi32>
    %r:2 = "interpreter.run_parallel"(%a, %a) {
      programs = [[@f], [@f]]
    } : (tensor<2xi32>, tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>)
    func.return
  }
}
EOF
XRT_RECV_TIMEOUT_MS=200 expect "run_parallel: bad programs, operands and queues" 2 \
  "$tmp/parallel_bad.mlir" \
  "parallel_bad.mlir:7:12: interpreter.run_parallel has 1 operand(s) and 2 result(s) but its programs take 2 and return 2 [INVALID_ARGUMENT]" \
  "parallel_bad.mlir:20:10: interpreter.run_parallel: operand 0 does not match argument 0 of @f (replica 0, partition 0) [INVALID_ARGUMENT]" \
  "parallel_bad.mlir:29:10: interpreter.run_parallel: the module has no function @nope [NOT_FOUND]" \
  "parallel_bad.mlir:38:10: interpreter.run_parallel needs programs = [[@f, ...], ...]" \
  "parallel_bad.mlir:47:12: xrt.recv: nothing was sent on channel 7 within 200 ms [DEADLINE_EXCEEDED]" \
  "parallel_bad.mlir:64:12: xrt.infeed: the infeed queue is empty" \
  "parallel_bad.mlir:82:10: interpreter.run_parallel cannot run inside or beside another interpreter.run_parallel [UNIMPLEMENTED]" \
  "parallel_bad.mlir:98:5: check.expect_eq failed at element [0]: actual 2, expected 0" \
  "0 passed, 8 failed"

# --- xrt run --devices N: one replicated launch, each device's results ---
cat >"$tmp/const.mlir" <<'EOF'
func.func @main() -> tensor<3xf32> {
  %c = stablehlo.constant dense<[1.5, -2.0, 3.0]> : tensor<3xf32>
  func.return %c : tensor<3xf32>
}
EOF
cat >"$tmp/replicated.mlir" <<'EOF'
func.func @main(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<ui32>) {
  %id = stablehlo.replica_id : tensor<ui32>
  %f = stablehlo.convert %id : (tensor<ui32>) -> tensor<f32>
  %b = stablehlo.broadcast_in_dim %f, dims = [] : (tensor<f32>) -> tensor<3xf32>
  %y = stablehlo.multiply %x, %b : tensor<3xf32>
  %s = "stablehlo.all_reduce"(%y) ({
    ^bb0(%a: tensor<f32>, %c: tensor<f32>):
      %0 = stablehlo.add %a, %c : tensor<f32>
      stablehlo.return %0 : tensor<f32>
  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<3xf32>) -> tensor<3xf32>
  func.return %s, %id : tensor<3xf32>, tensor<ui32>
}
EOF
# expect_run NAME WANT_EXIT WANT_OUTPUT_FILE ARGS...: `xrt run ARGS` must
# exit WANT_EXIT and print exactly WANT_OUTPUT_FILE.
expect_run() {
  name=$1 want=$2 wantout=$3
  shift 3
  "$bin" run "$@" >"$tmp/out" 2>&1
  got=$?
  if [ "$got" -eq "$want" ] && cmp -s "$tmp/out" "$wantout"; then
    echo "PASS $name"
  else
    echo "FAIL $name (exit $got, want $want)"
    diff "$wantout" "$tmp/out" | sed 's/^/  | /'
    failures=$((failures + 1))
  fi
}
"$bin" run "$tmp/const.mlir" --output-dir "$tmp/in" >/dev/null 2>&1
# The sum over replicas 0..3 of x * replica_id is x * 6.
cat >"$tmp/want" <<'EOF'
device 0:
result[0]: tensor<3xf32>
[  9.0, -12.0,  18.0]
result[1]: tensor<ui32>
0
device 1:
result[0]: tensor<3xf32>
[  9.0, -12.0,  18.0]
result[1]: tensor<ui32>
1
device 2:
result[0]: tensor<3xf32>
[  9.0, -12.0,  18.0]
result[1]: tensor<ui32>
2
device 3:
result[0]: tensor<3xf32>
[  9.0, -12.0,  18.0]
result[1]: tensor<ui32>
3
EOF
expect_run "run --devices 4 (replica_id, all_reduce)" 0 "$tmp/want" \
  "$tmp/replicated.mlir" --devices 4 --input "$tmp/in/result_0.npy" --output-dir "$tmp/out4"
for d in 0 1 2 3; do
  for k in 0 1; do
    if [ ! -s "$tmp/out4/device_${d}_result_$k.npy" ]; then
      echo "FAIL run --devices 4 --output-dir: no device_${d}_result_$k.npy"
      failures=$((failures + 1))
    fi
  done
done
# A device's output file reads back as an input: 4 * (x * 6) * 1 over
# replicas 0..3 with the groups of 4 is 6 * (x * 6) = 36 x.
sed 's/^\[  9\.0, -12\.0,  18\.0\]$/[ 54.0, -72.0, 108.0]/' "$tmp/want" >"$tmp/want36"
expect_run "run --devices 4 on a device's .npy output" 0 "$tmp/want36" \
  "$tmp/replicated.mlir" --devices 4 --input "$tmp/out4/device_3_result_0.npy"
"$bin" run "$tmp/replicated.mlir" --devices 2 --input "$tmp/in/result_0.npy" >"$tmp/out" 2>&1
if [ $? -eq 2 ] && grep -qF "id 2 in replica_groups is out of range" "$tmp/out"; then
  echo "PASS run --devices 2 with groups of 4 is refused"
else
  echo "FAIL run --devices 2 with groups of 4 is refused"
  sed 's/^/  | /' "$tmp/out"
  failures=$((failures + 1))
fi

# --cache-dir (and XRT_CACHE_DIR): the first run writes one cache file
# (and its alias, a-*.xrtc), a second process loads it (a disk hit) and
# prints the same results.  An xrt built without the disk cache
# (XRT_DISK_CACHE=0) refuses the option.
"$bin" run "$tmp/const.mlir" --cache-dir "$tmp/nocache" >"$tmp/out" 2>&1
if [ $? -eq 2 ] && grep -q "built without the disk cache" "$tmp/out"; then
  echo "PASS run --cache-dir without the disk cache is refused"
elif "$bin" run "$tmp/replicated.mlir" --devices 4 --cache-dir "$tmp/cache" \
     --input "$tmp/in/result_0.npy" >"$tmp/cache_out1" 2>&1 &&
   [ "$(ls "$tmp/cache" | grep -c '^[0-9a-f]*\.xrtc$')" -eq 1 ] &&
   XRT_CACHE_DIR="$tmp/cache" XRT_LOG=debug,cache "$bin" run \
     "$tmp/replicated.mlir" --devices 4 --input "$tmp/in/result_0.npy" \
     >"$tmp/cache_out2" 2>"$tmp/cache_log" &&
   cmp -s "$tmp/cache_out1" "$tmp/want" && cmp -s "$tmp/cache_out2" "$tmp/want" &&
   grep -q "disk hit" "$tmp/cache_log"; then
  echo "PASS run --cache-dir / XRT_CACHE_DIR"
else
  echo "FAIL run --cache-dir / XRT_CACHE_DIR"
  sed 's/^/  | /' "$tmp/cache_out1" "$tmp/cache_out2" "$tmp/cache_log" 2>/dev/null
  failures=$((failures + 1))
fi

# --- xrt print: a program's pretty and generic spellings (other names,
# locations, comments) print the same canonical text; a file that does not
# parse fails with file:line:col ---
cat >"$tmp/pretty.mlir" <<'EOF'
module {
  func.func @main(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xi1> {
    %0 = stablehlo.add %a, %b : tensor<3xf32> loc("x.py":1:2)
    // a comment
    %1 = stablehlo.compare GT, %0, %b, FLOAT : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    return %1 : tensor<3xi1>
  }
}
EOF
cat >"$tmp/generic.mlir" <<'EOF'
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>, sym_name = "main"}> ({
  ^bb0(%x: tensor<3xf32>, %y: tensor<3xf32>):
    %s = "stablehlo.add"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %c = "stablehlo.compare"(%s, %y) {comparison_direction = #stablehlo<comparison_direction GT>, compare_type = #stablehlo<comparison_type FLOAT>} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
    "func.return"(%c) : (tensor<3xi1>) -> ()
  }) : () -> ()
}) : () -> ()
EOF
if "$bin" print "$tmp/pretty.mlir" >"$tmp/print1" 2>&1 &&
   "$bin" print "$tmp/generic.mlir" -o "$tmp/print2" >"$tmp/out" 2>&1 &&
   cmp -s "$tmp/print1" "$tmp/print2" &&
   grep -qF '%0 = "stablehlo.add"(%arg0, %arg1)' "$tmp/print1" &&
   "$bin" print "$tmp/print1" | cmp -s - "$tmp/print1"; then
  echo "PASS print: pretty and generic twins print the same, and reprint"
else
  echo "FAIL print: pretty and generic twins print the same, and reprint"
  sed 's/^/  | /' "$tmp/print1" "$tmp/print2" "$tmp/out" 2>/dev/null
  failures=$((failures + 1))
fi
printf 'func.func @main() -> () {\n  %%0 = stablehlo.bogus : tensor<f32>\n}\n' >"$tmp/bad.mlir"
"$bin" print "$tmp/bad.mlir" >"$tmp/out" 2>&1
if [ $? -eq 2 ] && grep -qF "bad.mlir:2:8: unknown op 'stablehlo.bogus'" "$tmp/out"; then
  echo "PASS print: a file that does not parse fails at file:line:col"
else
  echo "FAIL print: a file that does not parse fails at file:line:col"
  sed 's/^/  | /' "$tmp/out"
  failures=$((failures + 1))
fi

# --- xrt bench: compile time, latency, throughput and peak memory, as
# text or one JSON object; .npy or generated inputs, text or bytecode;
# bad input exits 2 with the reason ---
# expect_bench NAME WANT_EXIT ARGS... -- PATTERN...: `xrt bench ARGS` must
# exit WANT_EXIT, and each extended regular expression PATTERN match a
# line of its output (stdout and stderr).
# bench_first N ARGS...: `xrt bench` on the first N of ARGS.
bench_first() {
  k=$1 i=0
  shift
  for a in "$@"; do
    [ $i -lt $k ] && set -- "$@" "$a"
    i=$((i + 1))
  done
  shift $i
  "$bin" bench "$@"
}
expect_bench() {
  name=$1 want=$2
  shift 2
  n=0
  for a in "$@"; do
    [ "$a" = -- ] && break
    n=$((n + 1))
  done
  bench_first $n "$@" >"$tmp/out" 2>&1
  got=$?
  shift $n
  [ $# -gt 0 ] && shift
  ok=1
  [ "$got" -eq "$want" ] || ok=0
  for pat in "$@"; do
    grep -qE -- "$pat" "$tmp/out" || { ok=0; echo "  missing: $pat"; }
  done
  if [ $ok -eq 1 ]; then
    echo "PASS $name"
  else
    echo "FAIL $name (exit $got, want $want)"
    sed 's/^/  | /' "$tmp/out"
    failures=$((failures + 1))
  fi
}
cat >"$tmp/badd.mlir" <<'EOF'
func.func @main(%a: tensor<256x256xf32>, %b: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = stablehlo.add %a, %b : tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}
EOF
num='[0-9]+\.[0-9]{3} (us|ms)'
expect_bench "bench: text report" 0 "$tmp/badd.mlir" --iterations 3 --warmup 1 --threads 1 -- \
  "^program:     .*badd\.mlir @main, 2 inputs \(random\), 1 device, 1 thread per device$" \
  "^compile:     $num \(parse $num\)$" \
  "^latency:     min $num, median $num, p90 $num, mean $num \(3 calls after 1 warmup\)$" \
  "^throughput:  [0-9]+\.[0-9]{2} calls/s$" \
  "^peak memory: [0-9]+ bytes \([0-9]+\.[0-9] MiB\)$"
# The peak holds at least both arguments and the result (3 x 256 KiB),
# and little else (under 1 MiB more).
peak=$(sed -n 's/^peak memory: \([0-9]*\) bytes.*/\1/p' "$tmp/out")
if [ -n "$peak" ] && [ "$peak" -ge 786432 ] && [ "$peak" -lt 1835008 ]; then
  echo "PASS bench: peak memory holds the arguments and the result"
else
  echo "FAIL bench: peak memory holds the arguments and the result (peak '$peak')"
  failures=$((failures + 1))
fi
jnum='[0-9]+(\.[0-9]+)?'
expect_bench "bench --json: one object" 0 "$tmp/badd.mlir" --json --inputs zeros \
  --iterations 4 --warmup 0 --threads 2 --devices 2 -- \
  "^\{\"file\": \".*badd\.mlir\", \"entry\": \"main\", \"inputs\": \"zeros\", \"num_inputs\": 2, \"devices\": 2, \"threads\": 2, \"warmup\": 0, \"iterations\": 4, \"parse_ms\": $jnum, \"compile_ms\": $jnum, \"min_ms\": $jnum, \"median_ms\": $jnum, \"p90_ms\": $jnum, \"mean_ms\": $jnum, \"calls_per_s\": $jnum, \"peak_memory_bytes\": [0-9]+\}$"
# min <= median <= p90, compile includes parse, a positive throughput;
# two devices hold two copies of the arguments and the result.
if [ "$(wc -l <"$tmp/out")" -eq 1 ] &&
   awk -F'[:,}] *' '{ for (i = 1; i < NF; i++) v[$i] = $(i + 1) }
     END { exit !(v["\"min_ms\""] <= v["\"median_ms\""] &&
                  v["\"median_ms\""] <= v["\"p90_ms\""] &&
                  v["\"parse_ms\""] <= v["\"compile_ms\""] && v["\"calls_per_s\""] > 0 &&
                  v["\"peak_memory_bytes\""] >= 2 * 786432) }' "$tmp/out"; then
  echo "PASS bench --json: consistent figures"
else
  echo "FAIL bench --json: consistent figures"
  sed 's/^/  | /' "$tmp/out"
  failures=$((failures + 1))
fi
# .npy inputs (as xrt run takes them) on a bytecode program: an add of two
# tensor<4xf32>, as xrt_program_serialize writes it.
cat >"$tmp/c4.mlir" <<'EOF'
func.func @main() -> (tensor<4xf32>, tensor<3xf32>) {
  %0 = stablehlo.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %1 = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
  return %0, %1 : tensor<4xf32>, tensor<3xf32>
}
EOF
"$bin" run "$tmp/c4.mlir" --output-dir "$tmp/c4" >/dev/null 2>&1
base64 -d >"$tmp/add4.mlir.bc" <<'EOF'
TUzvUg1TdGFibGVITE9fdjEuMjAuMAABGQUNEQkBAxcDBxsfIwMxEwsBAwcDCQsLCwsBCQsTExMD
CwcHBxMbAkkfAwEjCR0BHQMFBRcLAwMXCwURFwsHBx1DCSkDEQURBQcHAwcETQUBUAEBBwQ9AwEF
A1ANAwcEKQMHCwUNDQAFBg8DBwUBAwcEEQMFBgMBBQEAixMVDxEPCxERAwttYWluAAA8aW5wdXQ+
AGJ1aWx0aW4AdmhsbwBtb2R1bGUAZnVuY192MQBhZGRfdjEAcmV0dXJuX3YxAAgVBQUBAQsDBQMH
CQ==
EOF
c4a="$tmp/c4/result_0.npy" c4b="$tmp/c4/result_1.npy"
expect_bench "bench: bytecode program, .npy inputs" 0 "$tmp/add4.mlir.bc" \
  --input "$c4a" --input "$c4a" --iterations 2 -- \
  "^program:     .*add4\.mlir\.bc @main, 2 inputs \(files\), 1 device, " \
  "\(2 calls after 2 warmup\)$"
expect_bench "bench: a .npy of the wrong shape" 2 "$tmp/add4.mlir.bc" \
  --input "$c4a" --input "$c4b" -- \
  "result_1\.npy holds tensor<3xf32> but argument 1 of @main is tensor<4xf32>$"
expect_bench "bench: too few .npy files" 2 "$tmp/add4.mlir.bc" --input "$c4a" -- \
  "@main takes 2 arguments but 1 --input file was given$" "^  argument 1: tensor<4xf32>$"
expect_bench "bench: a missing .npy" 2 "$tmp/add4.mlir.bc" --input "$c4a" \
  --input "$tmp/none.npy" -- "none\.npy: cannot open: No such file or directory \[NOT_FOUND\]$"
printf 'func.func @main() -> () {\n  %%0 = stablehlo.bogus : tensor<f32>\n}\n' >"$tmp/bogus.mlir"
expect_bench "bench: a program that does not parse" 2 "$tmp/bogus.mlir" -- \
  "bogus\.mlir:2:8: unknown op 'stablehlo\.bogus'"
expect_bench "bench: a program that does not compile" 2 "$tmp/badd.mlir" --entry nothere -- \
  "no function @nothere.*\[NOT_FOUND\]$"
expect_bench "bench: a missing program" 2 "$tmp/nothere.mlir" -- \
  "nothere\.mlir: No such file or directory$"
expect_bench "bench: --iterations 0" 2 "$tmp/badd.mlir" --iterations 0 -- \
  "^xrt: bench: --iterations needs a number from 1 to 10000000, not '0'$"
expect_bench "bench: --iterations=-3" 2 "$tmp/badd.mlir" --iterations=-3 -- \
  "--iterations needs a number from 1 to 10000000, not '-3'$"
expect_bench "bench: --warmup -1" 2 "$tmp/badd.mlir" --warmup -1 -- \
  "--warmup needs a number from 0 to 10000000, not '-1'$"
expect_bench "bench: --threads 0" 2 "$tmp/badd.mlir" --threads 0 -- \
  "--threads needs a number from 1 to 1024, not '0'$"
expect_bench "bench: --devices 0" 2 "$tmp/badd.mlir" --devices 0 -- \
  "--devices needs a number from 1 to 1024, not '0'$"
expect_bench "bench: --inputs ones" 2 "$tmp/badd.mlir" --inputs ones -- \
  "--inputs is 'random' or 'zeros', not 'ones'$"
expect_bench "bench: --input with --inputs" 2 "$tmp/badd.mlir" --input "$c4a" --inputs zeros -- \
  "--input files and --inputs exclude each other$"
expect_bench "bench: an unknown option" 2 "$tmp/badd.mlir" --mpi -- \
  "^xrt: bench: unknown option '--mpi'$" "^usage: xrt bench FILE"
expect_bench "bench: no program" 2 --json -- "^xrt: bench: no program file given$"
expect_bench "bench --help" 0 --help -- "^usage: xrt bench FILE"
"$bin" --help >"$tmp/out" 2>&1
if grep -q "^  bench FILE.mlir " "$tmp/out" && grep -q -- "--inputs KIND" "$tmp/out"; then
  echo "PASS xrt --help lists bench"
else
  echo "FAIL xrt --help lists bench"
  failures=$((failures + 1))
fi

if [ $failures -ne 0 ]; then
  echo "test_cli: $failures failed"
  exit 1
fi
echo "test_cli: all passed"
