#!/bin/sh
# Checks the build dependencies of xrt and installs them on Debian/Ubuntu
# when run as root:
#   cmocka  - unit-test framework for test/test_*.c
#   xxHash  - fast hashing (compile-cache keys)
#   cmake, pkgconf - test/test_consumers.sh builds consumers with them
#   DLPack  - dlpack.h, which test/test_dlpack.c checks xrt against
# Called by `make test` and `make run`.
#
# `tools/deps.sh bench [ORT_DIR]` (called by `make bench` and `make
# bench-models`) does the same for the benchmarks' baselines: python3-numpy
# and python3-torch (for /usr/bin/python3) and libopenblas-dev, and npm's
# onnxruntime-node in ORT_DIR.  Missing ones only make their baselines
# skip, so it never fails.
set -eu

# A parallel make may run two of these at once, and apt-get takes one at a
# time: each waits for the one before it.
if [ -z "${XRT_DEPS_LOCKED:-}" ] && command -v flock >/dev/null 2>&1; then
  XRT_DEPS_LOCKED=1 exec flock "${TMPDIR:-/tmp}/xrt-deps.lock" sh "$0" "$@"
fi

# Installs the Debian packages given when run as root (then exits 0), else
# prints the command that would (then exits 1).
install_or_tell() {
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y --no-install-recommends "$@"
    exit 0
  fi
  echo "tools/deps.sh: install them with:"
  echo "  sudo apt-get update && sudo apt-get install -y $*"
  exit 1
}

# `tools/deps.sh blas` (called by `make test-blas`): libopenblas-dev, the
# CBLAS that an XRT_BLAS=1 build links.
if [ "${1:-}" = blas ]; then
  for f in /usr/lib/*/libopenblas.so /usr/lib/libopenblas.so; do
    [ -e "$f" ] && exit 0
  done
  echo "tools/deps.sh: missing for make test-blas: libopenblas-dev"
  install_or_tell libopenblas-dev
fi

# `tools/deps.sh docs` (called by `make docs`): doxygen, for the API
# reference.
if [ "${1:-}" = docs ]; then
  command -v doxygen >/dev/null 2>&1 && exit 0
  echo "tools/deps.sh: missing for make docs: doxygen"
  install_or_tell doxygen
fi

# `tools/deps.sh windows` (called by `make test-windows`): the mingw-w64
# cross compiler (POSIX thread model) and wine64 to run what it builds,
# plus the host headers the Windows tests compile against (cmocka.h,
# xxhash.h, dlpack.h: the packages of the Linux build).
if [ "${1:-}" = windows ]; then
  PKGS="gcc-mingw-w64-x86-64 wine64 libcmocka-dev libxxhash-dev libdlpack-dev"
  missing=""
  command -v x86_64-w64-mingw32-gcc-posix >/dev/null 2>&1 ||
    missing="$missing x86_64-w64-mingw32-gcc-posix"
  command -v wine64 >/dev/null 2>&1 || [ -x /usr/lib/wine/wine64 ] ||
    missing="$missing wine64"
  for h in cmocka.h xxhash.h dlpack/dlpack.h; do
    [ -f /usr/include/$h ] || missing="$missing $h"
  done
  [ -z "$missing" ] && exit 0
  echo "tools/deps.sh: missing for make test-windows:$missing"
  install_or_tell $PKGS
fi

# `tools/deps.sh fuzz` (called by `make fuzz`): clang with libFuzzer and
# the sanitizer runtimes (Debian 12: clang, libclang-rt-14-dev); checked by
# building an empty fuzz target.  `tools/deps.sh valgrind` (called by
# `make test-valgrind`): valgrind.
if [ "${1:-}" = fuzz ] || [ "${1:-}" = valgrind ]; then
  if [ "$1" = fuzz ]; then
    PKGS="clang libclang-rt-14-dev"
    probe() {
      command -v clang >/dev/null 2>&1 &&
        echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n)
              { (void)d; (void)n; return 0; }' |
        clang -x c -fsanitize=fuzzer,address,undefined - \
          -o /tmp/xrt-deps-fuzz.$$ >/dev/null 2>&1
      r=$?
      rm -f /tmp/xrt-deps-fuzz.$$
      return $r
    }
  else
    PKGS="valgrind"
    probe() { command -v valgrind >/dev/null 2>&1; }
  fi
  probe && exit 0
  echo "tools/deps.sh: missing for make $1: $PKGS (or they do not work)"
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update
    apt-get install -y --no-install-recommends $PKGS
    probe && exit 0
    echo "tools/deps.sh: still missing after installing $PKGS"
    exit 1
  fi
  echo "tools/deps.sh: install them with:"
  echo "  sudo apt-get update && sudo apt-get install -y $PKGS"
  exit 1
fi

# `tools/deps.sh mpi` (called by `make test-mpi` and `make bench-mpi`):
# Open MPI (mpicc, mpirun) for xrt_mpi.c and its tests, plus cmocka.
if [ "${1:-}" = mpi ]; then
  PKGS="libopenmpi-dev openmpi-bin libcmocka-dev"
  missing=""
  command -v mpicc >/dev/null 2>&1 || missing="$missing mpicc"
  command -v mpirun >/dev/null 2>&1 || missing="$missing mpirun"
  [ -f /usr/include/cmocka.h ] || missing="$missing cmocka.h"
  [ -z "$missing" ] && exit 0
  echo "tools/deps.sh: missing for make test-mpi:$missing"
  install_or_tell $PKGS
fi

# `tools/deps.sh coverage` (called by `make coverage`): gcovr, which reads
# gcc's coverage counts and writes the per-file figures and the HTML
# report, plus what `make test` needs.
if [ "${1:-}" = coverage ]; then
  command -v gcovr >/dev/null 2>&1 && exit 0
  echo "tools/deps.sh: missing for make coverage: gcovr"
  install_or_tell gcovr
fi

if [ "${1:-}" = bench ]; then
  # `tools/deps.sh bench ORT_DIR` also npm-installs onnxruntime-node (ONNX
  # Runtime's CPU library, for bench-models) into ORT_DIR, without its
  # install script (which fetches GPU files).  Never fails: a missing
  # baseline only skips.
  ort_dir=${2:-}
  if [ -n "$ort_dir" ] && [ ! -d "$ort_dir/node_modules/onnxruntime-node/bin" ]; then
    if command -v npm >/dev/null 2>&1 && command -v node >/dev/null 2>&1; then
      mkdir -p "$ort_dir" &&
        (cd "$ort_dir" && npm install --ignore-scripts --no-audit --no-fund \
           --loglevel=error onnxruntime-node >/dev/null) ||
        echo "tools/deps.sh: npm install onnxruntime-node failed; the ONNX Runtime baseline will skip"
    else
      echo "tools/deps.sh: node and npm are missing; the ONNX Runtime baseline will skip"
      echo "  (sudo apt-get install -y nodejs npm)"
    fi
  fi
  PKGS="python3-numpy python3-torch libopenblas-dev"
  missing=""
  /usr/bin/python3 -c 'import numpy' >/dev/null 2>&1 || missing="$missing numpy"
  /usr/bin/python3 -c 'import torch' >/dev/null 2>&1 || missing="$missing torch"
  blas=""
  for f in /usr/lib/*/libopenblas.so /usr/lib/libopenblas.so; do
    [ -e "$f" ] && blas=1
  done
  [ -n "$blas" ] || missing="$missing libopenblas"
  [ -z "$missing" ] && exit 0
  echo "tools/deps.sh: missing for the benchmark baselines:$missing"
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    if apt-get update && apt-get install -y --no-install-recommends $PKGS; then
      exit 0
    fi
    echo "tools/deps.sh: installing them failed; their baselines will skip"
    exit 0
  fi
  echo "tools/deps.sh: install them with:"
  echo "  sudo apt-get update && sudo apt-get install -y $PKGS"
  exit 0
fi

PKGS="libcmocka-dev libxxhash-dev cmake pkgconf libdlpack-dev"
missing=""
[ -f /usr/include/cmocka.h ] || missing="$missing cmocka.h"
[ -f /usr/include/xxhash.h ] || missing="$missing xxhash.h"
[ -f /usr/include/dlpack/dlpack.h ] || missing="$missing dlpack/dlpack.h"
# test/test_consumers.sh builds consumers with CMake and pkg-config.
command -v cmake >/dev/null 2>&1 || missing="$missing cmake"
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
[ -z "$missing" ] && exit 0

echo "tools/deps.sh: missing:$missing"
install_or_tell $PKGS
