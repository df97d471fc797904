/* fake_b.c - a second complete plugin, describing itself. */
#define FAKE_NAME "fake_b"
#define FAKE_DESCRIBE
#define FAKE_CAPS XRT_CAP_ASYNC
#include "fake_plugin.h"

static const xrt_plugin_api fake_api = {
    .struct_size = sizeof(xrt_plugin_api), .abi_major = FAKE_ABI_MAJOR,
    .abi_minor = FAKE_ABI_MINOR, FAKE_TABLE_ENTRIES,
    .platform_describe = fake_platform_describe};

const xrt_plugin_api *xrt_plugin_get_api(void) { return &fake_api; }
