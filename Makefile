# xrt - GNU make build.  See README.md.
#
#   make            build/libxrt.a, build/libxrt.so and build/xrt
#   make run        run examples/mlp.mlir with build/xrt
#   make test       build and run every test/test_*.c, then test/run_interpret.sh
#   make bench      build and run bench/*.c (prints KEY = NUMBER lines)
#   make asan       the tests under AddressSanitizer + UBSan, in build-asan/
#   make test-tsan  the threaded tests under ThreadSanitizer, in build-tsan/
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
  CFLAGS += $(SANFLAGS)
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
# Dependency files of objects only: build/xrt (the tool) and build/xrt.o
# would otherwise both write build/xrt.d.
DEPFLAGS := -MMD -MP

CORE_SRCS := xrt.c xrt_sim.c
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
              test_reshard test_variables test_dlpack test_trace test_plugins
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

# The baselines (numpy, torch, OpenBLAS) are installed first when root.
bench-deps:
	@sh tools/deps.sh bench

bench: bench-deps $(BENCH_BINS)
	@for b in $(BENCH_BINS); do $$b || exit 1; done

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
FUZZ_BUILD := build-fuzz
FUZZ_CC := clang
FUZZ_TIME ?= 60
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := -std=c11 -g -O1 -Wall -Wextra -Wpedantic \
               -fno-omit-frame-pointer $(FUZZ_SAN)
FUZZ_TARGETS := $(patsubst fuzz/%.c,%,$(sort $(wildcard fuzz/fuzz_*.c)))
FUZZ_OBJS := $(CORE_SRCS:%.c=$(FUZZ_BUILD)/obj/%.o)

$(FUZZ_BUILD)/obj/%.o: %.c xrt.h | $(FUZZ_BUILD)/obj
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz_util.h $(FUZZ_OBJS) xrt.h | $(FUZZ_BUILD)/obj
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_OBJS) \
	  -o $@ $(LDLIBS)

$(FUZZ_BUILD)/obj:
	mkdir -p $@

.PRECIOUS: $(FUZZ_BUILD)/obj/%.o

fuzz: $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/%)

fuzz-smoke: fuzz
	sh fuzz/make_corpus.sh $(FUZZ_BUILD)/corpus
	@for t in $(FUZZ_TARGETS); do \
	  echo "== $(FUZZ_BUILD)/$$t ($(FUZZ_TIME) s)"; \
	  mkdir -p $(FUZZ_BUILD)/findings/$$t; \
	  ASAN_OPTIONS="allocator_may_return_null=1 $$ASAN_OPTIONS" \
	  $(FUZZ_BUILD)/$$t -max_total_time=$(FUZZ_TIME) -timeout=10 \
	    -rss_limit_mb=2048 -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_BUILD)/findings/$$t/ \
	    $(FUZZ_BUILD)/corpus/$$t || exit 1; \
	done

.PHONY: fuzz fuzz-smoke

clean:
	rm -rf build build-asan build-*

-include $(CORE_OBJS:.o=.d) $(PIC_OBJS:.o=.d) $(BLAS_OBJS:.o=.d)
