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
LDLIBS := -lm -lpthread

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

$(LIB_SO): $(PIC_OBJS)
	$(CC) $(LDFLAGS) -shared -o $@ $^ $(LDLIBS)

# ---- the tool, tests and benchmarks: public API, linked with libxrt.a ----

$(XRT_BIN): tools/xrt_main.c $(LIB_A) | $(BUILD)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ $(LIB_A) $(LDLIBS)

# Order-only on deps: cmocka must be installed before the first test
# compiles, even under make -j, without forcing rebuilds every time.
$(BUILD)/test_%: test/test_%.c test/test_util.h $(LIB_A) | $(BUILD) deps
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ $(LIB_A) -lcmocka $(LDLIBS)

$(BUILD)/bench/%: bench/%.c bench/bench_util.h $(LIB_A) | $(BUILD)/bench
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
              test_sharding test_pool test_dispatch test_allreduce_fast
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

clean:
	rm -rf build build-asan build-*

-include $(CORE_OBJS:.o=.d) $(PIC_OBJS:.o=.d) $(BLAS_OBJS:.o=.d)
