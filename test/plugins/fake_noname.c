/* fake_noname.c - a table whose name is NULL. */
#define FAKE_NAME "fake_noname"
#include "fake_plugin.h"

static const xrt_plugin_api fake_api = {
    .struct_size = sizeof(xrt_plugin_api), .abi_major = FAKE_ABI_MAJOR,
    .abi_minor = FAKE_ABI_MINOR, .name = NULL, .version = "1.0.0",
    FAKE_TABLE_FUNCS};

const xrt_plugin_api *xrt_plugin_get_api(void) { return &fake_api; }
