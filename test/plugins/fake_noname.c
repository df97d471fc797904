/* fake_noname.c - a table whose name is NULL. */
#define FAKE_NAME "fake_noname"
#include "fake_plugin.h"

static const xrt_plugin_api fake_api = {
    .struct_size = sizeof(xrt_plugin_api), .abi_major = FAKE_ABI_MAJOR,
    .abi_minor = FAKE_ABI_MINOR, .name = NULL, .version = "1.0.0",
    .client_create = fake_client_create,
    .client_destroy = fake_client_destroy,
    .device_count = fake_device_count,
    .device_describe = fake_device_describe,
    .buffer_alloc = fake_buffer_alloc, .buffer_free = fake_buffer_free,
    .buffer_write = fake_buffer_write, .buffer_read = fake_buffer_read,
    .buffer_copy = fake_buffer_copy, .compile = fake_compile,
    .executable_destroy = fake_executable_destroy, .execute = fake_execute};

const xrt_plugin_api *xrt_plugin_get_api(void) { return &fake_api; }
