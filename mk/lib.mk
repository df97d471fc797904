# mk/lib.mk - the library (static and shared), the simulator as a plugin
# library, the test and example plugins, the xrt tool and xrt-cts.

# One set of objects serves libxrt.a, libxrt.so, libxrt_sim.so and
# libxrt_pjrt.so: position-independent, -fvisibility=hidden (which changes
# nothing when linking a static archive into a program, and Debian's gcc
# makes position-independent code by default anyway).  Compiling the
# library once per build, not three times, is most of a clean build's time.
PIC_OBJS := $(LIB_SRCS:src/%.c=$(BUILD)/pic/%.o)
# MPI_SHARE_OBJS=DIR (test-mpi, mk/mpi.mk): an XRT_MPI=1 build that takes
# the objects of the same flags' build without MPI, DIR, made just before,
# for every file that does not name XRT_HAVE_MPI; it compiles src/mpi and
# the files that do.  (A make of the MPI build alone compiles everything.)
ifneq ($(MPI_SHARE_OBJS),)
  MPI_OWN_SRCS := $(MPI_SRCS) $(shell grep -l XRT_HAVE_MPI $(LIB_SRCS))
  PIC_OBJS := $(foreach f,$(LIB_SRCS),$(if $(filter $(f),$(MPI_OWN_SRCS)),\
                $(f:src/%.c=$(BUILD)/pic/%.o),\
                $(f:src/%.c=$(MPI_SHARE_OBJS)/pic/%.o)))
endif
LIB_OBJS := $(PIC_OBJS)
CLI_OBJS := $(CLI_SRCS:tools/cli/%.c=$(BUILD)/obj/cli/%.o)
LIB_A := $(BUILD)/libxrt.a
LIB_SO := $(BUILD)/libxrt.so
# The shared library's version comes from xrt.h: libxrt.so.MAJOR.MINOR.PATCH
# with soname libxrt.so.MAJOR, and libxrt.so -> libxrt.so.MAJOR -> the file.
XRT_VERSION := $(shell sed -n 's/^\#define XRT_VERSION_STRING "\([^"]*\)"/\1/p' xrt.h)
XRT_SOVERSION := $(shell sed -n 's/^\#define XRT_VERSION_MAJOR \([0-9]*\).*/\1/p' xrt.h)
LIB_SONAME := libxrt.so.$(XRT_SOVERSION)
LIB_SO_REAL := $(BUILD)/libxrt.so.$(XRT_VERSION)
XRT_BIN := $(BUILD)/xrt
CTS_BIN := $(BUILD)/xrt-cts
SIM_SO := $(BUILD)/libxrt_sim.so
TINY_SO := $(BUILD)/libxrt_tiny.so
MINIMAL_SO := $(BUILD)/libxrt_minimal.so

all: $(LIB_A) $(LIB_SO) $(XRT_BIN) $(SIM_SO) $(CTS_BIN) $(MINIMAL_SO)

# One object per source file; -fvisibility=hidden keeps what the files
# share (XRT__PRIVATE, SIM_PRIVATE) out of libxrt.so, which exports only
# the XRT_API functions of xrt.h.
$(BUILD)/pic/%.o: src/%.c $(FLAGS_FILE) | deps xrt.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(DEPFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(LIB_A): $(LIB_OBJS)
	rm -f $@
	$(AR) rcs $@ $^

$(LIB_SO_REAL): $(PIC_OBJS) tools/libxrt.map
	$(CC) $(LDFLAGS) -shared -Wl,-soname,$(LIB_SONAME) \
	  -Wl,--version-script=tools/libxrt.map -o $@ $(PIC_OBJS) $(LDLIBS)

$(LIB_SO): $(LIB_SO_REAL)
	ln -sf libxrt.so.$(XRT_VERSION) $(BUILD)/$(LIB_SONAME)
	ln -sf $(LIB_SONAME) $@

# ---- device plugins as shared objects ----
# libxrt_sim.so: the simulator on its own.  It calls nothing in the core
# (--no-undefined proves it; not under SAN=1, whose runtime the executable
# provides) and exports only xrt_plugin_get_api (-fvisibility=hidden).
# Only src/sim/plugin.c reads XRT_PLUGIN_SHARED: the library's objects of
# the other files serve the plugin as they are.
# libxrt_tiny.so: the small test plugin of test/plugin_tiny.c.
PLUGIN_LDFLAGS := -shared $(if $(filter 1,$(SAN)),,-Wl,--no-undefined)
SIM_SO_OBJS := $(filter-out $(BUILD)/pic/sim/plugin.o,\
                 $(SIM_SRCS:src/%.c=$(BUILD)/pic/%.o)) $(BUILD)/simso/sim/plugin.o

$(BUILD)/simso/%.o: src/%.c $(FLAGS_FILE) | deps xrt.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) -DXRT_PLUGIN_SHARED $(DEPFLAGS) $(CFLAGS) -fPIC \
	  -fvisibility=hidden -c $< -o $@

$(SIM_SO): $(SIM_SO_OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) $(PLUGIN_LDFLAGS) -o $@ $^ $(LDLIBS)

$(TINY_SO): test/plugin_tiny.c xrt.h $(FLAGS_FILE)
	$(CC) -I. $(CFLAGS) $(LDFLAGS) -fPIC -fvisibility=hidden $(PLUGIN_LDFLAGS) \
	  -o $@ $< $(LDLIBS)

# examples/plugin_minimal.c, built as its header and the README show, plus
# --no-undefined (not under SAN=1).
$(MINIMAL_SO): examples/plugin_minimal.c xrt.h $(FLAGS_FILE)
	$(CC) -I. $(CFLAGS) $(LDFLAGS) -fPIC $(PLUGIN_LDFLAGS) -o $@ $<

# ---- the tool (tools/cli) and the plugin conformance suite ----
$(BUILD)/obj/cli/%.o: tools/cli/%.c $(FLAGS_FILE) | deps xrt.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(DEPFLAGS) $(CFLAGS) -c $< -o $@

$(XRT_BIN): $(CLI_OBJS) $(LIB_A)
	$(CC) $(CFLAGS) $(LDFLAGS) $(CLI_OBJS) -o $@ $(LIB_A) $(LDLIBS)

$(CTS_BIN): tools/xrt_cts.c $(LIB_A)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ $(LIB_A) $(LDLIBS)

run: $(XRT_BIN)
	$(XRT_BIN) run examples/mlp.mlir

.PHONY: run
-include $(PIC_OBJS:.o=.d) $(BUILD)/simso/sim/plugin.d $(CLI_OBJS:.o=.d)
