# mk/test.mk - the test programs (test/test_*.c, public API, linked with
# libxrt.so, a few with libxrt.a), `make test`, the sanitizer,
# ThreadSanitizer, valgrind, BLAS and soak runs.

TEST_SRCS := $(sort $(wildcard test/test_*.c))
ifneq ($(XRT_DISK_CACHE),1)
  TEST_SRCS := $(filter-out test/test_disk_cache.c,$(TEST_SRCS))
endif
TEST_BINS := $(TEST_SRCS:test/%.c=$(BUILD)/%)
TEST_HDRS := $(wildcard test/*.h)

# The test programs link libxrt.so (found through their run path): a link
# against libxrt.a copies all of xrt and its debug information into each
# of a hundred programs, half of a test build's time (under ASan, 37 MB a
# program).  The few that call functions the shared library does not
# export (xrt__* helpers, or the PJRT plugin's sources compiled in) link
# the static library.
TEST_STATIC := test_bytecode test_bytecode_crafted test_os_edges \
               test_pjrt_dispatch test_pjrt_plugin_alloc
TEST_LINK = $(LIB_SO) -Wl,-rpath,$(abspath $(BUILD))
$(TEST_STATIC:%=$(BUILD)/%): TEST_LINK = $(LIB_A)
$(TEST_STATIC:%=$(BUILD)/%): $(LIB_A)

$(BUILD)/test_%: test/test_%.c $(TEST_HDRS) $(LIB_SO) | deps
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ $(TEST_LINK) -lcmocka $(LDLIBS)

# test_sim_so and test_platform load plugin libraries from $(BUILD).
$(BUILD)/test_sim_so: $(SIM_SO) $(TINY_SO)
$(BUILD)/test_platform: $(SIM_SO)
$(BUILD)/test_sim_so $(BUILD)/test_platform: \
  private CPPFLAGS += -DXRT_TEST_PLUGIN_DIR='"$(BUILD)"'

# test_pjrt_abi checks src/pjrt/pjrt_abi.h; against upstream's PJRT header
# too (test/pjrt_abi_upstream.c, linked in) when ../shared/pjrt has it.
PJRT_UPSTREAM_DIR := ../shared/pjrt
$(BUILD)/test_pjrt_abi: src/pjrt/pjrt_abi.h test/pjrt_abi_fields.h
ifneq ($(wildcard $(PJRT_UPSTREAM_DIR)/pjrt_c_api.h),)
$(BUILD)/pjrt_abi_upstream.o: test/pjrt_abi_upstream.c test/pjrt_abi_fields.h \
  $(PJRT_UPSTREAM_DIR)/pjrt_c_api.h $(FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) -I$(PJRT_UPSTREAM_DIR) $(CFLAGS) -c $< -o $@
$(BUILD)/test_pjrt_abi: $(BUILD)/pjrt_abi_upstream.o
$(BUILD)/test_pjrt_abi: private CPPFLAGS += -DXRT_TEST_HAVE_UPSTREAM_PJRT
$(BUILD)/test_pjrt_abi: private LDLIBS += $(BUILD)/pjrt_abi_upstream.o
endif

# test_pjrt_host: a PJRT host in C that dlopens xrt as a PJRT plugin, the
# path XRT_TEST_PJRT_PLUGIN (the environment's XRT_PJRT_PLUGIN overrides).
$(BUILD)/test_pjrt_host: $(BUILD)/libxrt_pjrt.so test/pjrt_proto_util.h \
  src/pjrt/pjrt_abi.h
$(BUILD)/test_pjrt_host: \
  private CPPFLAGS += -DXRT_TEST_PJRT_PLUGIN='"$(BUILD)/libxrt_pjrt.so"'

# test_pjrt_plugin_alloc compiles the plugin's files in (with its test
# hooks: XP_ALLOC_HOOKS).
$(BUILD)/test_pjrt_plugin_alloc: $(PJRT_PLUGIN_SRCS) src/pjrt_plugin/internal.h \
  src/pjrt/pjrt_abi.h test/pjrt_proto_util.h
# test_pjrt_dispatch too (to see which way a call went).
$(BUILD)/test_pjrt_dispatch: $(PJRT_PLUGIN_SRCS) src/pjrt_plugin/internal.h \
  src/pjrt/pjrt_abi.h test/pjrt_proto_util.h

# test_bytecode reads StableHLO's versioned artifacts and their twins.
$(BUILD)/test_bytecode: \
  private CPPFLAGS += -DXRT_TEST_VHLO_DIR='"$(abspath ../shared/stablehlo/vhlo)"'
$(BUILD)/test_bytecode_write: \
  private CPPFLAGS += -DXRT_TEST_VHLO_DIR='"$(abspath ../shared/stablehlo/vhlo)"' \
  -DXRT_TEST_INTERPRET_DIR='"$(abspath ../shared/stablehlo/interpret)"'

# test_dynamic_shapes compiles JAX's shape-polymorphic exports.
$(BUILD)/test_dynamic_conv_strides: private CPPFLAGS += \
  -DXRT_TEST_DYNAMIC_DIR='"$(abspath ../shared/stablehlo/dynamic)"'
$(BUILD)/test_dynamic_shapes: test/dynamic_required.txt
$(BUILD)/test_dynamic_shapes: private CPPFLAGS += \
  -DXRT_TEST_DYNAMIC_DIR='"$(abspath ../shared/stablehlo/dynamic)"' \
  -DXRT_TEST_DYNAMIC_REQUIRED='"$(abspath test/dynamic_required.txt)"'

# Fake plugins of test_plugins: test/plugins/fake_*.c, one .so each; they
# include only xrt.h and link to nothing from xrt.
FAKE_PLUGINS := $(patsubst test/plugins/%.c,$(BUILD)/plugins/%.so,\
                  $(sort $(wildcard test/plugins/fake_*.c)))

$(BUILD)/plugins/%.so: test/plugins/%.c test/plugins/fake_plugin.h xrt.h $(FLAGS_FILE)
	@mkdir -p $(@D)
	$(CC) -I. $(CFLAGS) $(LDFLAGS) -fPIC -shared -o $@ $<

$(BUILD)/test_plugins: $(FAKE_PLUGINS)
$(BUILD)/test_plugins: private CPPFLAGS += -DXRT_TEST_FAKE_DIR='"$(BUILD)/plugins"'

# test_print round-trips the StableHLO test corpora (../shared/stablehlo;
# skipped when absent) and examples/.
$(BUILD)/test_print: private CPPFLAGS += \
  -DXRT_TEST_STABLEHLO_DIR='"$(abspath ../shared/stablehlo)"' \
  -DXRT_TEST_EXAMPLES_DIR='"$(abspath examples)"'

# test_pjrt_adapter: PJRT plugins through src/pjrt: the fake PJRT plugin
# (test/plugins/fake_pjrt.c) and, when this tree builds it,
# libxrt_pjrt.so (xrt's simulator as a PJRT plugin).
$(BUILD)/plugins/fake_pjrt.so: src/pjrt/pjrt_abi.h
$(BUILD)/test_pjrt_adapter: $(BUILD)/plugins/fake_pjrt.so \
  $(BUILD)/plugins/fake_nosym.so $(if $(PJRT_PLUGIN_SRCS),$(BUILD)/libxrt_pjrt.so)
$(BUILD)/test_pjrt_adapter: private CPPFLAGS += \
  -DXRT_TEST_FAKE_DIR='"$(BUILD)/plugins"' \
  -DXRT_TEST_PJRT_SO='"$(BUILD)/libxrt_pjrt.so"'
# test_cts.sh runs xrt-cts on libxrt_pjrt.so through the adapter.
test: $(if $(PJRT_PLUGIN_SRCS),$(BUILD)/libxrt_pjrt.so)

# Runs every test even when one fails, then fails if any did.
# test_consumers.sh builds xrt again several ways (make install, CMake,
# vendoring) to check how other projects consume it: the plain build's run
# checks that; the SAN=1 and COV=1 runs leave it out (a minute or two each,
# and it runs no library code the test programs do not).
# It is the longest of them (its builds of xrt), so it starts first, beside
# the test programs, rather than last.
TEST_CONSUMERS := $(if $(filter 1,$(SAN) $(COV)),,"env XRT_BUILD=$(BUILD) CC='$(CC)' XRT_SANFLAGS='$(SANFLAGS)' sh test/test_consumers.sh")
TEST_INTERPRET := "env XRT_BIN=$(XRT_BIN) sh test/run_interpret.sh"
TEST_SCRIPTS := $(TEST_INTERPRET) "env XRT_BIN=$(XRT_BIN) sh test/test_cli.sh" \
  "env XRT_BUILD=$(BUILD) sh test/test_cts.sh"
# The order the runs start the test programs in: the longest first (as CI
# measured them in its several configurations), the scripts before them,
# so that no long one starts last beside a core with nothing left to do
# (the interpreter suite, last, left a core idle for 5-15 s a run).
TEST_LONG := test_reshard test_sim_conv_gemm test_sim_gemm_cache \
             test_alloc_fail test_fusion test_sim_conv_dw test_gemm \
             test_many_io test_chlo_trig test_sim_threads_conv test_pool \
             test_sim_gemm_epilogue test_sim_collectives_wide
# $(call test_order,PROGRAMS[,DIR[,SUFFIX]]): PROGRAMS (DIR/test_x SUFFIX;
# DIR defaults to $(BUILD)) in that order.
test_order = $(foreach t,$(TEST_LONG),$(filter $(or $(2),$(BUILD))/$(t)$(3),$(1))) \
             $(filter-out $(TEST_LONG:%=$(or $(2),$(BUILD))/%$(3)),$(1))
test: $(TEST_BINS) $(XRT_BIN) $(LIB_SO) $(CTS_BIN) $(MINIMAL_SO) $(SIM_SO) $(TINY_SO)
	@sh tools/run_tests.sh "test programs" -j $(TEST_JOBS) $(TEST_CONSUMERS) \
	  $(TEST_SCRIPTS) $(call test_order,$(TEST_BINS))

# The test programs and the interpreter suite again with the simulator's
# kernels held to TEST_ISA (portable or avx2, see XRT_SIM_ISA): make
# coverage runs them so that every kernel variant counts, not only the
# best one this CPU has.  TEST_ISA_SKIP: those that run no kernel an ISA
# changes (bytecode, printing, caches, plugin tables, argument counts,
# injected allocation failures, resharding, thread pools, collectives and
# pmap over small arrays); the figures of make coverage are the same
# without them.
TEST_ISA ?= portable
TEST_ISA_SKIP := test_bytecode test_bytecode_write test_bytecode_serialize \
                 test_vhlo_print test_print test_trace test_many_io \
                 test_alloc_fail test_disk_cache test_cache test_plugins \
                 test_pjrt_plugin_alloc test_reshard test_pool \
                 test_allreduce_fast test_sim_collectives_wide test_threads \
                 test_pmap test_parse_sharding test_npy test_launch_oom \
                 test_types test_variables test_sharding test_collectives
test-isa: $(TEST_BINS) $(XRT_BIN) $(LIB_SO) $(SIM_SO) $(TINY_SO)
	@XRT_SIM_ISA=$(TEST_ISA) sh tools/run_tests.sh \
	  "test programs (XRT_SIM_ISA=$(TEST_ISA))" -j $(TEST_JOBS) \
	  $(TEST_INTERPRET) \
	  $(call test_order,$(filter-out $(TEST_ISA_SKIP:%=$(BUILD)/%),$(TEST_BINS)))

asan:
	$(MAKE) test SAN=1

# The tests that run work on many threads, under ThreadSanitizer (their
# own build directory and flags; a report fails the run).
TSAN_TESTS := test_async test_threads test_api test_collectives test_pmap \
              test_sharding test_pool test_dispatch test_allreduce_fast \
              test_reshard test_variables test_dlpack test_trace test_plugins \
              test_faults test_cache test_launch_oom test_alloc_fail
TSAN_TESTS += test_pjrt_host
TSAN_TESTS += test_pjrt_adapter
TSAN_TESTS += test_pjrt_dispatch
TSAN_TESTS += test_sim_gemm_epilogue
# (-g1: line tables, what a report prints; see SAN=1 in mk/config.mk)
TSAN_FLAGS := -std=c11 -O1 -g1 -fsanitize=thread -fno-omit-frame-pointer \
              -Wall -Wextra -Wpedantic
test-tsan: | deps
	$(MAKE) BUILD=build-tsan CFLAGS="$(TSAN_FLAGS)" \
	  LDFLAGS="-fsanitize=thread" $(TSAN_TESTS:%=build-tsan/%)
	@TSAN_OPTIONS="halt_on_error=1 exitcode=66 $$TSAN_OPTIONS" \
	  sh tools/run_tests.sh "ThreadSanitizer" -j $(TEST_JOBS) $(TSAN_TESTS:%=build-tsan/%)

# valgrind memcheck over the test programs of $(BUILD) (those of `make
# test`), with the simulator's portable kernels: valgrind 3.19 stops at the
# first AVX-512 instruction, so XRT_SIM_ISA=portable keeps the run-time
# dispatch off AVX2/AVX-512.  Any memory error or leak fails it.
# XRT_TEST_LIGHT=1 has the heaviest tests leave their largest cases to the
# other runs (a multiply-add costs a hundred times more under valgrind).
# VALGRIND_SKIP: tests left out (see README "Reliability").  By default the
# four that sweep StableHLO's whole test corpora (tens of thousands of
# programs: minutes each under valgrind); they run under ASan and UBSan in
# `make asan`, and their code under valgrind through the other tests.
VALGRIND_SKIP ?= test_bytecode test_bytecode_write test_print test_dynamic_shapes
VALGRIND_TESTS := $(filter-out $(VALGRIND_SKIP:%=$(BUILD)/%),$(TEST_BINS))
VALGRIND_FLAGS := --error-exitcode=1 --leak-check=full \
                  --errors-for-leak-kinds=definite,indirect,possible \
                  --show-leak-kinds=definite,indirect,possible --quiet
valgrind-deps:
	@sh tools/deps.sh valgrind

test-valgrind: $(VALGRIND_TESTS) | valgrind-deps
	@XRT_SIM_ISA=portable XRT_TEST_LIGHT=1 sh tools/run_tests.sh valgrind -j $(TEST_JOBS) \
	  -w "valgrind $(VALGRIND_FLAGS)" $(call test_order,$(VALGRIND_TESTS))

# test_gemm on the XRT_BLAS=1 library (build-blas), with CBLAS forced on,
# forced off and chosen by timing (the default).
blas-deps:
	@sh tools/deps.sh blas

test-blas: | deps blas-deps
	@$(MAKE) --no-print-directory XRT_BLAS=1 build-blas/test_gemm
	XRT_SIM_BLAS=1 build-blas/test_gemm
	XRT_SIM_BLAS=0 build-blas/test_gemm
	build-blas/test_gemm

# ---- soak: 8 threads of mixed work on shared objects (tools/soak.c) ----
#   make soak [SOAK_SECONDS=600]   checks every result and that resident
#                                  memory stays flat; fails otherwise
SOAK_SECONDS ?= 60

$(BUILD)/soak: tools/soak.c test/spec_util.h $(LIB_A)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ $(LIB_A) $(LDLIBS)

soak: $(BUILD)/soak
	$(BUILD)/soak $(SOAK_SECONDS)

.PHONY: test asan test-tsan test-valgrind valgrind-deps test-blas blas-deps soak
