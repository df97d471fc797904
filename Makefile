# xrt - GNU make build.  See README.md.
#
#   make            $(BUILD)/libxrt.a, libxrt.so, xrt, xrt-cts, the plugins
#   make run        run examples/mlp.mlir with $(BUILD)/xrt
#   make test       build and run every test (the programs of test/, the
#                   CLI, conformance and consumer scripts, the interpreter
#                   suite)
#   make bench      build and run bench/*.c (prints KEY = NUMBER lines)
#   make asan       the tests under AddressSanitizer + UBSan (SAN=1)
#   make test-tsan  the threaded tests under ThreadSanitizer
#   make test-mpi   test/mpi/ under mpirun -np 2 and 4 (an XRT_MPI=1 build)
#   make bench-mpi  bench/mpi/ under mpirun -np 2
#   make test-valgrind  the test programs under valgrind (portable kernels)
#   make test-blas  test_gemm on an XRT_BLAS=1 build: CBLAS on, off, timed
#   make soak       8 threads of mixed work for SOAK_SECONDS (default 60)
#   make fuzz-smoke each libFuzzer target, fixed seed and runs (CI), in
#                   build-fuzz/; make fuzz-long: random runs of FUZZ_TIME s
#   make windows / test-windows   the mingw-w64 build, tested under wine
#   make install / uninstall / examples / docs
#   make amalgamate          writes xrt.h, xrt.c, xrt_sim.c, xrt_cache.c and
#                            xrt_mpi.c from src/ (check-amalgamation: fails
#                            when the committed ones are out of date)
#   make clean
#
# Code is edited under src/ (src/include: the pieces of xrt.h; src/core,
# src/sim, src/cache, src/mpi; each lists its files in sources.txt); the
# top-level xrt.h and xrt*.c files are generated from them for users who
# vendor xrt.  The build compiles src/
# file by file, so `make -j` scales and an edit rebuilds one object.
#
# Variables: CC (gcc or clang), CFLAGS, WERROR=1 (adds -Werror), SAN=1
# (sanitizers), XRT_MPI=1, XRT_BLAS=1, XRT_DISK_CACHE=0, BUILD (output
# directory).  Each configuration builds in a directory of its own (build,
# build-asan, build-mpi, build-blas, ...), and a change of CC, CFLAGS or
# CPPFLAGS rebuilds what they compiled: objects of different flags never
# mix.  The pieces: mk/config.mk (flags and directories), mk/lib.mk (the
# library, tool and plugins), mk/test.mk, mk/bench.mk, mk/mpi.mk,
# mk/install.mk, mk/fuzz.mk, mk/windows.mk.

.DEFAULT_GOAL := all
include mk/config.mk
include mk/lib.mk
include mk/test.mk
include mk/bench.mk
include mk/mpi.mk
include mk/install.mk
include mk/fuzz.mk
include mk/windows.mk
include mk/coverage.mk
include mk/pjrt_plugin.mk

# ---- the single files users vendor, generated from src/ ----
# xrt.h is what everything includes, so the build itself keeps it in step
# with src/include (a no-op when it already is); the .c files are only
# written by `make amalgamate`.
xrt.h: src/include/sources.txt $(wildcard src/include/*.h) tools/amalgamate.sh
	@sh tools/amalgamate.sh --header

amalgamate:
	sh tools/amalgamate.sh

check-amalgamation:
	sh tools/amalgamate.sh --check

clean:
	rm -rf build build-*

.PHONY: all amalgamate check-amalgamation clean
