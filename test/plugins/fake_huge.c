/* fake_huge.c - a table claiming a garbage struct_size (1 MiB). */
#define FAKE_NAME "fake_huge"
#include "fake_plugin.h"

static const xrt_plugin_api fake_api = {
    .struct_size = (size_t)1 << 20, .abi_major = FAKE_ABI_MAJOR,
    .abi_minor = FAKE_ABI_MINOR, FAKE_TABLE_ENTRIES};

const xrt_plugin_api *xrt_plugin_get_api(void) { return &fake_api; }
