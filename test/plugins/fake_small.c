/* fake_small.c - a table whose struct_size stops before execute. */
#include <stddef.h>
#define FAKE_NAME "fake_small"
#include "fake_plugin.h"

static const xrt_plugin_api fake_api = {
    .struct_size = offsetof(xrt_plugin_api, compile),
    .abi_major = FAKE_ABI_MAJOR, .abi_minor = FAKE_ABI_MINOR,
    FAKE_TABLE_ENTRIES};

const xrt_plugin_api *xrt_plugin_get_api(void) { return &fake_api; }
