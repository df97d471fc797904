#!/bin/sh
# test_consumers.sh - xrt used from other projects, as README's
# "Installing and using xrt from other projects" describes it.  In a
# temporary directory:
#   (a) make install PREFIX=...; a consumer built with pkg-config against
#       the shared library (run with LD_LIBRARY_PATH) and the static one;
#       make install DESTDIR=... stages under DESTDIR
#   (b) a CMake project that does add_subdirectory(<this checkout>)
#   (c) CMake projects that do find_package(xrt): against the make install
#       (shared and static), and against a `cmake --install` of the CMake
#       build of (b)
#   (d) plain vendoring: xrt.h, xrt.c, xrt_sim.c copied beside app.c and
#       compiled with one cc line; with xrt_cache.c too (the disk cache)
#       as objects, which must define only xrt_* names
#   then make uninstall, which must leave no file of xrt behind (and
#   nothing else touched).
# Each consumer runs a small StableHLO program and checks its result.
# Environment: XRT_BUILD (the build directory, default build), CC,
# XRT_SANFLAGS (sanitizer flags the build used: consumers of the installed
# libraries need them too).  Needs cmake and pkg-config (tools/deps.sh).
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
build=${XRT_BUILD:-build}
cc=${CC:-cc}
san=${XRT_SANFLAGS:-}
make=${MAKE:-make}
for tool in cmake pkg-config; do
  if ! command -v $tool >/dev/null 2>&1; then
    echo "test_consumers: $tool is missing (run tools/deps.sh as root)" >&2
    exit 2
  fi
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/xrt_consumers.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT INT TERM
failures=0
log=$tmp/log

pass() { echo "PASS $1"; }
fail() {
  echo "FAIL $1"
  sed 's/^/  | /' "$log" | tail -n 30
  failures=$((failures + 1))
}
# step NAME COMMAND...: runs the command, output to $log; fails NAME on error.
step() {
  name=$1
  shift
  if "$@" >"$log" 2>&1; then return 0; fi
  fail "$name"
  return 1
}

version=$(sed -n 's/^#define XRT_VERSION_STRING "\([^"]*\)"/\1/p' "$root/xrt.h")
major=$(sed -n 's/^#define XRT_VERSION_MAJOR \([0-9]*\).*/\1/p' "$root/xrt.h")

# The consumer: y = x * x + 1 on the simulator, checked against the same
# sum computed here; exit 0 and "ok" only when every element matches.
cat >"$tmp/app.c" <<'APP'
#include <stdio.h>
#include <string.h>
#include "xrt.h"

static const char *src =
    "func.func @main(%x: tensor<5xf32>) -> tensor<5xf32> {\n"
    "  %one = stablehlo.constant dense<1.0> : tensor<5xf32>\n"
    "  %sq = stablehlo.multiply %x, %x : tensor<5xf32>\n"
    "  %y = stablehlo.add %sq, %one : tensor<5xf32>\n"
    "  func.return %y : tensor<5xf32>\n"
    "}\n";

int main(void) {
  const float x[5] = {-2, -0.5f, 0, 1.5f, 3};
  float y[5] = {0};
  const xrt_shape shape = {.dtype = XRT_F32, .rank = 1, .dims = {5}};
  xrt_client *c = NULL;
  xrt_executable *e = NULL;
  xrt_buffer *in = NULL, *out = NULL;
  xrt_status s = xrt_client_create(NULL, &c);
  xrt_device *d = s ? NULL : xrt_client_device(c, 0);
  if (!s) s = xrt_compile(c, src, strlen(src), NULL, &e);
  if (!s) s = xrt_buffer_from_host(c, d, &shape, x, &in);
  if (!s) s = xrt_execute(e, d, &in, 1, &out, 1, NULL);
  if (!s) s = xrt_buffer_to_host(out, y, sizeof y);
  if (s) {
    printf("error: %s\n", xrt_last_error());
  } else {
    for (int i = 0; i < 5; i++)
      if (y[i] != x[i] * x[i] + 1.0f) {
        printf("y[%d] = %g, want %g\n", i, y[i], x[i] * x[i] + 1.0f);
        s = XRT_INTERNAL;
      }
    if (strcmp(xrt_client_platform(c), "sim") != 0) s = XRT_INTERNAL;
    if (strcmp(XRT_VERSION_STRING, XRT_EXPECT_VERSION) != 0) s = XRT_INTERNAL;
  }
  if (!s) printf("ok\n");
  xrt_client_release(c);
  return s ? 1 : 0;
}
APP
appdef="-DXRT_EXPECT_VERSION=\"$version\""

# run_app NAME BINARY [ENV...]: the consumer must print exactly "ok".
run_app() {
  name=$1 bin=$2
  shift 2
  env "$@" "$bin" >"$log" 2>&1
  if [ $? -eq 0 ] && [ "$(cat "$log")" = ok ]; then pass "$name"; else fail "$name"; fi
}
# needs_libxrt BINARY: whether it has a DT_NEEDED entry libxrt.so.MAJOR.
needs_libxrt() {
  LC_ALL=C readelf -d "$1" | grep -q "NEEDED.*\[libxrt\.so\.$major\]"
}

# A CMake consumer project: find_package or add_subdirectory.
write_cmake_project() {
  dir=$1 how=$2
  mkdir -p "$dir"
  cp "$tmp/app.c" "$dir/app.c"
  cat >"$dir/CMakeLists.txt" <<CM
cmake_minimum_required(VERSION 3.13)
project(consumer C)
$how
add_executable(app app.c)
target_compile_definitions(app PRIVATE XRT_EXPECT_VERSION="$version")
target_link_libraries(app PRIVATE xrt::xrt)
CM
}
# Builds of all of xrt take most of this script's time: one job per core.
jobs=$(getconf _NPROCESSORS_ONLN 2>/dev/null || echo 2)
# cmake_build NAME SRC BIN [CMAKE ARGS...]
cmake_build() {
  name=$1 src=$2 bin=$3
  shift 3
  step "$name (configure)" cmake -S "$src" -B "$bin" -DCMAKE_C_COMPILER="$cc" \
    -DCMAKE_BUILD_TYPE= -DCMAKE_C_FLAGS="-O0 $san" \
    -DCMAKE_EXE_LINKER_FLAGS="$san" -DCMAKE_SHARED_LINKER_FLAGS="$san" "$@" &&
    step "$name (build)" cmake --build "$bin" --parallel "$jobs"
}

prefix=$tmp/prefix
mkdir -p "$prefix/lib"
echo "not xrt's" >"$prefix/lib/other.txt"

# ---- (a) make install + pkg-config ----
if step "make install" "$make" -C "$root" BUILD="$build" install PREFIX="$prefix"; then
  pass "make install"
  export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
  got=$(pkg-config --modversion xrt 2>&1)
  if [ "$got" = "$version" ]; then pass "pkg-config --modversion"; else
    echo "got '$got', want '$version'" >"$log"; fail "pkg-config --modversion"; fi
  # shellcheck disable=SC2046
  if step "pkg-config shared (build)" $cc -std=c11 -O0 $san $appdef "$tmp/app.c" \
       $(pkg-config --cflags --libs xrt) -o "$tmp/app_shared"; then
    if needs_libxrt "$tmp/app_shared"; then
      run_app "pkg-config shared" "$tmp/app_shared" LD_LIBRARY_PATH="$prefix/lib"
    else
      readelf -d "$tmp/app_shared" >"$log" 2>&1; fail "pkg-config shared (links libxrt.so.$major)"
    fi
  fi
  static_libs=$(pkg-config --static --libs xrt | sed 's/-lxrt/-Wl,-Bstatic -lxrt -Wl,-Bdynamic/')
  # shellcheck disable=SC2086
  if step "pkg-config static (build)" $cc -std=c11 -O0 $san $appdef "$tmp/app.c" \
       $(pkg-config --cflags xrt) $static_libs -o "$tmp/app_static"; then
    if needs_libxrt "$tmp/app_static"; then
      echo "links libxrt.so" >"$log"; fail "pkg-config static (no libxrt.so)"
    else
      run_app "pkg-config static" "$tmp/app_static"
    fi
  fi
  run=$("$prefix/bin/xrt" version 2>&1)
  case $run in
    *"$version"*) pass "installed xrt version" ;;
    *) echo "$run" >"$log"; fail "installed xrt version" ;;
  esac
  # The installed soname chain: libxrt.so -> libxrt.so.MAJOR -> the file.
  if [ "$(readlink "$prefix/lib/libxrt.so")" = "libxrt.so.$major" ] &&
     [ "$(readlink "$prefix/lib/libxrt.so.$major")" = "libxrt.so.$version" ] &&
     LC_ALL=C readelf -d "$prefix/lib/libxrt.so.$version" | grep -q "SONAME.*\[libxrt\.so\.$major\]"
  then pass "soname libxrt.so.$major"; else ls -l "$prefix/lib" >"$log"; fail "soname"; fi
  # The tools and the simulator plugin, when the build made them.
  for f in bin/xrt-cts lib/xrt/libxrt_sim.so; do
    case $build in /*) src=$build ;; *) src=$root/$build ;; esac
    src=$src/$(basename "$f")
    [ -f "$src" ] || continue
    if cmp -s "$src" "$prefix/$f"; then pass "installed $f"; else
      echo "$prefix/$f is missing or differs from $src" >"$log"; fail "installed $f"; fi
  done
  # Only the public API is exported.
  others=$(nm -D --defined-only "$prefix/lib/libxrt.so.$version" | awk '{print $3}' | grep -v '^xrt_[a-z]')
  if [ -z "$others" ]; then pass "exports only xrt_*"; else
    echo "$others" >"$log"; fail "exports only xrt_*"; fi

  # ---- (c) find_package against the make install ----
  write_cmake_project "$tmp/fp" "find_package(xrt $version REQUIRED)"
  if cmake_build "find_package shared" "$tmp/fp" "$tmp/fp/build" \
       -DCMAKE_PREFIX_PATH="$prefix"; then
    if needs_libxrt "$tmp/fp/build/app"; then
      run_app "find_package (make install) shared" "$tmp/fp/build/app" LD_LIBRARY_PATH="$prefix/lib"
    else readelf -d "$tmp/fp/build/app" >"$log" 2>&1; fail "find_package shared (links libxrt.so)"; fi
  fi
  if cmake_build "find_package static" "$tmp/fp" "$tmp/fp/build_static" \
       -DCMAKE_PREFIX_PATH="$prefix" -DXRT_USE_STATIC_LIBS=ON; then
    if needs_libxrt "$tmp/fp/build_static/app"; then
      echo "links libxrt.so" >"$log"; fail "find_package static (no libxrt.so)"
    else run_app "find_package (make install) static" "$tmp/fp/build_static/app"; fi
  fi
  # A version this is not compatible with is refused.
  write_cmake_project "$tmp/fp_bad" "find_package(xrt $((major + 1)).0 REQUIRED)"
  if cmake -S "$tmp/fp_bad" -B "$tmp/fp_bad/build" -DCMAKE_PREFIX_PATH="$prefix" \
       >"$log" 2>&1; then fail "find_package refuses version $((major + 1)).0"
  else pass "find_package refuses version $((major + 1)).0"; fi
fi

# ---- make install DESTDIR=... stages the same files under DESTDIR ----
stage=$tmp/stage
if step "make install DESTDIR" "$make" -C "$root" BUILD="$build" install \
     PREFIX=/opt/xrt DESTDIR="$stage"; then
  if [ -f "$stage/opt/xrt/include/xrt.h" ] &&
     grep -q '^prefix=/opt/xrt$' "$stage/opt/xrt/lib/pkgconfig/xrt.pc" &&
     step "make uninstall DESTDIR" "$make" -C "$root" BUILD="$build" uninstall \
       PREFIX=/opt/xrt DESTDIR="$stage" &&
     [ -z "$(find "$stage" -type f -o -type l)" ]
  then pass "make install/uninstall DESTDIR"
  else find "$stage" >>"$log"; fail "make install/uninstall DESTDIR"; fi
fi

# ---- (b) add_subdirectory(<this checkout>), (c) its cmake --install ----
# One CMake build of all of xrt serves both (each build of it takes most
# of this script's time): the consumer adds this checkout as a
# subdirectory with XRT_INSTALL=ON (off by default there), and a
# `cmake --install` of that build tree installs what one of xrt itself
# does: xrt's install rules are the same in both (the consumer has none).
write_cmake_project "$tmp/sub" "add_subdirectory(\"$root\" xrt)"
prefix2=$tmp/prefix_cmake
if cmake_build "add_subdirectory" "$tmp/sub" "$tmp/sub/build" -DXRT_INSTALL=ON; then
  run_app "add_subdirectory" "$tmp/sub/build/app"
  if step "cmake --install" cmake --install "$tmp/sub/build" --prefix "$prefix2"; then
    write_cmake_project "$tmp/fp2" "find_package(xrt $version REQUIRED)"
    if cmake_build "find_package (cmake install)" "$tmp/fp2" "$tmp/fp2/build" \
         -DCMAKE_PREFIX_PATH="$prefix2"; then
      run_app "find_package (cmake install)" "$tmp/fp2/build/app"
    fi
  fi
fi
# xrt as the top-level project installs by default (configured, not built:
# the build above compiled the same sources with the same rules).
if step "cmake configure of xrt" cmake -S "$root" -B "$tmp/xrt_cmake" \
     -DCMAKE_C_COMPILER="$cc" &&
   grep -q xrtTargets "$tmp/xrt_cmake/cmake_install.cmake"; then
  pass "xrt alone has install rules"
else
  fail "xrt alone has install rules"
fi

# ---- (d) plain vendoring: the top-level files and one cc line ----
# The README's "Vendoring": copy xrt.h, xrt.c and xrt_sim.c (generated
# from src/ by tools/amalgamate.sh), then its cc line (-ldl: dlopen lives
# in libdl before glibc 2.34); with xrt_cache.c for the disk cache.
mkdir -p "$tmp/vendor"
cp "$root/xrt.h" "$root/xrt.c" "$root/xrt_sim.c" "$root/xrt_cache.c" \
  "$tmp/app.c" "$tmp/vendor/"
# Each build is one compiler process: the README's line runs beside the
# disk-cache build (one core each).
(cd "$tmp/vendor" && $cc -std=c11 -O0 $appdef app.c xrt.c xrt_sim.c \
   -lm -lpthread -ldl -o app) >"$tmp/vendor_log" 2>&1 &
vendor_pid=$!
# With xrt_cache.c for the disk cache, as objects: the single files keep
# their internals static, so what they define for the linker is the public
# API (xrt_*) and the few internal functions that cross from xrt.c to
# xrt_cache.c (xrt__*), nothing of the simulator's.
if (cd "$tmp/vendor" && step "vendored with the disk cache (compile)" $cc -std=c11 -O0 \
      -DXRT_HAVE_DISK_CACHE -c xrt.c xrt_sim.c xrt_cache.c &&
    step "vendored with the disk cache (link)" $cc -std=c11 -O0 \
      -DXRT_HAVE_DISK_CACHE $appdef app.c xrt.o xrt_sim.o xrt_cache.o \
      -lm -lpthread -ldl -o app_cache); then
  run_app "vendored with the disk cache" "$tmp/vendor/app_cache"
  if command -v nm >/dev/null 2>&1; then
    extra=$(cd "$tmp/vendor" && nm -g --defined-only xrt.o xrt_sim.o xrt_cache.o |
            awk 'NF == 3 && $3 !~ /^xrt_/ {print $3}')
    if [ -z "$extra" ]; then pass "vendored objects export only xrt_*"; else
      echo "also defined: $extra" >"$log"; fail "vendored objects export only xrt_*"; fi
  fi
fi
if wait $vendor_pid; then
  run_app "vendored" "$tmp/vendor/app"
else
  cp "$tmp/vendor_log" "$log"
  fail "vendored (build)"
fi

# ---- make uninstall: nothing of xrt left, nothing else removed ----
if [ -d "$prefix/include" ]; then
  if step "make uninstall" "$make" -C "$root" BUILD="$build" uninstall PREFIX="$prefix"; then
    left=$(cd "$prefix" && find . -type f -o -type l)
    if [ "$left" = "./lib/other.txt" ]; then pass "make uninstall"; else
      echo "left in the prefix: $left" >"$log"; fail "make uninstall (leaves exactly other.txt)"; fi
  fi
fi

if [ $failures -ne 0 ]; then
  echo "test_consumers: $failures failed"
  exit 1
fi
echo "test_consumers: all passed"
