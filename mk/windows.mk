# mk/windows.mk - Windows x64: cross-built with mingw-w64, tested under wine.
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
# Debian keeps it off PATH, beside wine64's loader.
WINESERVER ?= $(firstword $(wildcard $(dir $(realpath $(WINE)))wineserver64 \
  /usr/lib/wine/wineserver64 /usr/lib/wine/wineserver) wineserver)
# No -g: debug information makes the build (mostly compiling xrt, twice
# for the files of xrt.dll) a fifth slower, and the tests under wine are
# debugged on Linux, where the same code runs.
WIN_CFLAGS ?= -std=c11 -O2 -Wall -Wextra -Wpedantic \
              $(if $(filter 1,$(WERROR)),-Werror)
WIN_CFLAGS += -Wa,-muse-unaligned-vector-move
WIN_CPPFLAGS := -I. -DXRT_WITH_SIM -DXRT_WITH_PJRT -D__USE_MINGW_ANSI_STDIO=1 \
                $(filter -DXRT_HAVE_DISK_CACHE,$(CPPFLAGS))
WIN_LDFLAGS := -static
# The test programs' own code at -O1 (the library stays at -O2): about 40%
# off their compile (test_reshard.c 1.1 -> 0.7 s), and their runs here are
# light (below).
WIN_TEST_CFLAGS = $(patsubst -O2,-O1,$(WIN_CFLAGS))
WIN_LDLIBS := -lm -lpthread
# Host headers the tests and the cache use, and no other (-isystem: the
# wrapper's #include_next): cmocka.h, xxhash.h (header-only), dlpack.h.
WIN_TEST_INC := -isystem test/win/include -isystem $(WIN_BUILD)/include
WIN_SRCS := $(CORE_SRCS) $(SIM_SRCS) $(PJRT_SRCS) $(if $(filter 1,$(XRT_DISK_CACHE)),$(CACHE_SRCS))
WIN_OBJS := $(WIN_SRCS:src/%.c=$(WIN_BUILD)/obj/%.o)
# xrt.dll is linked from the static library's objects and a .def file
# listing the XRT_API functions of xrt.h (made from xrt.h), not from a
# second compile of every file with XRT_BUILD_DLL: the same exports, and
# the core compiled once.  xrt_sim.dll shares the simulator's objects but
# its plugin.c, which reads XRT_PLUGIN_SHARED.
WIN_SIM_SHARED_OBJS := $(filter-out $(WIN_BUILD)/obj/sim/plugin.o,\
                         $(SIM_SRCS:src/%.c=$(WIN_BUILD)/obj/%.o))
WIN_DLL_OBJS := $(WIN_OBJS)
WIN_SIM_OBJS := $(WIN_SIM_SHARED_OBJS) $(WIN_BUILD)/simdll/sim/plugin.o
WIN_CLI_OBJS := $(CLI_SRCS:tools/cli/%.c=$(WIN_BUILD)/cli/%.o)
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
#   test_pjrt_host, test_pjrt_adapter, test_pjrt_plugin_alloc,
#   test_pjrt_dispatch
#                 libxrt_pjrt.so (or its sources) and the fake PJRT
#                 plugins, which the Windows build does not make (the
#                 adapter itself is in the Windows library, and
#                 test_pjrt_abi runs)
# (test_disk_cache runs, without its one fork() test; its two-thread test
# covers the same races on Windows.)
WIN_TEST_SKIP := test_trace test_plugins test_pjrt_host test_pjrt_adapter \
                 test_pjrt_plugin_alloc test_pjrt_dispatch
WIN_TESTS := $(filter-out $(WIN_TEST_SKIP:%=$(WIN_BUILD)/%.exe),\
               $(TEST_SRCS:test/%.c=$(WIN_BUILD)/%.exe))
WIN_HOST_HEADERS := $(WIN_BUILD)/include/cmocka.h \
                    $(WIN_BUILD)/include/xxhash.h \
                    $(WIN_BUILD)/include/dlpack/dlpack.h

windows: $(WIN_DLL) $(WIN_LIB_A) $(WIN_BUILD)/xrt.exe $(WIN_BUILD)/xrt-cts.exe \
         $(WIN_PLUGINS) $(WIN_TESTS)

$(WIN_BUILD)/obj/%.o: src/%.c xrt.h $(WIN_HOST_HEADERS) | windows-deps
	@mkdir -p $(@D)
	$(WIN_CC) $(WIN_CPPFLAGS) -isystem $(WIN_BUILD)/include $(DEPFLAGS) \
	  $(WIN_CFLAGS) -c $< -o $@

$(WIN_BUILD)/simdll/%.o: src/%.c xrt.h $(WIN_HOST_HEADERS) | windows-deps
	@mkdir -p $(@D)
	$(WIN_CC) -I. -isystem $(WIN_BUILD)/include -D__USE_MINGW_ANSI_STDIO=1 \
	  -DXRT_PLUGIN_SHARED $(DEPFLAGS) $(WIN_CFLAGS) -c $< -o $@

$(WIN_BUILD)/cli/%.o: tools/cli/%.c xrt.h | windows-deps
	@mkdir -p $(@D)
	$(WIN_CC) $(WIN_CPPFLAGS) -DXRT_DLL $(DEPFLAGS) $(WIN_CFLAGS) -c $< -o $@

$(WIN_LIB_A): $(WIN_OBJS)
	rm -f $@
	$(WIN_AR) rcs $@ $^

# xrt.dll exports exactly the XRT_API functions of xrt.h (each declared on
# one line, "XRT_API <type> xrt_<name>("); the check below fails the
# build when an xrt_* function is defined but not exported (a declaration
# without XRT_API).
$(WIN_BUILD)/xrt.def: xrt.h | $(WIN_BUILD)
	@{ echo EXPORTS; grep -o 'XRT_API [^(]*\bxrt_[a-z0-9_]*(' xrt.h | \
	  sed 's/.*\b\(xrt_[a-z0-9_]*\)($$/  \1/'; } >$@.tmp && mv $@.tmp $@

$(WIN_DLL): $(WIN_DLL_OBJS) $(WIN_BUILD)/xrt.def
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

$(WIN_BUILD)/xrt.exe: $(WIN_CLI_OBJS) $(WIN_DLL)
	$(WIN_CC) $(WIN_CFLAGS) $(WIN_LDFLAGS) $(WIN_CLI_OBJS) -o $@ \
	  $(WIN_BUILD)/xrt.lib $(WIN_LDLIBS)

$(WIN_BUILD)/xrt-cts.exe: tools/xrt_cts.c xrt.h $(WIN_LIB_A)
	$(WIN_CC) $(WIN_CPPFLAGS) $(WIN_CFLAGS) $(WIN_LDFLAGS) $< -o $@ \
	  $(WIN_LIB_A) $(WIN_LDLIBS)

# Plugins: self-contained DLLs exporting only xrt_plugin_get_api.
$(WIN_BUILD)/xrt_sim.dll: $(WIN_SIM_OBJS)
	$(WIN_CC) $(WIN_CFLAGS) $(WIN_LDFLAGS) -shared -o $@ $^ $(WIN_LDLIBS)

$(WIN_BUILD)/xrt_tiny.dll: test/plugin_tiny.c xrt.h | $(WIN_BUILD) windows-deps
	$(WIN_CC) -I. -D__USE_MINGW_ANSI_STDIO=1 $(WIN_CFLAGS) $(WIN_LDFLAGS) \
	  -shared -o $@ $< $(WIN_LDLIBS)

$(WIN_BUILD)/xrt_minimal.dll: examples/plugin_minimal.c xrt.h | $(WIN_BUILD) windows-deps
	$(WIN_CC) -I. -D__USE_MINGW_ANSI_STDIO=1 $(WIN_CFLAGS) $(WIN_LDFLAGS) \
	  -shared -o $@ $<

$(WIN_BUILD)/include/%.h: | $(WIN_BUILD)/include/dlpack windows-deps
	ln -sf /usr/include/$*.h $@

$(WIN_BUILD)/cmocka_mingw.o: test/win/cmocka_mingw.c $(WIN_HOST_HEADERS) | $(WIN_BUILD) windows-deps
	$(WIN_CC) $(WIN_CPPFLAGS) $(WIN_TEST_INC) $(WIN_CFLAGS) -c $< -o $@

# The tests, unchanged: test/win/posix_compat.h (forced in) and
# test/win/include/dlfcn.h give them the few POSIX calls they make.
WIN_TEST_DEFS := -DXRT_TEST_PLUGIN_DIR='"$(WIN_BUILD)"' \
                 -DXRT_TEST_SIM_LIB='"xrt_sim.dll"' \
                 -DXRT_TEST_TINY_LIB='"xrt_tiny.dll"'
# As on Linux (mk/test.mk), most import xrt.dll (beside them, where
# Windows looks first); those that call its internals (TEST_STATIC) link
# libxrt.a.
WIN_TEST_IMPORT = -DXRT_DLL
WIN_TEST_LINK = $(WIN_BUILD)/xrt.lib
$(TEST_STATIC:%=$(WIN_BUILD)/%.exe): WIN_TEST_IMPORT =
$(TEST_STATIC:%=$(WIN_BUILD)/%.exe): WIN_TEST_LINK = $(WIN_LIB_A)
$(TEST_STATIC:%=$(WIN_BUILD)/%.exe): $(WIN_LIB_A)
$(WIN_BUILD)/test_%.exe: test/test_%.c $(wildcard test/*.h) \
    test/win/posix_compat.h test/win/include/dlfcn.h $(WIN_DLL) \
    $(WIN_BUILD)/cmocka_mingw.o $(WIN_HOST_HEADERS) | $(WIN_BUILD)
	$(WIN_CC) $(WIN_CPPFLAGS) $(WIN_TEST_IMPORT) $(WIN_TEST_INC) \
	  $(WIN_TEST_DEFS) -include test/win/posix_compat.h $(WIN_TEST_CFLAGS) \
	  $(WIN_LDFLAGS) $< -o $@ $(WIN_BUILD)/cmocka_mingw.o $(WIN_TEST_LINK) \
	  $(WIN_LDLIBS)

$(WIN_BUILD)/test_sim_so.exe $(WIN_BUILD)/test_platform.exe: \
    $(WIN_BUILD)/xrt_sim.dll $(WIN_BUILD)/xrt_tiny.dll

$(WIN_BUILD) $(WIN_BUILD)/include/dlpack:
	mkdir -p $@

# Runs every test even when one fails, then fails if any did; a test that
# runs longer than WIN_TEST_TIMEOUT seconds fails (a hang must not stall CI).
# Light (XRT_TEST_LIGHT=1, as under valgrind): the run is for the Windows
# build and OS layer; the largest kernel cases, the same code on every OS,
# run natively in make test, asan and coverage.
WIN_ENV = WINEPREFIX=$(abspath $(WIN_BUILD))/wineprefix WINEDEBUG=-all \
          XRT_TEST_LIGHT=1
WIN_TEST_TIMEOUT ?= 300
# One wine server for the whole run (-p: it stays between programs, and
# -k stops it at the end): a server that exits when its last program does
# is started again, with wine's services, by the next one; that was a
# quarter of the run's time (86 -> 64 s).
test-windows: | windows-deps
	$(MAKE) windows
	@export $(WIN_ENV); $(WINESERVER) -p >/dev/null 2>&1 </dev/null; \
	  $(WINE) wineboot -i >/dev/null 2>&1; \
	  sh tools/run_tests.sh "windows test programs" \
	  -j $(TEST_JOBS) -t $(WIN_TEST_TIMEOUT) -r -w "$(WINE)" \
	  $(call test_order,$(WIN_TESTS),$(WIN_BUILD),.exe) -- \
	  "env XRT_BUILD=$(WIN_BUILD) XRT_RUN='$(WINE)' XRT_EXE=.exe XRT_LIB_PREFIX= XRT_LIB_SUFFIX=.dll CC='$(WIN_CC) -static' sh test/test_cts.sh"; \
	  rc=$$?; $(WINESERVER) -k >/dev/null 2>&1; exit $$rc

windows-deps:
	@sh tools/deps.sh windows

.PHONY: windows test-windows windows-deps
.PRECIOUS: $(WIN_BUILD)/obj/%.o $(WIN_BUILD)/simdll/%.o \
  $(WIN_BUILD)/cli/%.o $(WIN_BUILD)/include/%.h
-include $(WIN_OBJS:.o=.d) $(WIN_SIM_OBJS:.o=.d) $(WIN_CLI_OBJS:.o=.d)
