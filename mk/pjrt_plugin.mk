# mk/pjrt_plugin.mk - libxrt_pjrt.so: xrt as a PJRT plugin (src/pjrt_plugin).
#
# The plugin's files are compiled -fPIC -fvisibility=hidden into
# $(BUILD)/pjrtso/ and linked with the library's own position-independent
# objects ($(PIC_OBJS), see mk/lib.mk) under tools/libxrt_pjrt.map, which
# exports GetPjrtApi alone: the copy of xrt inside stays private, so a
# process that has an xrt of its own (or loads the plugin through xrt's
# PJRT loader) sees no clash.  --no-undefined proves the library complete
# (not under SAN=1, whose runtime the executable provides).

PJRT_PLUGIN_SRCS ?= $(call unit_srcs,pjrt_plugin)
PJRT_PLUGIN_OBJS := $(PJRT_PLUGIN_SRCS:src/%.c=$(BUILD)/pjrtso/%.o)
PJRT_PLUGIN_SO := $(BUILD)/libxrt_pjrt.so
PJRT_PLUGIN_MAP := tools/libxrt_pjrt.map

all: $(PJRT_PLUGIN_SO)

$(BUILD)/pjrtso/%.o: src/%.c $(FLAGS_FILE) | deps xrt.h
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(DEPFLAGS) $(CFLAGS) -fPIC -fvisibility=hidden -c $< -o $@

$(PJRT_PLUGIN_SO): $(PJRT_PLUGIN_OBJS) $(PIC_OBJS) $(PJRT_PLUGIN_MAP)
	$(CC) $(CFLAGS) $(LDFLAGS) -shared \
	  $(if $(filter 1,$(SAN)),,-Wl,--no-undefined) \
	  -Wl,--version-script=$(PJRT_PLUGIN_MAP) -o $@ \
	  $(PJRT_PLUGIN_OBJS) $(PIC_OBJS) $(LDLIBS)

-include $(PJRT_PLUGIN_OBJS:.o=.d)
