# mk/fuzz.mk - fuzzing (libFuzzer, clang only; see fuzz/README.md).
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
FUZZ_SRCS := $(CORE_SRCS) $(SIM_SRCS) $(if $(filter 1,$(XRT_DISK_CACHE)),$(CACHE_SRCS))
FUZZ_OBJS := $(FUZZ_SRCS:src/%.c=$(FUZZ_BUILD)/obj/%.o)

# clang, libFuzzer and the sanitizer runtimes: installed first when root.
fuzz-deps:
	@sh tools/deps.sh fuzz

$(FUZZ_BUILD)/obj/%.o: src/%.c | fuzz-deps deps
	@mkdir -p $(@D)
	$(FUZZ_CC) $(CPPFLAGS) $(DEPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_BUILD)/fuzz_%: fuzz/fuzz_%.c fuzz/fuzz_util.h $(FUZZ_OBJS) xrt.h | fuzz-deps
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_OBJS) \
	  -o $@ $(LDLIBS)

.PRECIOUS: $(FUZZ_BUILD)/obj/%.o

fuzz: $(FUZZ_TARGETS:%=$(FUZZ_BUILD)/%)

fuzz-smoke: fuzz
	sh fuzz/make_corpus.sh $(FUZZ_BUILD)/corpus
	sh fuzz/smoke.sh $(FUZZ_BUILD) $(FUZZ_TIME) $(FUZZ_JOBS) $(FUZZ_TARGETS)

.PHONY: fuzz fuzz-smoke fuzz-deps
-include $(FUZZ_OBJS:.o=.d)
