/* fake_old.c - a plugin built against an older, shorter table: exactly
 * the ABI 0.2 layout (through inject_fault), declaring ABI 1.0.  The
 * table object itself is that short, so reading past it is a real
 * overflow (ASan sees it).  It also leaves buffer_copy and inject_fault
 * NULL. */
#define FAKE_NAME "fake_old"
#include "fake_plugin.h"

struct old_api {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  const char *name;
  const char *version;
  xrt_status (*client_create)(const xrt_plugin_client_args *args,
                              void **out_client, xrt_plugin_error *err);
  void (*client_destroy)(void *client);
  int (*device_count)(void *client);
  xrt_status (*device_describe)(void *client, int device,
                                xrt_plugin_device_desc *out,
                                xrt_plugin_error *err);
  xrt_status (*buffer_alloc)(void *client, int device, size_t bytes,
                             void **out_mem, xrt_plugin_error *err);
  void (*buffer_free)(void *client, int device, void *mem);
  xrt_status (*buffer_write)(void *client, int device, void *mem,
                             const void *src, size_t bytes,
                             xrt_plugin_error *err);
  xrt_status (*buffer_read)(void *client, int device, const void *mem,
                            void *dst, size_t bytes, xrt_plugin_error *err);
  xrt_status (*buffer_copy)(void *client, int src_device, const void *src,
                            int dst_device, void *dst, size_t bytes,
                            xrt_plugin_error *err);
  xrt_status (*compile)(void *client, const xrt_plugin_compile_args *args,
                        void **out_executable, xrt_plugin_error *err);
  void (*executable_destroy)(void *executable);
  xrt_status (*execute)(void *client, const xrt_plugin_execute_args *args,
                        xrt_plugin_error *err);
  xrt_status (*inject_fault)(void *client, int device, int64_t after_steps,
                             xrt_plugin_error *err);
};

static const struct old_api fake_api = {
    .struct_size = sizeof(struct old_api), .abi_major = 1, .abi_minor = 0,
    .name = FAKE_NAME, .version = "0.2.0", FAKE_TABLE_BASIC};

const xrt_plugin_api *xrt_plugin_get_api(void) {
  (void)fake_buffer_copy;
  return (const xrt_plugin_api *)(const void *)&fake_api;
}
