#!/bin/sh
# test_cts.sh - runs the plugin conformance suite (XRT_BUILD/xrt-cts,
# default build/) against the three plugins the build makes and checks
# its lines and summaries:
#   libxrt_sim.so      everything passes; the only skips are capabilities
#                      the simulator does not advertise
#   libxrt_tiny.so     nothing fails; multi-device, collectives and the
#                      non-elementwise numerics skip by name
#   libxrt_minimal.so  nothing fails (README's example plugin)
# and that the suite can fail: a copy of the minimal plugin that adds
# wrongly, and one whose query_support lies, must each fail by name (and
# one that accepts only an old StableHLO version must still pass).
# Prints one line per case and exits 1 if any case fails.
# `make test-windows` runs it on the Windows build: XRT_RUN (wine) runs the
# programs, XRT_EXE=.exe, plugins are xrt_NAME.dll (XRT_LIB_PREFIX= and
# XRT_LIB_SUFFIX=.dll) and CC is the mingw-w64 compiler.
set -u

here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."
build=${XRT_BUILD:-build}
cts=$build/xrt-cts${XRT_EXE:-}
# lib NAME: the plugin library xrt_NAME as this platform names it.
lib() { echo "$build/${XRT_LIB_PREFIX-lib}xrt_$1${XRT_LIB_SUFFIX-.so}"; }
for f in "$cts" "$(lib sim)" "$(lib tiny)" "$(lib minimal)"; do
  if [ ! -e "$f" ]; then
    echo "test_cts: $f not built (run make first)" >&2
    exit 2
  fi
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/xrt_cts.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
failures=0

# run NAME ARGS...: runs the suite, keeping its output and exit status.
run() {
  name=$1
  shift
  ${XRT_RUN:-} "$cts" "$@" >"$tmp/$name.raw" 2>&1
  echo $? >"$tmp/$name.rc"
  tr -d '\r' <"$tmp/$name.raw" >"$tmp/$name.out" # Windows ends lines CRLF
}

# starts FILE PREFIX: whether a line of FILE starts with PREFIX (a fixed
# string).
starts() {
  awk -v p="$2" 'index($0, p) == 1 { found = 1 } END { exit !found }' "$1"
}

# expect NAME WANT_EXIT [+PREFIX | -PREFIX]...: the run NAME exited
# WANT_EXIT, and its output has a line starting with every +PREFIX and
# none starting with a -PREFIX.
expect() {
  name=$1 want=$2
  shift 2
  got=$(cat "$tmp/$name.rc")
  ok=1
  [ "$got" -eq "$want" ] || { ok=0; echo "  exit $got, want $want"; }
  for pat in "$@"; do
    p=${pat#?}
    case $pat in
      +*) starts "$tmp/$name.out" "$p" || { ok=0; echo "  missing: $p"; } ;;
      -*) if starts "$tmp/$name.out" "$p"; then
            ok=0; echo "  unexpected: $p"
          fi ;;
    esac
  done
  if [ $ok -eq 1 ]; then
    echo "PASS $name"
  else
    echo "FAIL $name"
    sed 's/^/  | /' "$tmp/$name.out" | head -120
    failures=$((failures + 1))
  fi
}

# summary NAME: the summary line's counts agree with the PASS/FAIL/SKIP
# lines above it.
summary() {
  name=$1
  out=$tmp/$name.out
  p=$(grep -c '^PASS ' "$out") f=$(grep -c '^FAIL ' "$out")
  s=$(grep -c '^SKIP ' "$out")
  if grep -qx "xrt-cts: $p passed, $f failed, $s skipped" "$out"; then
    echo "PASS $name.summary ($p passed, $f failed, $s skipped)"
  else
    echo "FAIL $name.summary: no line 'xrt-cts: $p passed, $f failed, $s skipped'"
    tail -3 "$out" | sed 's/^/  | /'
    failures=$((failures + 1))
  fi
}

# --- the simulator: all pass; skips only for what it does not advertise ---
run sim "$(lib sim)"
expect sim 0 -"FAIL " +"PASS basic.load" +"PASS basic.devices" \
  +"PASS buffers.roundtrip.f32" +"PASS buffers.roundtrip.f4e2m1fn" \
  +"PASS buffers.roundtrip.c128" +"PASS buffers.copy_device" \
  +"PASS compile.query_support" +"PASS execute.async_events" \
  +"PASS multi.execute_multi" +"PASS collectives.all_reduce" \
  +"PASS collectives.all_gather" +"PASS collectives.collective_permute" \
  +"PASS faults.execute" +"PASS numerics.dot_general.f32" \
  +"PASS numerics.divide.s32.xla_edges" +"PASS numerics.compare_select.f32"
summary sim
if grep '^SKIP ' "$tmp/sim.out" | grep -qv '(not advertised)$'; then
  echo "FAIL sim.skips: a skip other than a capability the simulator lacks"
  grep '^SKIP ' "$tmp/sim.out" | sed 's/^/  | /'
  failures=$((failures + 1))
else
  echo "PASS sim.skips"
fi

# --- the tiny plugin: no failure; what it lacks skips by name ---
run tiny "$(lib tiny)"
expect tiny 0 -"FAIL " +"PASS basic.info" +"PASS basic.exclusive" \
  +"PASS buffers.roundtrip.f32" +"PASS buffers.roundtrip.s32" \
  +"SKIP buffers.roundtrip.f64: element type f64 (not advertised)" \
  +"PASS execute.add.f32" +"PASS execute.multiply.s32" \
  +"SKIP multi.execute_multi: capability MULTI_DEVICE (not advertised)" \
  +"SKIP collectives.all_reduce: capability MULTI_DEVICE (not advertised)" \
  +"SKIP numerics.dot_general.f32: query_support: NO: stablehlo.dot_general at dot_general.f32.mlir:2:8" \
  +"SKIP numerics.reduce.sum.f32: query_support: NO: stablehlo.reduce at reduce.sum.f32.mlir:3:8"
summary tiny

# --- README's minimal plugin ---
run minimal "$(lib minimal)"
expect minimal 0 -"FAIL " +"PASS basic.load" +"PASS basic.info" \
  +"PASS basic.client" +"PASS basic.devices" +"PASS basic.topology" \
  +"PASS execute.add.f32" \
  +"SKIP execute.multiply.f32: query_support: NO: stablehlo.multiply"
summary minimal

# --- a PJRT plugin through xrt_pjrt.c: libxrt_pjrt.so (the simulator as a
# PJRT plugin) passes every test the simulator passes directly, except
# skips for what PJRT cannot express, each named: element types PJRT 0.60
# lacks, fault injection (PJRT has none) ---
pjrt=$build/${XRT_LIB_PREFIX-lib}xrt_pjrt${XRT_LIB_SUFFIX-.so}
if [ -e "$pjrt" ]; then
  run pjrt "$pjrt"
  expect pjrt 0 -"FAIL " +"PASS basic.load" +"PASS basic.devices" \
    +"PASS basic.topology" +"PASS buffers.roundtrip.f32" \
    +"PASS buffers.roundtrip.c128" +"PASS buffers.copy_device" \
    +"PASS compile.query_support" +"PASS execute.async_events" \
    +"PASS multi.execute_multi" +"PASS collectives.all_reduce" \
    +"PASS collectives.all_gather" +"PASS collectives.collective_permute" \
    +"PASS numerics.dot_general.f32" +"PASS numerics.divide.s32.xla_edges" \
    +"SKIP buffers.roundtrip.f4e2m1fn: element type f4e2m1fn (not advertised)" \
    +"SKIP faults.execute: capability FAULT_INJECTION (not advertised)"
  summary pjrt
  # What the simulator passed that this run did not pass: only the named
  # skips may differ.
  lost=$(grep '^PASS ' "$tmp/sim.out" | cut -d' ' -f2 | while read -r n; do
    grep -qx "PASS $n" "$tmp/pjrt.out" && continue
    grep "^SKIP $n: " "$tmp/pjrt.out" | grep -qE ': (element type (f8e8m0fnu|f6e2m3fn|f6e3m2fn|f4e2m1fn)|capability FAULT_INJECTION) \(not advertised\)$' && continue
    echo "$n"
  done)
  if [ -n "$lost" ]; then
    echo "FAIL pjrt.vs_sim: passed on the simulator, not through PJRT:" $lost
    failures=$((failures + 1))
  else
    echo "PASS pjrt.vs_sim"
  fi
  run pjrt_devices2 "$pjrt" --devices 2 --filter collectives.
  expect pjrt_devices2 0 +"xrt-cts: 3 passed, 0 failed, 0 skipped"
else
  echo "SKIP pjrt: $pjrt not built"
fi

# --- options: --filter and --devices ---
run filter "$(lib sim)" --filter numerics.divide
expect filter 0 +"PASS numerics.divide.s32" +"PASS numerics.divide.s32.xla_edges" \
  +"xrt-cts: 2 passed, 0 failed, 0 skipped"
run devices2 "$(lib sim)" --devices 2 --filter collectives.
expect devices2 0 +"xrt-cts: 3 passed, 0 failed, 0 skipped"

# --- bad input: no plugin, a missing file, a file that is not a library ---
run usage
expect usage 2
run missing "$tmp/no-such-plugin.so"
expect missing 1 +"FAIL basic.load: xrt_context_load_plugin: NOT_FOUND" \
  +"xrt-cts: 0 passed, 1 failed, 0 skipped"
echo "not a library" >"$tmp/junk.so"
run junk "$tmp/junk.so"
expect junk 1 +"FAIL basic.load: xrt_context_load_plugin: INVALID_ARGUMENT"

# --- the suite fails plugins that are wrong ---
cc=${CC:-cc}
sed 's/r\[j\] = a\[j\] + b\[j\]/r[j] = a[j] - b[j]/' examples/plugin_minimal.c \
  >"$tmp/wrong.c"
# The liar answers YES for every op but compiles only what it can.
cat >"$tmp/liar.c" <<'EOF'
#include "xrt.h"
static int liar_op_support(void *client, const xrt_ir_module *module,
                           int32_t func, const xrt_ir_op *op,
                           xrt_plugin_error *why) {
  (void)client, (void)module, (void)func, (void)op, (void)why;
  return XRT_SUPPORT_YES;
}
EOF
sed 's/\.op_support = mini_op_support,/.op_support = liar_op_support,/' \
  examples/plugin_minimal.c >>"$tmp/liar.c"
# An old plugin: it accepts StableHLO 1.0.0 only, older than xrt's parser,
# so the suite states that version in its programs, and must still pass.
sed -e 's/out->stablehlo_min = NULL;/out->stablehlo_min = "1.0.0";/' \
    -e 's/out->stablehlo_max = NULL;/out->stablehlo_max = "1.0.0";/' \
    examples/plugin_minimal.c >"$tmp/old.c"
if cmp -s "$tmp/wrong.c" examples/plugin_minimal.c ||
   [ "$(grep -c '"1.0.0";' "$tmp/old.c")" -ne 2 ] ||
   ! grep -q liar_op_support, "$tmp/liar.c"; then
  echo "FAIL mutants: examples/plugin_minimal.c changed; update the seds"
  failures=$((failures + 1))
elif $cc -std=c11 -I. -shared -fPIC "$tmp/wrong.c" -o "$tmp/libwrong.so" &&
     $cc -std=c11 -I. -shared -fPIC "$tmp/liar.c" -o "$tmp/libliar.so" &&
     $cc -std=c11 -I. -shared -fPIC "$tmp/old.c" -o "$tmp/libold.so"; then
  run wrong "$tmp/libwrong.so"
  expect wrong 1 +"PASS basic.devices" +"FAIL execute.add.f32: result[0] = "
  run liar "$tmp/libliar.so"
  expect liar 1 \
    +"FAIL execute.multiply.f32: query_support said YES but xrt_compile_program failed"
  run old "$tmp/libold.so"
  expect old 0 -"FAIL " +"PASS compile.type_error" +"PASS compile.query_support" \
    +"PASS compile.stablehlo_version" +"PASS execute.add.f32"
else
  echo "FAIL mutants: $cc could not build the mutant plugins"
  failures=$((failures + 1))
fi

if [ $failures -ne 0 ]; then
  echo "test_cts: $failures case(s) failed"
  exit 1
fi
echo "test_cts: all cases passed"
