/* fake_caps.c - exclusive devices, StableHLO 1.0.0..1.5.0 only, and an
 * op_support that refuses multiply and cannot judge divide. */
#define FAKE_NAME "fake_caps"
#define FAKE_DESCRIBE
#define FAKE_CAPS (XRT_CAP_EXCLUSIVE | XRT_CAP_ASYNC)
#define FAKE_SHLO_MIN "1.0.0"
#define FAKE_SHLO_MAX "1.5.0"
#define FAKE_OP_SUPPORT
#include "fake_plugin.h"

static const xrt_plugin_api fake_api = {
    .struct_size = sizeof(xrt_plugin_api), .abi_major = FAKE_ABI_MAJOR,
    .abi_minor = FAKE_ABI_MINOR, FAKE_TABLE_ENTRIES,
    .platform_describe = fake_platform_describe,
    .op_support = fake_op_support};

const xrt_plugin_api *xrt_plugin_get_api(void) { return &fake_api; }
