# mk/install.mk - install, uninstall, the examples and the API reference.
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

$(BUILD)/examples/%: examples/%.c $(LIB_A) | deps
	@mkdir -p $(@D)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< -o $@ $(LIB_A) $(LDLIBS)

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
