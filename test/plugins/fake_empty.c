/* fake_empty.c - a valid header and not one function. */
#include "xrt.h"

static const xrt_plugin_api fake_api = {
    .struct_size = sizeof(xrt_plugin_api), .abi_major = XRT_PLUGIN_ABI_MAJOR,
    .abi_minor = XRT_PLUGIN_ABI_MINOR, .name = "fake_empty"};

const xrt_plugin_api *xrt_plugin_get_api(void) { return &fake_api; }
