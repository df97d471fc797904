# mk/fuzz.mk - fuzzing (libFuzzer, clang only; see fuzz/README.md).
#
#   make fuzz        fuzz/fuzz_*.c -> build-fuzz/fuzz_* (ASan + UBSan)
#   make fuzz-smoke  what CI runs, the same work on every run (a finding
#                    comes from the code, never from chance): replays
#                    fuzz/regressions/<target>-*, then runs each target
#                    from the seeds fuzz/make_corpus.sh writes afresh to
#                    build-fuzz/seeds/<target>/ (replayed first) with
#                    -seed=FUZZ_SEED for FUZZ_RUNS_<target> runs
#                    (FUZZ_RUNS for a target without its own count);
#                    fails on any finding.
#   make fuzz-long   random runs: each target FUZZ_TIME seconds (1800
#                    unless given) from a random seed over its corpus in
#                    build-fuzz/corpus/<target>/, which keeps what each run
#                    adds; fails on any finding.  `make fuzz-smoke
#                    FUZZ_RANDOM=1` (or with FUZZ_TIME=N given) is the
#                    same with FUZZ_TIME 60 by default: the smoke test as
#                    it was before it was made deterministic.
# Targets run FUZZ_JOBS at a time.  A failed malloc returns NULL
# (allocator_may_return_null=1): xrt must report it, as it would outside
# ASan.
FUZZ_BUILD ?= build-fuzz
FUZZ_CC := clang
FUZZ_TIME ?= 60
# fuzz-smoke: random (timed) runs when asked, or when FUZZ_TIME is given
FUZZ_RANDOM ?= $(if $(filter command line environment,$(origin FUZZ_TIME)),1,0)
FUZZ_LONG_TIME = $(if $(filter command line environment,$(origin FUZZ_TIME)),$(FUZZ_TIME),1800)
# fuzz-smoke's fixed seed and runs per target (past its seeds), chosen so
# that each target takes 10-20 s on one core (measured: fuzz/README.md)
FUZZ_SEED ?= 1
FUZZ_RUNS ?= 32000
FUZZ_RUNS_fuzz_program ?= 130000
FUZZ_RUNS_fuzz_bytecode ?= 16000
FUZZ_RUNS_fuzz_cache_file ?= 13000
FUZZ_RUNS_fuzz_npy ?= 26000
FUZZ_RUNS_fuzz_pjrt_table ?= 16000
FUZZ_RUNS_fuzz_plugin_table ?= 32000
# targets fuzz-smoke runs at once (one core each)
FUZZ_JOBS ?= 2
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
# (line tables only, as for SAN=1: what a finding's stack trace prints)
# The simulator's portable kernels only (XRT_SIM_PORTABLE, src/sim/
# internal.h): the fuzzers aim at parsing, verifying and planning; the
# AVX2 and AVX-512 kernels, which the sanitizer builds of the tests check,
# were three quarters of this build's compile time.
FUZZ_CPPFLAGS = $(CPPFLAGS) -DXRT_SIM_PORTABLE
FUZZ_CFLAGS := -std=c11 -gline-tables-only -O1 -Wall -Wextra -Wpedantic \
               -fno-omit-frame-pointer $(FUZZ_SAN)
FUZZ_TARGETS := $(patsubst fuzz/%.c,%,$(sort $(wildcard fuzz/fuzz_*.c)))
ifneq ($(XRT_DISK_CACHE),1)
  FUZZ_TARGETS := $(filter-out fuzz_cache_file,$(FUZZ_TARGETS))
endif
FUZZ_SRCS := $(CORE_SRCS) $(SIM_SRCS) $(PJRT_SRCS) $(if $(filter 1,$(XRT_DISK_CACHE)),$(CACHE_SRCS))
FUZZ_OBJS := $(FUZZ_SRCS:src/%.c=$(FUZZ_BUILD)/obj/%.o)

# clang, libFuzzer and the sanitizer runtimes: installed first when root.
fuzz-deps:
	@sh tools/deps.sh fuzz

$(FUZZ_BUILD)/obj/%.o: src/%.c | fuzz-deps deps
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(DEPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz_util.h $(FUZZ_OBJS) xrt.h | fuzz-deps
	$(FUZZ_CC) $(FUZZ_CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_OBJS) \
	  -o $@ $(LDLIBS)

# fuzz_pjrt_table compiles in the fake PJRT plugin of the tests.
$(FUZZ_BUILD)/fuzz_pjrt_table: test/plugins/fake_pjrt.c src/pjrt/pjrt_abi.h

.PRECIOUS: $(FUZZ_BUILD)/obj/%.o

fuzz: $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/%)

fuzz-smoke: fuzz
ifeq ($(FUZZ_RANDOM),1)
	sh fuzz/make_corpus.sh $(FUZZ_BUILD)/corpus
	sh fuzz/smoke.sh $(FUZZ_BUILD) $(FUZZ_JOBS) random $(FUZZ_TIME) $(FUZZ_TARGETS)
else
	rm -rf $(FUZZ_BUILD)/seeds
	sh fuzz/make_corpus.sh $(FUZZ_BUILD)/seeds
	sh fuzz/smoke.sh $(FUZZ_BUILD) $(FUZZ_JOBS) fixed $(FUZZ_SEED) \
	  $(foreach t,$(FUZZ_TARGETS),$(t)=$(or $(FUZZ_RUNS_$(t)),$(FUZZ_RUNS)))
endif

fuzz-long: fuzz
	sh fuzz/make_corpus.sh $(FUZZ_BUILD)/corpus
	sh fuzz/smoke.sh $(FUZZ_BUILD) $(FUZZ_JOBS) random $(FUZZ_LONG_TIME) $(FUZZ_TARGETS)

.PHONY: fuzz fuzz-smoke fuzz-long fuzz-deps
-include $(FUZZ_OBJS:.o=.d)
