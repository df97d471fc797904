# xrt - GNU make build.  See README.md.
#
#   make            build/libxrt.a, build/libxrt.so and build/xrt
#   make run        run examples/mlp.mlir with build/xrt
#   make test       build and run every test/test_*.c, then test/run_interpret.sh
#   make bench      build and run bench/*.c (prints KEY = NUMBER lines)
#   make asan       the tests under AddressSanitizer + UBSan, in build-asan/
#   make test-tsan  the threaded tests under ThreadSanitizer, in build-tsan/
#   make test-mpi   test/mpi/ under mpirun -np 2 and 4 (XRT_MPI=1 build);
#   make bench-mpi  bench/mpi/ under mpirun -np 2
#   make test-valgrind  the test programs under valgrind (portable kernels)
#   make test-blas  test_gemm on an XRT_BLAS build: CBLAS on, off, and timed
#   make soak       8 threads of mixed work for SOAK_SECONDS (default 60)
#   make fuzz-smoke each libFuzzer target for FUZZ_TIME s, in build-fuzz/
#   make clean
#
# Variables: CC (gcc or clang), CFLAGS, WERROR=1 (adds -Werror), SAN=1
# (sanitizers; same as make asan), BUILD (output directory).

CC ?= cc
CFLAGS ?= -std=c11 -O2 -g -Wall -Wextra -Wpedantic
LDLIBS := -lm -lpthread -ldl

ifeq ($(WERROR),1)
  CFLAGS += -Werror
endif

ifeq ($(SAN),1)
  BUILD ?= build-asan
  SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
              -fno-omit-frame-pointer
  # -O1, as the sanitizers' own documentation advises: the instrumented
  # build of the two large translation units compiles in about half the
  # time of -O2, and the suite runs about as fast.
  CFLAGS := $(patsubst -O2,-O1,$(CFLAGS)) $(SANFLAGS)
  LDFLAGS += $(SANFLAGS)
else
  BUILD ?= build
endif

CPPFLAGS += -I. -DXRT_WITH_SIM

# XRT_BLAS=1: the simulator's f32/f64 dot_general calls CBLAS for large
# products (Debian: libopenblas-dev).
ifeq ($(XRT_BLAS),1)
  CPPFLAGS += -DXRT_WITH_CBLAS
  LDLIBS += -lopenblas
endif
# XRT_MPI=1: several processes form one xrt system over MPI (xrt_mpi.c,
# built with mpicc; Debian: libopenmpi-dev openmpi-bin).  `make test-mpi`
# and `make bench-mpi` build their own copy in $(BUILD)-mpi.
ifeq ($(XRT_MPI),1)
  CC := mpicc
  CPPFLAGS += -DXRT_HAVE_MPI
  MPI_SRCS := xrt_mpi.c
endif
# Dependency files of objects only: build/xrt (the tool) and build/xrt.o
# would otherwise both write build/xrt.d.
DEPFLAGS := -MMD -MP

CORE_SRCS := xrt.c xrt_sim.c $(MPI_SRCS)
# The disk compilation cache (xrt_cache.c) is in by default;
# XRT_DISK_CACHE=0 leaves it out.  Code that uses it tests
# XRT_HAVE_DISK_CACHE.
XRT_DISK_CACHE ?= 1
ifeq ($(XRT_DISK_CACHE),1)
  CORE_SRCS += xrt_cache.c
  CPPFLAGS += -DXRT_HAVE_DISK_CACHE
endif
CORE_OBJS := $(CORE_SRCS:%.c=$(BUILD)/%.o)
PIC_OBJS := $(CORE_SRCS:%.c=$(BUILD)/pic/%.o)
LIB_A := $(BUILD)/libxrt.a
LIB_SO := $(BUILD)/libxrt.so
# The shared library's version comes from xrt.h: libxrt.so.MAJOR.MINOR.PATCH
# with soname libxrt.so.MAJOR, and libxrt.so -> libxrt.so.MAJOR -> the file.
XRT_VERSION := $(shell sed -n 's/^\#define XRT_VERSION_STRING "\([^"]*\)"/\1/p' xrt.h)
XRT_SOVERSION := $(shell sed -n 's/^\#define XRT_VERSION_MAJOR \([0-9]*\).*/\1/p' xrt.h)
LIB_SONAME := libxrt.so.$(XRT_SOVERSION)
LIB_SO_REAL := $(BUILD)/libxrt.so.$(XRT_VERSION)
XRT_BIN := $(BUILD)/xrt

TEST_SRCS := $(sort $(wildcard test/test_*.c))
ifneq ($(XRT_DISK_CACHE),1)
  TEST_SRCS := $(filter-out test/test_disk_cache.c,$(TEST_SRCS))
endif
TEST_BINS := $(TEST_SRCS:test/%.c=$(BUILD)/%)
BENCH_SRCS := $(sort $(wildcard bench/*.c))
BENCH_BINS := $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)

.PHONY: all run test asan test-tsan bench bench-deps clean deps
.DEFAULT_GOAL := all

all: $(LIB_A) $(LIB_SO) $(XRT_BIN)

# ---- the library ----

$(BUILD)/%.o: %.c | $(BUILD)
	$(CC) $(CPPFLAGS) $(DEPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/pic/%.o: %.c | $(BUILD)/pic
	$(CC) $(CPPFLAGS) $(DEPFLAGS) $(CFLAGS) -fPIC -c $< -o $@

$(LIB_A): $(CORE_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

# Only xrt_* symbols are exported (tools/libxrt.map).
$(LIB_SO_REAL): $(PIC_OBJS) tools/libxrt.map
	$(CC) $(LDFLAGS) -shared -Wl,-soname,$(LIB_SONAME) \
	  -Wl,--version-script=tools/libxrt.map -o $@ $(PIC_OBJS) $(LDLIBS)

$(LIB_SO): $(LIB_SO_REAL)
	ln -sf libxrt.so.$(XRT_VERSION) $(BUILD)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $@

# ---- device plugins as shared objects ----
# libxrt_sim.so: the simulator on its own.  It calls nothing in xrt.c
# (--no-undefined proves it; not under SAN=1, whose runtime the executable
# provides) and exports only xrt_plugin_get_api (-fvisibility=hidden).
# libxrt_tiny.so: the small test plugin of test/plugin_tiny.c.
SIM_SO := $(BUILD)/libxrt_sim.so
TINY_SO := $(BUILD)/libxrt_tiny.so
PLUGIN_FLAGS := -fPIC -fvisibility=hidden -shared \
                $(if $(filter 1,$(SAN)),,-Wl,--no-undefined)

all: $(SIM_SO)
test: $(TINY_SO)

$(SIM_SO): xrt_sim.c xrt.h | $(BUILD)
	$(CC) -I. -DXRT_PLUGIN_SHARED $(CFLAGS) $(LDFLAGS) $(PLUGIN_FLAGS) \
	  -o $@ xrt_sim.c $(LDLIBS)

$(TINY_SO): test/plugin_tiny.c xrt.h | $(BUILD)
	$(CC) -I. $(CFLAGS) $(LDFLAGS) $(PLUGIN_FLAGS) -o $@ $< $(LDLIBS)

# test_sim_so loads both libraries from $(BUILD).
$(BUILD)/test_sim_so: test/test_sim_so.c test/test_util.h test/spec_util.h $(LIB_A) $(SIM_SO) $(TINY_SO) | $(BUILD) deps
	$(CC) $(CPPFLAGS) -DXRT_TEST_PLUGIN_DIR='"$(BUILD)"' $(CFLAGS) $(LDFLAGS) \
	  $< -o $@ $(LIB_A) -lcmocka $(LDLIBS) -ldl

# test_platform loads the simulator's library from $(BUILD) (on Windows,
# see "Windows x64" below, xrt_sim.dll from $(WIN_BUILD)).
$(BUILD)/test_platform: test/test_platform.c test/test_util.h test/spec_util.h $(LIB_A) $(SIM_SO) | $(BUILD) deps
	$(CC) $(CPPFLAGS) -DXRT_TEST_PLUGIN_DIR='"$(BUILD)"' $(CFLAGS) $(LDFLAGS) \
	  $< -o $@ $(LIB_A) -lcmocka $(LDLIBS)

# ---- the plugin conformance suite and the minimal example plugin ----
# build/xrt-cts PLUGIN.so checks any plugin (test/test_cts.sh runs it on the
# three below); libxrt_minimal.so is examples/plugin_minimal.c, built as its
# header and the README show, plus --no-undefined (not under SAN=1).
CTS_BIN := $(BUILD)/xrt-cts
MINIMAL_SO := $(BUILD)/libxrt_minimal.so

all: $(CTS_BIN) $(MINIMAL_SO)
test: $(CTS_BIN) $(MINIMAL_SO) $(SIM_SO) $(TINY_SO)

$(CTS_BIN): tools/xrt_cts.c $(LIB_A) | $(BUILD)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ $(LIB_A) $(LDLIBS)

$(MINIMAL_SO): examples/plugin_minimal.c xrt.h | $(BUILD)
	$(CC) -I. $(CFLAGS) $(LDFLAGS) -shared -fPIC \
	  $(if $(filter 1,$(SAN)),,-Wl,--no-undefined) -o $@ $<

# ---- fake plugins of test_plugins: test/plugins/fake_*.c, one .so each ----
# They include only xrt.h and link to nothing from xrt (each defines its
# own table).
FAKE_PLUGINS := $(patsubst test/plugins/%.c,$(BUILD)/plugins/%.so,\
                  $(sort $(wildcard test/plugins/fake_*.c)))

$(BUILD)/plugins/%.so: test/plugins/%.c test/plugins/fake_plugin.h xrt.h | $(BUILD)/plugins
	$(CC) -I. $(CFLAGS) $(LDFLAGS) -fPIC -shared -o $@ $<

$(BUILD)/plugins:
	mkdir -p $@

$(BUILD)/test_plugins: test/test_plugins.c test/test_util.h test/spec_util.h $(LIB_A) $(FAKE_PLUGINS) | $(BUILD) deps
	$(CC) $(CPPFLAGS) -DXRT_TEST_FAKE_DIR='"$(BUILD)/plugins"' $(CFLAGS) \
	  $(LDFLAGS) $< -o $@ $(LIB_A) -lcmocka $(LDLIBS)

# ---- the tool, tests and benchmarks: public API, linked with libxrt.a ----

$(XRT_BIN): tools/xrt_main.c $(LIB_A) | $(BUILD)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ $(LIB_A) $(LDLIBS)

# Order-only on deps: cmocka must be installed before the first test
# compiles, even under make -j, without forcing rebuilds every time.
$(BUILD)/test_%: test/test_%.c test/test_util.h test/spec_util.h $(LIB_A) | $(BUILD) deps
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ $(LIB_A) -lcmocka $(LDLIBS)

$(BUILD)/bench/%: bench/%.c bench/bench_util.h test/spec_util.h $(LIB_A) | $(BUILD)/bench
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ $(LIB_A) $(LDLIBS)

# bench_gemm measures against OpenBLAS when it is installed, and a second
# copy of it runs on a library built with XRT_WITH_CBLAS (in $(BUILD)/blas).
HAVE_OPENBLAS := $(if $(wildcard /usr/lib/*/libopenblas.so /usr/lib/libopenblas.so),1)
GEMM_BENCH_BLAS := $(if $(HAVE_OPENBLAS),-DBENCH_HAVE_OPENBLAS -lopenblas)
BLAS_OBJS := $(CORE_SRCS:%.c=$(BUILD)/blas/%.o)
ifeq ($(HAVE_OPENBLAS),1)
  BENCH_BINS += $(BUILD)/bench/bench_gemm_blas
endif

$(BUILD)/bench/bench_gemm: bench/bench_gemm.c bench/bench_util.h $(LIB_A) | $(BUILD)/bench
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ $(LIB_A) $(GEMM_BENCH_BLAS) $(LDLIBS)

$(BUILD)/blas/%.o: %.c | $(BUILD)/blas
	$(CC) $(CPPFLAGS) -DXRT_WITH_CBLAS $(DEPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/blas/libxrt.a: $(BLAS_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/bench/bench_gemm_blas: bench/bench_gemm.c bench/bench_util.h $(BUILD)/blas/libxrt.a | $(BUILD)/bench
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -DBENCH_GEMM_BLAS $< -o $@ $(BUILD)/blas/libxrt.a $(GEMM_BENCH_BLAS) $(LDLIBS)

# test_gemm on the XRT_WITH_CBLAS library, with CBLAS forced on, forced off
# and chosen by timing (the default).
$(BUILD)/blas/test_gemm: test/test_gemm.c test/test_util.h test/spec_util.h $(BUILD)/blas/libxrt.a | $(BUILD)/blas
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ $(BUILD)/blas/libxrt.a -lopenblas -lcmocka $(LDLIBS)

test-blas: deps
	@sh tools/deps.sh blas
	@$(MAKE) --no-print-directory $(BUILD)/blas/test_gemm
	XRT_SIM_BLAS=1 $(BUILD)/blas/test_gemm
	XRT_SIM_BLAS=0 $(BUILD)/blas/test_gemm
	$(BUILD)/blas/test_gemm

.PHONY: test-blas

$(BUILD) $(BUILD)/pic $(BUILD)/bench $(BUILD)/blas:
	mkdir -p $@

# ---- commands ----

deps:
	@sh tools/deps.sh

run: deps $(XRT_BIN)
	$(XRT_BIN) run examples/mlp.mlir

# test/test_consumers.sh installs the shared library too.
test: $(LIB_SO)

# Runs every test even when one fails, then fails if any did.
test: deps $(TEST_BINS) $(XRT_BIN)
	@passed=0; failed=""; \
	for t in $(TEST_BINS); do \
	  echo "== $$t"; \
	  if $$t; then passed=$$((passed + 1)); else failed="$$failed $$t"; fi; \
	done; \
	echo "== test/test_cli.sh"; \
	if XRT_BIN=$(XRT_BIN) sh test/test_cli.sh; then passed=$$((passed + 1)); \
	else failed="$$failed test/test_cli.sh"; fi; \
	echo "== test/test_cts.sh"; \
	if XRT_BUILD=$(BUILD) sh test/test_cts.sh; then passed=$$((passed + 1)); \
	else failed="$$failed test/test_cts.sh"; fi; \
	echo "== test/test_consumers.sh"; \
	if XRT_BUILD=$(BUILD) CC="$(CC)" XRT_SANFLAGS="$(SANFLAGS)" \
	  sh test/test_consumers.sh; then passed=$$((passed + 1)); \
	else failed="$$failed test/test_consumers.sh"; fi; \
	echo "== test/run_interpret.sh"; \
	if XRT_BIN=$(XRT_BIN) sh test/run_interpret.sh; then passed=$$((passed + 1)); \
	else failed="$$failed test/run_interpret.sh"; fi; \
	nfailed=$$(echo $$failed | wc -w); \
	if [ -n "$$failed" ]; then echo "failed:$$failed"; fi; \
	echo "test programs: $$passed passed, $$nfailed failed"; \
	[ -z "$$failed" ]

asan:
	$(MAKE) test SAN=1

# The tests that run work on many threads, under ThreadSanitizer (its own
# build directory and flags; a report fails the run).
TSAN_TESTS := test_async test_threads test_api test_collectives test_pmap \
              test_sharding test_pool test_dispatch test_allreduce_fast \
              test_reshard test_variables test_dlpack test_trace test_plugins \
              test_faults test_cache test_launch_oom test_alloc_fail
TSAN_FLAGS := -std=c11 -O1 -g -fsanitize=thread -fno-omit-frame-pointer \
              -Wall -Wextra -Wpedantic
test-tsan: deps
	$(MAKE) BUILD=build-tsan CFLAGS="$(TSAN_FLAGS)" \
	  LDFLAGS="-fsanitize=thread" $(TSAN_TESTS:%=build-tsan/%)
	@for t in $(TSAN_TESTS); do \
	  echo "== build-tsan/$$t (ThreadSanitizer)"; \
	  TSAN_OPTIONS="halt_on_error=1 exitcode=66 $$TSAN_OPTIONS" \
	    build-tsan/$$t || exit 1; \
	done

# valgrind memcheck over the test programs of $(BUILD) (those of `make
# test`; no rebuild), with the simulator's portable kernels: valgrind 3.19
# stops at the first AVX-512 instruction, so XRT_SIM_ISA=portable keeps the
# run-time dispatch off AVX2/AVX-512.  Any memory error or leak fails it.
# VALGRIND_SKIP: tests left out (none by default; see README "Reliability").
VALGRIND_SKIP ?=
VALGRIND_TESTS := $(filter-out $(VALGRIND_SKIP:%=$(BUILD)/%),$(TEST_BINS))
VALGRIND_FLAGS := --error-exitcode=1 --leak-check=full \
                  --errors-for-leak-kinds=definite,indirect,possible \
                  --show-leak-kinds=definite,indirect,possible --quiet
test-valgrind: deps $(VALGRIND_TESTS)
	@sh tools/deps.sh valgrind
	@passed=0; failed=""; \
	for t in $(VALGRIND_TESTS); do \
	  echo "== $$t (valgrind)"; t0=$$(date +%s); \
	  if XRT_SIM_ISA=portable valgrind $(VALGRIND_FLAGS) $$t; then \
	    passed=$$((passed + 1)); else failed="$$failed $$t"; fi; \
	  echo "== $$t: $$(($$(date +%s) - t0)) s under valgrind"; \
	done; \
	if [ -n "$$failed" ]; then echo "failed under valgrind:$$failed"; fi; \
	echo "valgrind: $$passed passed, $$(echo $$failed | wc -w) failed"; \
	[ -z "$$failed" ]

.PHONY: test-valgrind

# The baselines (numpy, torch, OpenBLAS) are installed first when root.
bench-deps:
	@sh tools/deps.sh bench

bench: bench-deps $(BENCH_BINS)
	@for b in $(BENCH_BINS); do $$b || exit 1; done

# ---- soak: 8 threads of mixed work on shared objects (tools/soak.c) ----
#
#   make soak [SOAK_SECONDS=600]   checks every result and that resident
#                                  memory stays flat; fails otherwise
SOAK_SECONDS ?= 60

$(BUILD)/soak: tools/soak.c test/spec_util.h $(LIB_A) | $(BUILD)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ $(LIB_A) $(LDLIBS)

soak: $(BUILD)/soak
	$(BUILD)/soak $(SOAK_SECONDS)

.PHONY: soak

# ---- several processes over MPI (xrt_mpi.c; see "Multi-process" in xrt.h) ----
#
#   make test-mpi    builds with XRT_MPI=1 in $(BUILD)-mpi and runs each
#                    test/mpi/test_mpi_*.c under mpirun with 2 and 4 processes
#   make bench-mpi   bench/mpi/bench_mpi*.c under mpirun with 2 processes
MPI_BUILD := $(BUILD)-mpi
MPIRUN := mpirun --allow-run-as-root --oversubscribe
MPI_NPROCS ?= 2 4
MPI_TESTS := $(patsubst test/mpi/%.c,%,$(sort $(wildcard test/mpi/test_mpi_*.c)))
MPI_BENCHES := $(patsubst bench/mpi/%.c,%,$(sort $(wildcard bench/mpi/bench_mpi*.c)))

$(BUILD)/mpi/test_%: test/mpi/test_%.c test/mpi/mpi_util.h test/test_util.h \
  test/spec_util.h $(LIB_A) | $(BUILD)/mpi deps
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ $(LIB_A) -lcmocka $(LDLIBS)

$(BUILD)/mpi/bench_%: bench/mpi/bench_%.c bench/bench_util.h $(LIB_A) | $(BUILD)/mpi
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ $(LIB_A) $(LDLIBS)

$(BUILD)/mpi:
	mkdir -p $@

deps-mpi:
	@sh tools/deps.sh mpi

# A test that hangs (a lost peer) is killed after 5 minutes.  Under SAN=1,
# LeakSanitizer ignores what Open MPI itself keeps (test/mpi/lsan.supp;
# the slow unwinder sees through its unloaded components).
MPI_SANENV := ASAN_OPTIONS="fast_unwind_on_malloc=0 $$ASAN_OPTIONS" \
  LSAN_OPTIONS="suppressions=$(CURDIR)/test/mpi/lsan.supp $$LSAN_OPTIONS"
test-mpi: deps-mpi $(XRT_BIN)
	$(MAKE) XRT_MPI=1 BUILD=$(MPI_BUILD) $(MPI_TESTS:%=$(MPI_BUILD)/mpi/%) \
	  $(MPI_BUILD)/xrt
	@for t in $(MPI_TESTS); do for np in $(MPI_NPROCS); do \
	  echo "== $(MPIRUN) -np $$np $(MPI_BUILD)/mpi/$$t"; \
	  $(MPI_SANENV) timeout 300 $(MPIRUN) -x ASAN_OPTIONS -x LSAN_OPTIONS \
	    -np $$np $(MPI_BUILD)/mpi/$$t || exit 1; \
	done; done
	@echo "== test/mpi/test_cli_mpi.sh"; $(MPI_SANENV) XRT_BIN=$(MPI_BUILD)/xrt \
	  XRT_BIN_PLAIN=$(XRT_BIN) MPIRUN="$(MPIRUN) -x ASAN_OPTIONS -x LSAN_OPTIONS" \
	  sh test/mpi/test_cli_mpi.sh
	@echo "== test/mpi/run_interpret_mpi.sh (xrt check --mpi, -np $(MPI_NPROCS))"; \
	  $(MPI_SANENV) XRT_BIN=$(MPI_BUILD)/xrt MPI_NPROCS="$(MPI_NPROCS)" \
	  MPIRUN="$(MPIRUN) -x ASAN_OPTIONS -x LSAN_OPTIONS" sh test/mpi/run_interpret_mpi.sh

bench-mpi: deps-mpi
	$(MAKE) XRT_MPI=1 BUILD=$(MPI_BUILD) $(MPI_BENCHES:%=$(MPI_BUILD)/mpi/%)
	@for b in $(MPI_BENCHES); do \
	  timeout 600 $(MPIRUN) -np 2 $(MPI_BUILD)/mpi/$$b || exit 1; \
	done

.PHONY: test-mpi bench-mpi deps-mpi

# ---- install, examples, API reference ----
#
#   make install [PREFIX=/usr/local] [DESTDIR=]   headers, libraries, tools,
#                                     xrt.pc, CMake package config
#   make uninstall [PREFIX=...]       removes exactly those files
#   make examples                     builds and runs examples/*.c
#   make docs                         HTML API reference in $(BUILD)/docs/html

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PLUGINDIR ?= $(LIBDIR)/xrt
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
CMAKEDIR ?= $(LIBDIR)/cmake/xrt
INSTALL ?= install

XRT_MINOR := $(shell sed -n 's/^\#define XRT_VERSION_MINOR \([0-9]*\).*/\1/p' xrt.h)
# xrt.pc and the CMake files carry the install paths.
INSTALL_SUBST = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
  -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(XRT_VERSION)|g' \
  -e 's|@SOVERSION@|$(XRT_SOVERSION)|g' -e 's|@MINOR@|$(XRT_MINOR)|g' \
  -e "s|@SIZEOF_VOID_P@|$$($(CC) -dM -E - </dev/null | sed -n 's/^\#define __SIZEOF_POINTER__ //p')|g"
# Tools and plugins that other targets build: installed when they exist.
INSTALL_OPT_TOOLS := xrt-cts
INSTALL_OPT_PLUGINS := libxrt_sim.so

install: all
	$(INSTALL) -d $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR) \
	  $(DESTDIR)$(BINDIR) $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(CMAKEDIR)
	$(INSTALL) -m 644 xrt.h $(DESTDIR)$(INCLUDEDIR)/xrt.h
	$(INSTALL) -m 644 $(LIB_A) $(DESTDIR)$(LIBDIR)/libxrt.a
	$(INSTALL) -m 755 $(LIB_SO_REAL) $(DESTDIR)$(LIBDIR)/libxrt.so.$(XRT_VERSION)
	ln -sf libxrt.so.$(XRT_VERSION) $(DESTDIR)$(LIBDIR)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $(DESTDIR)$(LIBDIR)/libxrt.so
	$(INSTALL) -m 755 $(XRT_BIN) $(DESTDIR)$(BINDIR)/xrt
	@for f in $(INSTALL_OPT_TOOLS); do \
	  if [ -f $(BUILD)/$$f ]; then \
	    echo "$(INSTALL) -m 755 $(BUILD)/$$f $(DESTDIR)$(BINDIR)/$$f"; \
	    $(INSTALL) -m 755 $(BUILD)/$$f $(DESTDIR)$(BINDIR)/$$f || exit 1; \
	  fi; done
	@for f in $(INSTALL_OPT_PLUGINS); do \
	  if [ -f $(BUILD)/$$f ]; then \
	    echo "$(INSTALL) -m 755 $(BUILD)/$$f $(DESTDIR)$(PLUGINDIR)/$$f"; \
	    $(INSTALL) -d $(DESTDIR)$(PLUGINDIR) && \
	    $(INSTALL) -m 755 $(BUILD)/$$f $(DESTDIR)$(PLUGINDIR)/$$f || exit 1; \
	  fi; done
	$(INSTALL_SUBST) xrt.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/xrt.pc
	$(INSTALL_SUBST) cmake/xrtConfig-make.cmake.in > $(DESTDIR)$(CMAKEDIR)/xrtConfig.cmake
	$(INSTALL_SUBST) cmake/xrtConfigVersion-make.cmake.in \
	  > $(DESTDIR)$(CMAKEDIR)/xrtConfigVersion.cmake

# Only xrt's own directories are removed (when empty), not bin/, lib/...
uninstall:
	rm -f $(DESTDIR)$(INCLUDEDIR)/xrt.h $(DESTDIR)$(LIBDIR)/libxrt.a \
	  $(DESTDIR)$(LIBDIR)/libxrt.so $(DESTDIR)$(LIBDIR)/$(LIB_SONAME) \
	  $(DESTDIR)$(LIBDIR)/libxrt.so.$(XRT_VERSION) $(DESTDIR)$(BINDIR)/xrt \
	  $(INSTALL_OPT_TOOLS:%=$(DESTDIR)$(BINDIR)/%) \
	  $(INSTALL_OPT_PLUGINS:%=$(DESTDIR)$(PLUGINDIR)/%) \
	  $(DESTDIR)$(PKGCONFIGDIR)/xrt.pc $(DESTDIR)$(CMAKEDIR)/xrtConfig.cmake \
	  $(DESTDIR)$(CMAKEDIR)/xrtConfigVersion.cmake
	@for d in $(DESTDIR)$(PLUGINDIR) $(DESTDIR)$(CMAKEDIR); do \
	  if [ -d $$d ]; then rmdir $$d 2>/dev/null || echo "kept $$d (not empty)"; fi; \
	done

# examples/plugin_*.c are plugins (shared libraries), not programs.
EXAMPLE_SRCS := $(filter-out examples/plugin_%.c,$(sort $(wildcard examples/*.c)))
EXAMPLE_BINS := $(EXAMPLE_SRCS:examples/%.c=$(BUILD)/examples/%)
# load_plugin runs on each of these plugin libraries.
EXAMPLE_PLUGINS := $(SIM_SO) $(MINIMAL_SO)

$(BUILD)/examples/%: examples/%.c $(LIB_A) | $(BUILD)/examples
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ $(LIB_A) $(LDLIBS)

$(BUILD)/examples:
	mkdir -p $@

examples: $(EXAMPLE_BINS) $(EXAMPLE_PLUGINS)
	@for e in $(EXAMPLE_BINS); do \
	  case $$e in \
	    */load_plugin) \
	      for p in $(EXAMPLE_PLUGINS); do \
	        echo "== $$e $$p"; $$e $$p || exit 1; done ;; \
	    *) echo "== $$e"; $$e || exit 1 ;; \
	  esac; \
	done

# The reference is built from xrt.h (and README.md as its main page);
# tools/check_docs.sh fails the target when doxygen finds a public
# function, macro, type, enum or struct without a comment.
docs:
	@sh tools/deps.sh docs
	mkdir -p $(BUILD)/docs
	XRT_DOCS_DIR=$(BUILD)/docs XRT_VERSION=$(XRT_VERSION) doxygen Doxyfile
	@sh tools/check_docs.sh $(BUILD)/docs/warnings.log

.PHONY: install uninstall examples docs

# ---- fuzzing (libFuzzer, clang only; see fuzz/README.md) ----
#
#   make fuzz        fuzz/fuzz_*.c -> build-fuzz/fuzz_* (ASan + UBSan)
#   make fuzz-smoke  each target FUZZ_TIME seconds over its corpus in
#                    build-fuzz/corpus/<target>/ (seeded by
#                    fuzz/make_corpus.sh); fails on any finding.  A failed
#                    malloc returns NULL (allocator_may_return_null=1):
#                    xrt must report it, as it would outside ASan.
FUZZ_BUILD ?= build-fuzz
FUZZ_CC := clang
FUZZ_TIME ?= 60
# targets fuzz-smoke runs at once (one core each)
FUZZ_JOBS ?= 2
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := -std=c11 -g -O1 -Wall -Wextra -Wpedantic \
               -fno-omit-frame-pointer $(FUZZ_SAN)
FUZZ_TARGETS := $(patsubst fuzz/%.c,%,$(sort $(wildcard fuzz/fuzz_*.c)))
ifneq ($(XRT_DISK_CACHE),1)
  FUZZ_TARGETS := $(filter-out fuzz_cache_file,$(FUZZ_TARGETS))
endif
FUZZ_OBJS := $(CORE_SRCS:%.c=$(FUZZ_BUILD)/obj/%.o)

# clang, libFuzzer and the sanitizer runtimes: installed first when root.
fuzz-deps:
	@sh tools/deps.sh fuzz

$(FUZZ_BUILD)/obj/%.o: %.c xrt.h | $(FUZZ_BUILD)/obj fuzz-deps
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz_util.h $(FUZZ_OBJS) xrt.h | $(FUZZ_BUILD)/obj fuzz-deps
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_OBJS) \
	  -o $@ $(LDLIBS)

$(FUZZ_BUILD)/obj:
	mkdir -p $@

.PRECIOUS: $(FUZZ_BUILD)/obj/%.o

fuzz: $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/%)

fuzz-smoke: fuzz
	sh fuzz/make_corpus.sh $(FUZZ_BUILD)/corpus
	sh fuzz/smoke.sh $(FUZZ_BUILD) $(FUZZ_TIME) $(FUZZ_JOBS) $(FUZZ_TARGETS)

.PHONY: fuzz fuzz-smoke fuzz-deps

# ---- Windows x64: cross-built with mingw-w64, tested under wine ----
#
#   make windows        $(WIN_BUILD) (build-win/): xrt.dll with its import
#                       library xrt.lib, libxrt.a, xrt.exe (linked to
#                       xrt.dll), xrt-cts.exe, the plugins xrt_sim.dll,
#                       xrt_tiny.dll, xrt_minimal.dll, and test_*.exe
#   make test-windows   builds, then runs every test program and the
#                       conformance suite under wine (WINE, default wine64;
#                       its prefix is $(WIN_BUILD)/wineprefix)
#
# Debian's toolchain (tools/deps.sh windows installs it): gcc-mingw-w64 in
# its POSIX thread model, so pthreads come from winpthreads, linked
# statically (-static) like libgcc: the programs need no mingw DLLs.
# -muse-unaligned-vector-move: GCC does not align the Windows x64 stack to
# 32 bytes for AVX spills, so aligned moves there could fault.
# Debian ships no mingw cmocka: the tests compile against the host's
# cmocka.h through test/win/include/cmocka.h and link
# test/win/cmocka_mingw.c, a small implementation of what they use.
WIN_BUILD ?= build-win
WIN_CC ?= x86_64-w64-mingw32-gcc-posix
WIN_AR ?= x86_64-w64-mingw32-ar
WIN_OBJDUMP ?= x86_64-w64-mingw32-objdump
WIN_NM ?= x86_64-w64-mingw32-nm
WINE ?= $(firstword $(shell command -v wine64 wine 2>/dev/null) /usr/lib/wine/wine64)
WIN_CFLAGS ?= -std=c11 -O2 -g -Wall -Wextra -Wpedantic \
              $(if $(filter 1,$(WERROR)),-Werror)
WIN_CFLAGS += -Wa,-muse-unaligned-vector-move
WIN_CPPFLAGS := -I. -DXRT_WITH_SIM -D__USE_MINGW_ANSI_STDIO=1 \
                $(filter -DXRT_HAVE_DISK_CACHE,$(CPPFLAGS))
WIN_LDFLAGS := -static
WIN_LDLIBS := -lm -lpthread
# Host headers the tests and the cache use, and no other (-isystem: the
# wrapper's #include_next): cmocka.h, xxhash.h (header-only), dlpack.h.
WIN_TEST_INC := -isystem test/win/include -isystem $(WIN_BUILD)/include
WIN_SRCS := $(filter-out $(MPI_SRCS),$(CORE_SRCS))
WIN_OBJS := $(WIN_SRCS:%.c=$(WIN_BUILD)/obj/%.o)
WIN_DLL_OBJS := $(WIN_SRCS:%.c=$(WIN_BUILD)/dll/%.o)
WIN_LIB_A := $(WIN_BUILD)/libxrt.a
WIN_DLL := $(WIN_BUILD)/xrt.dll
WIN_PLUGINS := $(WIN_BUILD)/xrt_sim.dll $(WIN_BUILD)/xrt_tiny.dll \
               $(WIN_BUILD)/xrt_minimal.dll
# Left out on Windows, each for a POSIX-only feature it tests:
#   test_trace    fork() and /dev/full
#   test_plugins  symbolic links (wine's CreateSymbolicLinkW creates
#                 nothing; Windows needs a privilege for them) and the
#                 POSIX "name:path" lists; test_platform covers loading,
#                 scans, XRT_PLUGINS and file identity on Windows instead
# (test_disk_cache runs, without its one fork() test; its two-thread test
# covers the same races on Windows.)
WIN_TEST_SKIP := test_trace test_plugins
WIN_TESTS := $(filter-out $(WIN_TEST_SKIP:%=$(WIN_BUILD)/%.exe),\
               $(TEST_SRCS:test/%.c=$(WIN_BUILD)/%.exe))
WIN_HOST_HEADERS := $(WIN_BUILD)/include/cmocka.h \
                    $(WIN_BUILD)/include/xxhash.h \
                    $(WIN_BUILD)/include/dlpack/dlpack.h

windows: $(WIN_DLL) $(WIN_LIB_A) $(WIN_BUILD)/xrt.exe $(WIN_BUILD)/xrt-cts.exe \
         $(WIN_PLUGINS) $(WIN_TESTS)

$(WIN_BUILD)/obj/%.o: %.c xrt.h $(WIN_HOST_HEADERS) | $(WIN_BUILD)/obj
	$(WIN_CC) $(WIN_CPPFLAGS) -isystem $(WIN_BUILD)/include $(DEPFLAGS) \
	  $(WIN_CFLAGS) -c $< -o $@

$(WIN_BUILD)/dll/%.o: %.c xrt.h $(WIN_HOST_HEADERS) | $(WIN_BUILD)/dll
	$(WIN_CC) $(WIN_CPPFLAGS) -isystem $(WIN_BUILD)/include -DXRT_BUILD_DLL \
	  $(DEPFLAGS) $(WIN_CFLAGS) -c $< -o $@

$(WIN_LIB_A): $(WIN_OBJS)
	rm -f $@
	$(WIN_AR) rcs $@ $^

# xrt.dll exports exactly the XRT_API functions of xrt.h; the check
# below fails the build when an xrt_* function is defined but not exported
# (a declaration without XRT_API).
$(WIN_DLL): $(WIN_DLL_OBJS)
	$(WIN_CC) $(WIN_LDFLAGS) -shared -o $@ $^ \
	  -Wl,--out-implib,$(WIN_BUILD)/xrt.lib $(WIN_LDLIBS)
	@$(WIN_OBJDUMP) -p $@ | awk '/\[Ordinal\/Name Pointer\] Table/ {t = 1; next} \
	  t && NF == 0 {t = 0} t {print $$NF}' | sort >$(WIN_BUILD)/xrt.exports
	@$(WIN_NM) -g --defined-only $(WIN_DLL_OBJS) | \
	  awk '$$2 == "T" && $$3 ~ /^xrt_[^_]/ {print $$3}' | sort -u >$(WIN_BUILD)/xrt.defined
	@missing=$$(comm -23 $(WIN_BUILD)/xrt.defined $(WIN_BUILD)/xrt.exports); \
	if [ -n "$$missing" ]; then \
	  echo "xrt.dll does not export (add XRT_API to their declarations):" $$missing; \
	  rm -f $@; exit 1; fi

$(WIN_BUILD)/xrt.exe: tools/xrt_main.c xrt.h $(WIN_DLL)
	$(WIN_CC) $(WIN_CPPFLAGS) -DXRT_DLL $(WIN_CFLAGS) $(WIN_LDFLAGS) $< -o $@ \
	  $(WIN_BUILD)/xrt.lib $(WIN_LDLIBS)

$(WIN_BUILD)/xrt-cts.exe: tools/xrt_cts.c xrt.h $(WIN_LIB_A)
	$(WIN_CC) $(WIN_CPPFLAGS) $(WIN_CFLAGS) $(WIN_LDFLAGS) $< -o $@ \
	  $(WIN_LIB_A) $(WIN_LDLIBS)

# Plugins: self-contained DLLs exporting only xrt_plugin_get_api.
$(WIN_BUILD)/xrt_sim.dll: xrt_sim.c xrt.h $(WIN_HOST_HEADERS) | $(WIN_BUILD)
	$(WIN_CC) -I. -isystem $(WIN_BUILD)/include -D__USE_MINGW_ANSI_STDIO=1 \
	  -DXRT_PLUGIN_SHARED $(DEPFLAGS) $(WIN_CFLAGS) $(WIN_LDFLAGS) -shared \
	  -o $@ $< $(WIN_LDLIBS)

$(WIN_BUILD)/xrt_tiny.dll: test/plugin_tiny.c xrt.h | $(WIN_BUILD)
	$(WIN_CC) -I. -D__USE_MINGW_ANSI_STDIO=1 $(WIN_CFLAGS) $(WIN_LDFLAGS) \
	  -shared -o $@ $< $(WIN_LDLIBS)

$(WIN_BUILD)/xrt_minimal.dll: examples/plugin_minimal.c xrt.h | $(WIN_BUILD)
	$(WIN_CC) -I. -D__USE_MINGW_ANSI_STDIO=1 $(WIN_CFLAGS) $(WIN_LDFLAGS) \
	  -shared -o $@ $<

$(WIN_BUILD)/include/%.h: | $(WIN_BUILD)/include/dlpack
	ln -sf /usr/include/$*.h $@

$(WIN_BUILD)/cmocka_mingw.o: test/win/cmocka_mingw.c $(WIN_HOST_HEADERS) | $(WIN_BUILD)
	$(WIN_CC) $(WIN_CPPFLAGS) $(WIN_TEST_INC) $(WIN_CFLAGS) -c $< -o $@

# The tests, unchanged: test/win/posix_compat.h (forced in) and
# test/win/include/dlfcn.h give them the few POSIX calls they make.
WIN_TEST_DEFS := -DXRT_TEST_PLUGIN_DIR='"$(WIN_BUILD)"' \
                 -DXRT_TEST_SIM_LIB='"xrt_sim.dll"' \
                 -DXRT_TEST_TINY_LIB='"xrt_tiny.dll"'
$(WIN_BUILD)/test_%.exe: test/test_%.c test/test_util.h test/spec_util.h \
    test/win/posix_compat.h test/win/include/dlfcn.h $(WIN_LIB_A) \
    $(WIN_BUILD)/cmocka_mingw.o $(WIN_HOST_HEADERS) | $(WIN_BUILD)
	$(WIN_CC) $(WIN_CPPFLAGS) $(WIN_TEST_INC) $(WIN_TEST_DEFS) \
	  -include test/win/posix_compat.h $(WIN_CFLAGS) $(WIN_LDFLAGS) $< -o $@ \
	  $(WIN_BUILD)/cmocka_mingw.o $(WIN_LIB_A) $(WIN_LDLIBS)

$(WIN_BUILD)/test_sim_so.exe $(WIN_BUILD)/test_platform.exe: \
    $(WIN_BUILD)/xrt_sim.dll $(WIN_BUILD)/xrt_tiny.dll

$(WIN_BUILD) $(WIN_BUILD)/obj $(WIN_BUILD)/dll $(WIN_BUILD)/include/dlpack:
	mkdir -p $@

# Runs every test even when one fails, then fails if any did; a test that
# runs longer than WIN_TEST_TIMEOUT seconds fails (a hang must not stall CI).
WIN_ENV = WINEPREFIX=$(abspath $(WIN_BUILD))/wineprefix WINEDEBUG=-all
WIN_TEST_TIMEOUT ?= 300
test-windows: windows-deps
	$(MAKE) windows
	@$(WIN_ENV) $(WINE) wineboot -i >/dev/null 2>&1 || true
	@export $(WIN_ENV); passed=0; failed=""; \
	for t in $(WIN_TESTS); do \
	  echo "== $$t (wine)"; \
	  if timeout $(WIN_TEST_TIMEOUT) $(WINE) $$t; then passed=$$((passed + 1)); \
	  else failed="$$failed $$t"; fi; \
	done; \
	echo "== test/test_cts.sh (wine)"; \
	if XRT_BUILD=$(WIN_BUILD) XRT_RUN="$(WINE)" XRT_EXE=.exe \
	  XRT_LIB_PREFIX= XRT_LIB_SUFFIX=.dll CC="$(WIN_CC) -static" \
	  sh test/test_cts.sh; then passed=$$((passed + 1)); \
	else failed="$$failed test/test_cts.sh"; fi; \
	nfailed=$$(echo $$failed | wc -w); \
	if [ -n "$$failed" ]; then echo "failed:$$failed"; fi; \
	echo "windows test programs: $$passed passed, $$nfailed failed"; \
	[ -z "$$failed" ]

windows-deps:
	@sh tools/deps.sh windows

.PHONY: windows test-windows windows-deps
.PRECIOUS: $(WIN_BUILD)/obj/%.o $(WIN_BUILD)/dll/%.o $(WIN_BUILD)/include/%.h
-include $(WIN_OBJS:.o=.d) $(WIN_DLL_OBJS:.o=.d) $(WIN_BUILD)/xrt_sim.d

clean:
	rm -rf build build-asan build-*

-include $(CORE_OBJS:.o=.d) $(PIC_OBJS:.o=.d) $(BLAS_OBJS:.o=.d)
