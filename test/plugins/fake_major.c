/* fake_major.c - built for a newer major version of the ABI. */
#define FAKE_NAME "fake_major"
#define FAKE_ABI_MAJOR (XRT_PLUGIN_ABI_MAJOR + 1)
#define FAKE_ABI_MINOR 3
#include "fake_plugin.h"

static const xrt_plugin_api fake_api = {
    .struct_size = sizeof(xrt_plugin_api), .abi_major = FAKE_ABI_MAJOR,
    .abi_minor = FAKE_ABI_MINOR, FAKE_TABLE_ENTRIES};

const xrt_plugin_api *xrt_plugin_get_api(void) { return &fake_api; }
