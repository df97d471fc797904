# mk/config.mk - compiler flags, the configuration's build directory, the
# source lists, and the packages every compiling target needs first.

CC ?= cc
CFLAGS ?= -std=c11 -O2 -g -Wall -Wextra -Wpedantic
LDLIBS := -lm -lpthread -ldl

ifeq ($(WERROR),1)
  CFLAGS += -Werror
endif

# The build directory names the configuration, so that objects built with
# other flags never mix: build, build-asan, build-mpi, build-asan-mpi,
# build-blas, build-nocache ...  (BUILD=DIR overrides it.)
XRT_DISK_CACHE ?= 1
# SAN_SUFFIX names the instrumented configurations (SAN=1, COV=1), which
# test-mpi's two builds share.
SAN_SUFFIX := $(if $(filter 1,$(SAN)),-asan)$(if $(filter 1,$(COV)),-cov)
CONFIG_SUFFIX := $(SAN_SUFFIX)$(if $(filter 1,$(XRT_MPI)),-mpi)$(if \
  $(filter 1,$(XRT_BLAS)),-blas)$(if $(filter 1,$(XRT_DISK_CACHE)),,-nocache)
BUILD ?= build$(CONFIG_SUFFIX)

ifeq ($(SAN),1)
  SANFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined \
              -fno-omit-frame-pointer
  # -O1, as the sanitizers' own documentation advises: it compiles in about
  # half the time of -O2, and the suite runs about as fast.  -g1: line
  # tables, what their reports print; full debug information makes an
  # instrumented compile a third slower.
  CFLAGS := $(patsubst -g,-g1,$(patsubst -O2,-O1,$(CFLAGS))) $(SANFLAGS)
  LDFLAGS += $(SANFLAGS)
endif

# COV=1: gcc's coverage counters (make coverage), unoptimized so that
# every line and branch counts as written, updated atomically (threads
# share them).  SANFLAGS carries them to what the consumer test builds.
ifeq ($(COV),1)
  COVFLAGS := --coverage -fprofile-update=atomic
  CFLAGS := $(patsubst -O%,-O0,$(CFLAGS)) $(COVFLAGS)
  LDFLAGS += $(COVFLAGS)
  SANFLAGS += $(COVFLAGS)
endif

CPPFLAGS += -I. -DXRT_WITH_SIM -DXRT_WITH_PJRT

# XRT_BLAS=1: the simulator's f32/f64 dot_general may call CBLAS for large
# products (Debian: libopenblas-dev).
ifeq ($(XRT_BLAS),1)
  CPPFLAGS += -DXRT_WITH_CBLAS
  LDLIBS += -lopenblas
endif
# XRT_MPI=1: several processes form one xrt system over MPI (src/mpi,
# built with mpicc; Debian: libopenmpi-dev openmpi-bin).
ifeq ($(XRT_MPI),1)
  CC := mpicc
  CPPFLAGS += -DXRT_HAVE_MPI
endif
# The disk compilation cache (src/cache) is in by default; XRT_DISK_CACHE=0
# leaves it out.  Code that uses it tests XRT_HAVE_DISK_CACHE.
ifeq ($(XRT_DISK_CACHE),1)
  CPPFLAGS += -DXRT_HAVE_DISK_CACHE
endif
DEPFLAGS := -MMD -MP
# How many test programs the test targets run at once (tools/run_tests.sh
# -j): one per core.
TEST_JOBS ?= $(shell nproc 2>/dev/null || echo 1)
# Make itself runs one job per core too (a -j on the command line wins:
# make -j1 for a serial build); recursive makes share the top one's jobs.
ifeq ($(MAKELEVEL),0)
  MAKEFLAGS += -j$(TEST_JOBS)
endif

# ---- sources: each unit lists its files in src/<unit>/sources.txt ----
# (the same lists tools/amalgamate.sh and CMakeLists.txt read).
unit_srcs = $(addprefix src/$(1)/,$(filter %.c,$(shell cat src/$(1)/sources.txt)))
CORE_SRCS := $(call unit_srcs,core)
SIM_SRCS := $(call unit_srcs,sim)
CACHE_SRCS := $(call unit_srcs,cache)
MPI_SRCS := $(call unit_srcs,mpi)
# src/pjrt: PJRT plugins as xrt plugins (xrt_pjrt.c), always built in;
# src/pjrt_plugin: xrt as a PJRT plugin (libxrt_pjrt.so, mk/pjrt_plugin.mk).
PJRT_SRCS := $(call unit_srcs,pjrt)
PJRT_PLUGIN_SRCS := $(call unit_srcs,pjrt_plugin)
CLI_SRCS := $(sort $(wildcard tools/cli/*.c))
LIB_SRCS := $(CORE_SRCS) $(SIM_SRCS) $(PJRT_SRCS) \
            $(if $(filter 1,$(XRT_DISK_CACHE)),$(CACHE_SRCS)) \
            $(if $(filter 1,$(XRT_MPI)),$(MPI_SRCS))

# ---- the flags a build directory was made with ----
# $(BUILD)/flags holds them; it is rewritten (and so everything compiled is
# rebuilt) only when they change.  -Werror is left out: it changes no
# object, and CI's later steps reuse the WERROR=1 build of `make test`.
FLAGS_FILE := $(BUILD)/flags
FLAGS_NOW := $(CC) $(CPPFLAGS) $(filter-out -Werror,$(CFLAGS)) $(LDFLAGS) $(LDLIBS)
ifneq ($(filter-out clean amalgamate check-amalgamation deps% %-deps,$(MAKECMDGOALS))$(if $(MAKECMDGOALS),,all),)
  $(shell mkdir -p $(BUILD) && \
    if [ "$$(cat $(FLAGS_FILE) 2>/dev/null)" != "$(FLAGS_NOW)" ]; then \
      echo "$(FLAGS_NOW)" > $(FLAGS_FILE); fi)
endif

# ---- packages: whatever compiles gets them first ----
# Order-only prerequisites of every object and program: tools/deps.sh
# checks in milliseconds, installs when root, else prints the command.
deps:
	@sh tools/deps.sh

.PHONY: deps
