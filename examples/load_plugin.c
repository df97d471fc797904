/* examples/load_plugin.c - load a device plugin from a shared library.
 *
 *   load_plugin [PLUGIN.so]      (default: build/libxrt_sim.so)
 *
 * Device plugins are shared libraries exporting one function,
 * xrt_plugin_get_api, that returns the plugin's function table (see
 * "Plugin ABI" in xrt.h).  A context is a registry of plugins: this
 * program makes an empty one, loads the library into it, prints what the
 * plugin says of itself and of its devices, and runs a small program on
 * one of them.  (Plugins can also come from XRT_PLUGINS=name:path,... or a
 * directory scan: see xrt_context_load_env and xrt_context_scan_directory.)
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "xrt.h"

static const char *program =
    "func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {\n"
    "  %y = stablehlo.add %x, %x : tensor<3xf32>\n"
    "  func.return %y : tensor<3xf32>\n"
    "}\n";

static void print_attribute(const xrt_attribute *a) {
  printf("    %s = ", a->name);
  switch (a->type) {
  case XRT_ATTRIBUTE_INT: printf("%" PRId64 "\n", a->int_value); break;
  case XRT_ATTRIBUTE_FLOAT: printf("%g\n", a->float_value); break;
  case XRT_ATTRIBUTE_STRING: printf("\"%s\"\n", a->string_value); break;
  case XRT_ATTRIBUTE_BOOL: printf("%s\n", a->bool_value ? "true" : "false"); break;
  }
}

/* Prints the plugin's self-description: available before any client. */
static xrt_status print_plugin(const xrt_plugin *plugin) {
  xrt_plugin_info info;
  xrt_status s = xrt_plugin_get_info(plugin, &info);
  if (s) return s;
  printf("plugin %s from %s: platform %s %s, ABI %u.%u, StableHLO %s..%s\n",
         info.name, info.path, info.platform_name, info.platform_version,
         (unsigned)info.abi_major, (unsigned)info.abi_minor,
         info.stablehlo_min, info.stablehlo_max);
  printf("  capabilities:%s%s%s%s\n",
         info.capabilities & XRT_CAP_ASYNC ? " async" : "",
         info.capabilities & XRT_CAP_MULTI_DEVICE ? " multi-device" : "",
         info.capabilities & XRT_CAP_COLLECTIVES ? " collectives" : "",
         info.capabilities & XRT_CAP_HOST_MEMORY ? " host-memory" : "");
  for (int i = 0; i < info.num_attributes; i++)
    print_attribute(&info.attributes[i]);
  return XRT_OK;
}

/* Lists the client's devices with their attributes. */
static xrt_status print_devices(xrt_client *client) {
  int n = xrt_client_device_count(client);
  for (int d = 0; d < n; d++) {
    xrt_device *dev = xrt_client_device(client, d);
    printf("  device %d: kind %s\n", xrt_device_id(dev), xrt_device_kind(dev));
    for (int i = 0; i < xrt_device_attribute_count(dev); i++) {
      xrt_attribute a;
      xrt_status s = xrt_device_attribute_get(dev, i, &a);
      if (s) return s;
      print_attribute(&a);
    }
  }
  return XRT_OK;
}

/* Doubles {1, 2, 3} on the client's last device and checks the result
 * (an add: even examples/plugin_minimal.c runs it). */
static xrt_status run_double(xrt_client *client) {
  xrt_executable *exe = NULL;
  xrt_buffer *x = NULL, *y = NULL;
  const float in[3] = {1, 2, 3};
  float out[3] = {0};
  const xrt_shape shape = {.dtype = XRT_F32, .rank = 1, .dims = {3}};
  xrt_device *dev = xrt_client_device(client, xrt_client_device_count(client) - 1);
  xrt_status s = dev ? XRT_OK : xrt_last_status();
  if (!s) s = xrt_compile(client, program, strlen(program), NULL, &exe);
  if (!s) s = xrt_buffer_from_host(client, dev, &shape, in, &x);
  if (!s) s = xrt_execute(exe, dev, &x, 1, &y, 1, NULL);
  if (!s) s = xrt_buffer_to_host(y, out, sizeof out);
  if (!s) {
    printf("  x+x on device %d: %g %g %g\n", xrt_device_id(dev), out[0],
           out[1], out[2]);
    for (int i = 0; i < 3; i++)
      if (out[i] != in[i] + in[i]) s = XRT_INTERNAL;
  }
  xrt_buffer_release(y);
  xrt_buffer_release(x);
  xrt_executable_release(exe);
  return s;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "build/libxrt_sim.so";
  xrt_context_options co;
  xrt_context_options_init(&co);
  co.builtin_plugins = false; /* only what we load: no linked-in "sim" */
  co.env_plugins = false;     /* and ignore XRT_PLUGINS */
  xrt_context *ctx = NULL;
  xrt_plugin *plugin = NULL;
  xrt_client *client = NULL;

  xrt_status s = xrt_context_create(&co, &ctx);
  /* name NULL: register the plugin under the name its table gives. */
  if (!s) s = xrt_context_load_plugin(ctx, NULL, path, &plugin);
  if (!s) s = print_plugin(plugin);
  if (!s) {
    xrt_plugin_info info;
    xrt_client_options o;
    xrt_client_options_init(&o);
    s = xrt_plugin_get_info(plugin, &info);
    o.context = ctx;        /* find the plugin in our context ... */
    o.plugin = info.name;   /* ... under its registration name */
    if (!s) s = xrt_client_create(&o, &client);
  }
  if (!s) s = print_devices(client);
  if (!s) s = run_double(client);
  if (s) fprintf(stderr, "load_plugin: %s (%s)\n", xrt_last_error(), xrt_strerror(s));

  /* A context outlives its clients: release them first. */
  xrt_client_release(client);
  xrt_status r = xrt_context_release(ctx);
  if (!s && r) {
    fprintf(stderr, "load_plugin: %s\n", xrt_last_error());
    s = r;
  }
  return s ? 1 : 0;
}
