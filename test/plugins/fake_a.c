/* fake_a.c - a plain, complete plugin with no platform_describe. */
#define FAKE_NAME "fake_a"
#include "fake_plugin.h"

static const xrt_plugin_api fake_api = {
    .struct_size = sizeof(xrt_plugin_api), .abi_major = FAKE_ABI_MAJOR,
    .abi_minor = FAKE_ABI_MINOR, FAKE_TABLE_ENTRIES};

const xrt_plugin_api *xrt_plugin_get_api(void) { return &fake_api; }
