/* fake_abi0.c - declares the pre-1.0 ABI 0.2 (an older major). */
#define FAKE_NAME "fake_abi0"
#define FAKE_ABI_MAJOR 0
#define FAKE_ABI_MINOR 2
#include "fake_plugin.h"

static const xrt_plugin_api fake_api = {
    .struct_size = sizeof(xrt_plugin_api), .abi_major = FAKE_ABI_MAJOR,
    .abi_minor = FAKE_ABI_MINOR, FAKE_TABLE_ENTRIES};

const xrt_plugin_api *xrt_plugin_get_api(void) { return &fake_api; }
